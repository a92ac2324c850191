/**
 * The instance's round clock (service/auction/roundClock.ts) on fake timers, over a scripted store
 * whose database clock the test sets: it asks the database to settle the round when the end comes
 * by the database's time, however wrong this process's clock is, follows a soft-close bid's new
 * end, stops at a recorded end and retries a failed settlement.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRoundClock } from "../../service/auction/roundClock.ts";
import { createLogger } from "../../service/logger.ts";
import { createMetrics } from "../../service/metrics.ts";
import type {
  BidNotice,
  BidStore,
  RoundClosedNotice,
  RoundSettlement,
  StoredBid,
} from "../../service/storage/types.ts";
import { globalTimers } from "../../src/lib/timers.ts";

const START = Date.parse("2026-11-21T12:00:00.000Z");
/** This process's clock is three hours behind the database's. */
const PROCESS_LAG_MS = 3 * 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A store with one round whose end the test moves; the database's clock is the fake clock + the lag. */
function scriptedRoundStore(endsAt: number) {
  let end = endsAt;
  let closed = false;
  let failures = 0;
  const settlements: number[] = [];
  const bidListeners = new Set<(notice: BidNotice) => void>();
  const closedListeners = new Set<(notice: RoundClosedNotice) => void>();
  const databaseNow = () => Date.now() + PROCESS_LAG_MS;
  const store = {
    async settleRound(): Promise<RoundSettlement> {
      settlements.push(databaseNow());
      if (failures > 0) {
        failures--;
        throw new Error("the database is away");
      }
      const closing = !closed && databaseNow() >= end;
      if (closing) {
        closed = true;
        for (const listener of closedListeners) listener({ round: 1, moderation: 0 });
      }
      return { number: 1, endsAt: iso(end), closed, closedRoundBids: closing ? 3 : null, now: iso(databaseNow()) };
    },
    onBid(listener: (notice: BidNotice) => void) {
      bidListeners.add(listener);
      return () => bidListeners.delete(listener);
    },
    onRoundClosed(listener: (notice: RoundClosedNotice) => void) {
      closedListeners.add(listener);
      return () => closedListeners.delete(listener);
    },
    onReadyChange: () => () => {},
  };
  return {
    store: store as unknown as BidStore,
    settlements,
    /** A bid heard with the round's end after it (a soft-close bid moves it). */
    bidMovesEndTo(newEnd: number) {
      end = newEnd;
      const bid: StoredBid = { id: 1, bidderName: "Sniper", amountCents: 100, createdAt: iso(databaseNow()) };
      for (const listener of bidListeners) listener({ bid, bidders: 1, moderation: 0, round: 1, endsAt: iso(end) });
    },
    /** Moved in the database, its notice not heard here (another instance's bid still on its way). */
    moveEndUnheard(newEnd: number) {
      end = newEnd;
    },
    failNext(count: number) {
      failures = count;
    },
  };
}

/** A round clock on a scripted store whose round ends at `end`, started: its first settlement is done. */
async function startedClock(end: number) {
  const script = scriptedRoundStore(end);
  const metrics = createMetrics();
  const clock = createRoundClock({
    store: script.store,
    logger: createLogger("silent"),
    metrics,
    timers: globalTimers,
  });
  await clock.start();
  return { script, clock, metrics };
}

describe("the instance's round clock", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: START });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("settles the round when its end comes by the database's clock, not this process's", async () => {
    const end = START + PROCESS_LAG_MS + 60_000;
    const { script, clock, metrics } = await startedClock(end);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS]);
    expect(clock.nearEnd()).toBe(false);

    await vi.advanceTimersByTimeAsync(59_000);
    expect(script.settlements).toHaveLength(1);
    // Within a second of the end the instance's known highest no longer refuses bids.
    await vi.advanceTimersByTimeAsync(500);
    expect(clock.nearEnd()).toBe(true);
    await vi.advanceTimersByTimeAsync(500);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS, end]);
    expect((await metrics.roundsClosed.get()).values[0]?.value).toBe(1);
    expect(clock.nearEnd()).toBe(true);

    // Recorded: no timer is left running.
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(script.settlements).toHaveLength(2);
    clock.stop();
  });

  it("follows a soft-close bid's new end instead of settling at the old one", async () => {
    const end = START + PROCESS_LAG_MS + 10_000;
    const { script, clock } = await startedClock(end);
    await vi.advanceTimersByTimeAsync(9_000);
    script.bidMovesEndTo(end + 29_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(script.settlements).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS, end + 29_000]);
    clock.stop();
  });

  it("sets its timer again when the database says the end moved after the timer was set", async () => {
    const end = START + PROCESS_LAG_MS + 5_000;
    const { script, clock } = await startedClock(end);
    script.moveEndUnheard(end + 20_000);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS, end]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS, end, end + 20_000]);
    clock.stop();
  });

  it("retries a settlement the database could not answer, every second until it can", async () => {
    const end = START + PROCESS_LAG_MS + 2_000;
    const { script, clock, metrics } = await startedClock(end);
    script.failNext(2);
    await vi.advanceTimersByTimeAsync(2_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(script.settlements).toEqual([START + PROCESS_LAG_MS, end, end + 1_000, end + 2_000]);
    expect((await metrics.roundsClosed.get()).values[0]?.value).toBe(1);
    expect((await metrics.bidsPerRound.get()).values.find((value) => value.metricName?.endsWith("_sum"))?.value).toBe(
      3,
    );
    clock.stop();
  });

  it("stops asking once stopped", async () => {
    const { script, clock } = await startedClock(START + PROCESS_LAG_MS + 1_000);
    clock.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(script.settlements).toHaveLength(1);
  });
});
