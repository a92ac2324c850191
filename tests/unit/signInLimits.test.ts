/** The sign-in failure log and check slots (docs/design.md#11), on a clock the test moves. */
import { describe, expect, it } from "vitest";
import {
  createCheckSlots,
  createFailureLog,
  DEFAULT_MAX_TRACKED_ADDRESSES,
  FAILURE_WINDOW_MS,
  MAX_FAILURES,
} from "../../realtime/admin/signInLimits.ts";

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

describe("the sign-in failure log", () => {
  it("counts an attempt as a failure from the moment it is reserved: the sixth at once is refused", () => {
    const { now } = clock();
    const log = createFailureLog({ now });
    // Five attempts in flight together, none answered yet.
    const attempts = Array.from({ length: MAX_FAILURES }, () => log.reserve("a"));
    expect(attempts.every((attempt) => attempt.ok)).toBe(true);
    expect(log.reserve("a")).toEqual({ ok: false, waitMs: FAILURE_WINDOW_MS });
    expect(log.waitMs("a")).toBe(FAILURE_WINDOW_MS);
    expect(log.reserve("b").ok).toBe(true);
  });

  it("forgets an attempt whose password was right, once, and keeps the others", () => {
    const { now } = clock();
    const log = createFailureLog({ now });
    const attempts = Array.from({ length: MAX_FAILURES }, () => log.reserve("a"));
    const right = attempts[2];
    if (!right?.ok) throw new Error("reserved");
    right.forget();
    right.forget();
    expect(log.waitMs("a")).toBe(0);
    expect(log.reserve("a").ok).toBe(true);
    expect(log.reserve("a").ok).toBe(false);

    const alone = log.reserve("b");
    if (!alone.ok) throw new Error("reserved");
    alone.forget();
    expect(log.size).toBe(1);
  });

  it("lets an address try again once its fifth-newest failure leaves the 15-minute window", () => {
    const time = clock();
    const log = createFailureLog({ now: time.now });
    for (let i = 0; i < MAX_FAILURES; i++) {
      log.reserve("a");
      time.advance(60_000);
    }
    // The first failure was 5 minutes ago: 10 minutes to wait.
    expect(log.waitMs("a")).toBe(FAILURE_WINDOW_MS - 5 * 60_000);
    time.advance(FAILURE_WINDOW_MS - 5 * 60_000 - 1);
    expect(log.reserve("a").ok).toBe(false);
    time.advance(1);
    expect(log.reserve("a").ok).toBe(true);
    expect(log.reserve("a").ok).toBe(false);
  });

  it("drops an address a window after its last failure", () => {
    const time = clock();
    const log = createFailureLog({ now: time.now });
    log.reserve("a");
    time.advance(FAILURE_WINDOW_MS - 1);
    log.reserve("b");
    expect(log.size).toBe(2);
    time.advance(1);
    expect(log.size).toBe(1);
    time.advance(FAILURE_WINDOW_MS);
    expect(log.size).toBe(0);
  });

  it("holds nothing for 400,000 addresses that only ask, and at most its bound for 400,000 that fail", () => {
    const { now } = clock();
    const log = createFailureLog({ now });
    let waits = 0;
    for (let n = 0; n < 400_000; n++) waits += log.waitMs(address(n));
    expect(waits).toBe(0);
    expect(log.size).toBe(0);
    for (let n = 0; n < 400_000; n++) log.reserve(address(n));
    expect(log.size).toBe(DEFAULT_MAX_TRACKED_ADDRESSES);
  });

  it("evicts the least recently used address first, past a bound set lower", () => {
    const { now } = clock();
    const log = createFailureLog({ now, maxTrackedAddresses: 3 });
    for (let i = 0; i < MAX_FAILURES; i++) log.reserve("limited");
    log.reserve("b");
    log.reserve("c");
    // The limited address asks again (refused): that keeps it recent, so "b" goes first.
    expect(log.reserve("limited").ok).toBe(false);
    log.reserve("d");
    expect(log.waitMs("b")).toBe(0);
    expect(log.waitMs("limited")).toBeGreaterThan(0);
    for (let n = 0; n < 1_000; n++) log.reserve(address(n));
    expect(log.size).toBe(3);
  });

  it("is counted by a scrape without changing which address goes first", () => {
    const { now } = clock();
    const log = createFailureLog({ now, maxTrackedAddresses: 3 });
    for (let i = 0; i < MAX_FAILURES; i++) log.reserve("oldest");
    log.reserve("b");
    log.reserve("c");
    expect(log.size).toBe(3);
    log.reserve("d");
    expect(log.waitMs("oldest")).toBe(0);
    expect(log.size).toBe(3);
  });
});

describe("the password check slots", () => {
  it("give at most the maximum at once, and each slot back once", () => {
    const slots = createCheckSlots(2);
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
});
