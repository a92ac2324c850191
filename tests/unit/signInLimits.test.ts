/**
 * The sign-in limits' parts that live in the process (docs/design.md#9, docs/design.md#11): the
 * refusals remembered from the database, and the check slots, on a clock the test moves. The counts
 * themselves are the database's: tests/service/storage/storageAdmin.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import {
  createCheckSlots,
  createRefusalMemo,
  DEFAULT_MAX_REMEMBERED_KEYS,
  FAILURE_WINDOW_MS,
  MAX_DELAY_MS,
} from "../../service/console/signInLimits.ts";

function clock() {
  let at = 1_000_000;
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}

/** The n-th of many distinct addresses (documentation ranges spread over 2^24). */
const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

describe("the refusals remembered from the database", () => {
  it("refuses a limited address again, with what is left of its wait, until the wait runs out", () => {
    const time = clock();
    const memo = createRefusalMemo({ now: time.now });
    expect(memo.refusal("a")).toBeNull();
    memo.remember("a", { reason: "limited", waitMs: 10_000 });
    time.advance(4_000);
    expect(memo.refusal("a")).toEqual({ reason: "limited", waitMs: 6_000 });
    expect(memo.refusal("b")).toBeNull();
    time.advance(5_999);
    expect(memo.refusal("a")).toEqual({ reason: "limited", waitMs: 1 });
    time.advance(1);
    expect(memo.refusal("a")).toBeNull();
  });

  it("refuses every address while the console is throttled, a limited one as limited", () => {
    const time = clock();
    const memo = createRefusalMemo({ now: time.now });
    memo.remember("a", { reason: "limited", waitMs: FAILURE_WINDOW_MS });
    memo.remember("b", { reason: "throttled", waitMs: 30_000 });
    // A shorter throttle heard later does not shorten the one running.
    memo.remember("c", { reason: "throttled", waitMs: 10_000 });
    expect(memo.refusal("a")).toEqual({ reason: "limited", waitMs: FAILURE_WINDOW_MS });
    expect(memo.refusal(address(7))).toEqual({ reason: "throttled", waitMs: 30_000 });
    time.advance(MAX_DELAY_MS);
    expect(memo.refusal(address(7))).toBeNull();
    expect(memo.refusal("a")?.reason).toBe("limited");
  });

  it("forgets an address's refusal when this instance forgets one of its reservations", () => {
    const memo = createRefusalMemo({ now: clock().now });
    memo.remember("a", { reason: "limited", waitMs: FAILURE_WINDOW_MS });
    memo.forgetKey("a");
    memo.forgetKey("never refused");
    expect(memo.refusal("a")).toBeNull();
  });

  it("holds at most its bound of addresses, the least recently used going first", () => {
    const memo = createRefusalMemo({ now: clock().now, maxKeys: 3 });
    for (const key of ["a", "b", "c"]) memo.remember(key, { reason: "limited", waitMs: FAILURE_WINDOW_MS });
    // "a" asks again (refused): that keeps it recent, so "b" goes first.
    expect(memo.refusal("a")).not.toBeNull();
    memo.remember("d", { reason: "limited", waitMs: FAILURE_WINDOW_MS });
    expect(["a", "b", "c", "d"].map((key) => memo.refusal(key) !== null)).toEqual([true, false, true, true]);
  });

  it("keeps its default bound of 10,000 addresses against 400,000", () => {
    const memo = createRefusalMemo({ now: clock().now });
    for (let n = 0; n < 400_000; n++) memo.remember(address(n), { reason: "limited", waitMs: FAILURE_WINDOW_MS });
    let remembered = 0;
    for (let n = 0; n < 400_000; n++) if (memo.refusal(address(n))) remembered += 1;
    expect(remembered).toBe(DEFAULT_MAX_REMEMBERED_KEYS);
    expect(memo.refusal(address(400_000 - 1))).not.toBeNull();
  });
});

describe("the password check slots", () => {
  it("give at most the maximum at once, and each slot back once", () => {
    const slots = createCheckSlots({ max: 2 });
    const first = slots.tryTake();
    const second = slots.tryTake();
    expect(slots.tryTake()).toBeNull();
    expect(slots.inUse).toBe(2);
    first?.();
    first?.();
    expect(slots.inUse).toBe(1);
    expect(slots.tryTake()).not.toBeNull();
    expect(slots.tryTake()).toBeNull();
    second?.();
    expect(slots.inUse).toBe(1);
  });

  it("keep one slot for a trusted device beyond the others: strangers cannot take it", () => {
    const slots = createCheckSlots({ max: 1 });
    const stranger = slots.tryTake();
    expect(slots.tryTake()).toBeNull();
    const device = slots.tryTake(true);
    expect(device).not.toBeNull();
    expect(slots.inUse).toBe(2);
    // A second device at once may only take a slot strangers left.
    expect(slots.tryTake(true)).toBeNull();
    stranger?.();
    const secondDevice = slots.tryTake(true);
    expect(secondDevice).not.toBeNull();
    expect(slots.tryTake()).toBeNull();
    device?.();
    device?.();
    expect(slots.tryTake()).toBeNull();
    secondDevice?.();
    expect(slots.tryTake()).not.toBeNull();
    expect(slots.inUse).toBe(1);
  });

  it("give a newcomer's network the next free slot before a network already checking gets another", async () => {
    const slots = createCheckSlots({ max: 1, maxWaitMs: 60_000 });
    const subscriber = "2001:db8:4800::/48";
    const first = await slots.take(subscriber);
    expect(first).not.toBeNull();
    // The subscriber's next /64 is refused at once; a stranger's network waits.
    expect(await slots.take(subscriber)).toBeNull();
    const stranger = slots.take("127.0.0.0/24");
    // A second attempt of the waiting network, and the subscriber again, are refused.
    expect(await slots.take("127.0.0.0/24")).toBeNull();
    // Freed, the slot goes to the stranger; the subscriber, checking nothing now, waits its turn.
    first?.();
    const strangers = await stranger;
    expect(strangers).not.toBeNull();
    expect(slots.inUse).toBe(1);
    const again = slots.take(subscriber);
    strangers?.();
    expect(await again).not.toBeNull();
    expect(slots.inUse).toBe(1);
  });

  it("let at most 4 networks wait, each until its wait runs out or its client leaves", async () => {
    vi.useFakeTimers();
    try {
      const slots = createCheckSlots({ max: 1, maxWaiting: 4, maxWaitMs: 1_000 });
      const held = await slots.take("192.0.2.0/24");
      const left = new AbortController();
      const waiting = [
        slots.take("198.51.100.0/24", left.signal),
        ...[1, 2, 3].map((n) => slots.take(`10.${n}.0.0/24`)),
      ];
      expect(await slots.take("203.0.113.0/24")).toBeNull();
      left.abort();
      expect(await waiting[0]).toBeNull();
      // The place it left is free again.
      const fifth = slots.take("203.0.113.0/24");
      vi.advanceTimersByTime(1_000);
      expect(await Promise.all([...waiting.slice(1), fifth])).toEqual([null, null, null, null]);
      // None of them took the slot on its way out: the first holder frees it, then it is free.
      held?.();
      expect(slots.inUse).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("hand a slot a device frees to a waiting network", async () => {
    const slots = createCheckSlots({ max: 1, forDevices: 0, maxWaitMs: 60_000 });
    const device = slots.tryTake(true);
    const stranger = slots.take("127.0.0.0/24");
    device?.();
    expect(await stranger).not.toBeNull();
    expect(slots.inUse).toBe(1);
  });
});
