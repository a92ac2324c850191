/**
 * A socket's frame budget (service/auction/frameBudget.ts, docs/design.md#11), on a clock the test
 * holds: the burst it allows, the rate it refills at, and the pages it must never cut off.
 */
import { describe, expect, it } from "vitest";
import { createFrameBudget } from "../../service/auction/frameBudget.ts";
import { HEARTBEAT_INTERVAL_MS } from "../../src/lib/auction/realtimeClient.ts";

const BID_RATE_LIMIT = 10;
const BID_RATE_WINDOW_MS = 10_000;
/** The service's budget: twice the bid rate limit per bid rate window (socketServer.ts). */
const CAPACITY = 2 * BID_RATE_LIMIT;

function budgetAt(clock: { now: number }) {
  return createFrameBudget(CAPACITY, BID_RATE_WINDOW_MS, () => clock.now);
}

/** How many of `count` frames sent at once the budget lets through. */
function taken(budget: ReturnType<typeof createFrameBudget>, count: number): number {
  let passed = 0;
  for (let i = 0; i < count; i++) if (budget.take()) passed++;
  return passed;
}

describe("a socket's frame budget", () => {
  it("lets a burst of its capacity through, then nothing while the clock stands still", () => {
    const clock = { now: 0 };
    const budget = budgetAt(clock);
    expect(taken(budget, 100_000)).toBe(CAPACITY);
    expect(budget.take()).toBe(false);
  });

  it("refills at its capacity per window, never beyond the capacity", () => {
    const clock = { now: 0 };
    const budget = budgetAt(clock);
    taken(budget, CAPACITY);
    clock.now += BID_RATE_WINDOW_MS / 4;
    expect(taken(budget, 100)).toBe(CAPACITY / 4);
    clock.now += 10 * BID_RATE_WINDOW_MS;
    expect(taken(budget, 100)).toBe(CAPACITY);
  });

  it("never cuts off a page that bids at the rate limit, with its heartbeat, for a day", () => {
    const clock = { now: 0 };
    const budget = budgetAt(clock);
    const day = 24 * 60 * 60 * 1000;
    let nextPing = HEARTBEAT_INTERVAL_MS;
    let refused = 0;
    // The limit's worst case for the budget: the window's bids all at once, at its first moment.
    for (let windowStart = 0; windowStart < day; windowStart += BID_RATE_WINDOW_MS) {
      clock.now = windowStart;
      refused += BID_RATE_LIMIT - taken(budget, BID_RATE_LIMIT);
      for (; nextPing < windowStart + BID_RATE_WINDOW_MS; nextPing += HEARTBEAT_INTERVAL_MS) {
        clock.now = nextPing;
        if (!budget.take()) refused++;
      }
    }
    expect(refused).toBe(0);
  });

  it("cuts off a socket that keeps sending faster than twice the rate limit", () => {
    const clock = { now: 0 };
    const budget = budgetAt(clock);
    const interval = BID_RATE_WINDOW_MS / (CAPACITY + 1);
    let sent = 0;
    // A bounded run: the bucket loses 1 - CAPACITY/(CAPACITY + 1) frame per frame sent.
    while (budget.take() && sent < 10 * CAPACITY * (CAPACITY + 1)) {
      sent++;
      clock.now += interval;
    }
    expect(budget.take()).toBe(false);
    expect(sent).toBeLessThan(10 * CAPACITY * (CAPACITY + 1));
  });

  it("does not count a clock that steps back as time gained", () => {
    const clock = { now: 1_000_000 };
    const budget = budgetAt(clock);
    taken(budget, CAPACITY);
    clock.now -= BID_RATE_WINDOW_MS;
    expect(budget.take()).toBe(false);
  });
});
