/**
 * The console's pulse (service/console/pulse.ts) on fake timers: one read serves every console for
 * REFRESH_MS, open streams hear of a new series within REFRESH_MS of a bid or a turned minute and
 * of nothing else, the last stream closed stops the timer; and the section's text equivalent. The
 * SQL's buckets on both backends: tests/service/storage/storagePulse.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPulse, merged, pulseSection, REFRESH_MS } from "../../service/console/pulse.ts";
import { PULSE_HOURS, PULSE_MINUTES, type PulseSeries } from "../../service/storage/pulse.ts";

const MINUTE_MS = 60_000;
/** Five seconds into a minute: REFRESH_MS later is the same minute. */
const START = Date.parse("2026-03-01T12:34:05.000Z");
const FIRST_MINUTE = START - 5_000 - (PULSE_MINUTES - 1) * MINUTE_MS;
const FIRST_HOUR = Date.parse("2026-02-28T13:00:00.000Z");

/** A series whose last minute holds `lastMinute` bids, and `sales` per hour (null: payments off). */
function series(lastMinute: number, sales: number[] | null = null): PulseSeries {
  const bidsPerMinute = new Array<number>(PULSE_MINUTES).fill(0);
  bidsPerMinute[PULSE_MINUTES - 1] = lastMinute;
  return { firstMinuteMs: FIRST_MINUTE, bidsPerMinute, firstHourMs: FIRST_HOUR, salesPerHour: sales };
}

/** A pulse over a read that answers `answer.value`, counting reads, and one source of bids. */
function pulseOverCountedReads() {
  const answer = { value: series(0), fails: false };
  const reads = { count: 0, from: [] as (string | null)[] };
  const bidListeners = new Set<() => void>();
  const moderationListeners = new Set<() => void>();
  const pulse = createPulse({
    // Whole windows whatever is asked: the merge takes every minute from them.
    read: async (fromMinute) => {
      reads.count += 1;
      reads.from.push(fromMinute?.toISOString() ?? null);
      if (answer.fails) throw new Error("the database is out of reach");
      return { ...answer.value, fromMinuteMs: answer.value.firstMinuteMs };
    },
    now: () => Date.now(),
    changes: [
      (listener) => {
        bidListeners.add(listener);
        return () => void bidListeners.delete(listener);
      },
    ],
    invalidations: [
      (listener) => {
        moderationListeners.add(listener);
        return () => void moderationListeners.delete(listener);
      },
    ],
  });
  const bid = () => {
    for (const listener of bidListeners) listener();
  };
  const moderate = () => {
    for (const listener of moderationListeners) listener();
  };
  return { pulse, answer, reads, bid, moderate };
}

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the pulse's reads", () => {
  it("serves every console from one read for REFRESH_MS, then reads again", async () => {
    const { pulse, reads } = pulseOverCountedReads();
    await Promise.all(Array.from({ length: 20 }, () => pulse.current()));
    expect(reads.count).toBe(1);
    await vi.advanceTimersByTimeAsync(REFRESH_MS - 1);
    await pulse.current();
    expect(reads.count).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all([pulse.current(), pulse.current()]);
    expect(reads.count).toBe(2);
  });

  it("reads again after a moderation, even within REFRESH_MS or while a read is under way", async () => {
    const { pulse, answer, reads, moderate } = pulseOverCountedReads();
    await pulse.current();
    answer.value = series(5);
    moderate();
    expect((await pulse.current()).bidsPerMinute.at(-1)).toBe(5);
    expect(reads.count).toBe(2);

    // A read that began before the moderation answers its own callers only.
    const begun = pulse.current();
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    answer.value = series(6);
    const beganBefore = pulse.current();
    moderate();
    answer.value = series(7);
    const after = pulse.current();
    expect((await begun).bidsPerMinute.at(-1)).toBe(5);
    expect((await beganBefore).bidsPerMinute.at(-1)).toBe(6);
    expect((await after).bidsPerMinute.at(-1)).toBe(7);
    expect((await pulse.current()).bidsPerMinute.at(-1)).toBe(7);
    expect(reads.count).toBe(4);
    // The first read and those after a moderation are whole; the one in between from the last minute but one.
    expect(reads.from).toEqual([null, null, "2026-03-01T12:33:00.000Z", null]);
  });

  it("after a whole read, asks for the newest minutes only and keeps the older ones", () => {
    const kept = series(2);
    kept.bidsPerMinute[0] = 9;
    kept.bidsPerMinute[100] = 4;
    // Two minutes later: the window has moved by two, and the read covers its last three minutes.
    const firstMinuteMs = FIRST_MINUTE + 2 * MINUTE_MS;
    const read = {
      firstMinuteMs,
      fromMinuteMs: firstMinuteMs + (PULSE_MINUTES - 3) * MINUTE_MS,
      bidsPerMinute: [3, 0, 1],
      firstHourMs: FIRST_HOUR,
      salesPerHour: null,
    };
    const expected = new Array<number>(PULSE_MINUTES).fill(0);
    expected[98] = 4;
    expected.splice(PULSE_MINUTES - 3, 3, 3, 0, 1);
    expect(merged(kept, read)).toEqual({
      firstMinuteMs,
      bidsPerMinute: expected,
      firstHourMs: FIRST_HOUR,
      salesPerHour: null,
    });
  });

  it("tells open streams of a new series within REFRESH_MS of a bid, and of nothing when nothing changed", async () => {
    const { pulse, answer, reads, bid } = pulseOverCountedReads();
    await pulse.current();
    const heard = [0, 0, 0];
    const closes = heard.map((_, index) => pulse.onChange(() => (heard[index] = (heard[index] ?? 0) + 1)));

    // No bid, the same minute: no read at all.
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect({ reads: reads.count, heard }).toEqual({ reads: 1, heard: [0, 0, 0] });

    answer.value = series(3);
    bid();
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect({ reads: reads.count, heard }).toEqual({ reads: 2, heard: [1, 1, 1] });
    expect((await pulse.current()).bidsPerMinute.at(-1)).toBe(3);

    // A bid that changed nothing the pulse counts (a refused one): read, and nothing told.
    bid();
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect({ reads: reads.count, heard }).toEqual({ reads: 3, heard: [1, 1, 1] });

    // The minute turns with no bid: read again, as the window has moved.
    answer.value = series(0);
    await vi.advanceTimersByTimeAsync(4 * REFRESH_MS);
    expect(reads.count).toBe(4);
    expect(heard).toEqual([2, 2, 2]);

    // With every stream closed, nothing is watched: a bid costs no read.
    for (const close of closes) close();
    bid();
    await vi.advanceTimersByTimeAsync(3 * REFRESH_MS);
    expect(reads.count).toBe(4);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a failed read is tried again at the next look, and the streams keep what they have", async () => {
    const { pulse, answer, reads, bid } = pulseOverCountedReads();
    await pulse.current();
    let heard = 0;
    pulse.onChange(() => heard++);
    answer.value = series(1);
    answer.fails = true;
    bid();
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect({ reads: reads.count, heard }).toEqual({ reads: 2, heard: 0 });
    answer.fails = false;
    await vi.advanceTimersByTimeAsync(REFRESH_MS);
    expect({ reads: reads.count, heard }).toEqual({ reads: 3, heard: 1 });
  });
});

describe("the pulse section", () => {
  it("says payments are off instead of drawing an empty chart of sales", () => {
    const text = pulseSection(series(0)).text;
    expect(text).toContain("Sales per hour: payments are off.");
    expect(text).not.toContain('id="pulse-sales-hour"');
    expect(text).toContain('<strong id="pulse-bids-hour">no bids</strong> in the last 24 hours');
  });

  it("sums the last hour, names the busiest minute and hour, and tables each clock hour", () => {
    const sales = new Array<number>(PULSE_HOURS).fill(0);
    sales[2] = 4;
    sales[PULSE_HOURS - 1] = 1;
    const pulse = series(2, sales);
    // 7 bids in the minute of 13:05 a day before; 1 in the last hour's first minute, 5 just before it.
    pulse.bidsPerMinute[30] = 7;
    pulse.bidsPerMinute[PULSE_MINUTES - 60] = 1;
    pulse.bidsPerMinute[PULSE_MINUTES - 61] = 5;
    const text = pulseSection(pulse).text.replace(/<time datetime="[^"]+">([^<]+)<\/time>/g, "$1");

    expect(text).toContain('<strong id="pulse-bids-hour">3 in the last hour</strong>, 15 in 24 hours');
    expect(text).toContain("the busiest minute 13:05 UTC with 7; the latest bid in the minute of 12:34 UTC.");
    expect(text).toContain('<strong id="pulse-sales-hour">1 this hour</strong>, 5 in 24 hours');
    expect(text).toContain("the busiest hour from 15:00 UTC with 4.");
    // The first clock hour (13:00) holds the 13:05 minute; 11:00 the 11:34 and 11:35 minutes.
    const rows = [...text.matchAll(/<tr><th scope="row">([^<]+)<\/th><td>(\d+)<\/td><td>(\d+)<\/td><\/tr>/g)];
    expect(rows).toHaveLength(PULSE_HOURS);
    expect(rows[0]?.slice(1)).toEqual(["13:00 UTC", "7", "0"]);
    expect(rows[2]?.slice(1)).toEqual(["15:00 UTC", "0", "4"]);
    expect(rows[22]?.slice(1)).toEqual(["11:00 UTC", "6", "0"]);
    expect(rows.at(-1)?.slice(1)).toEqual(["12:00 UTC", "2", "1"]);
    // Every bucket with bids is a bar; the sales' two hours are two.
    expect(text.match(/<path d="([^"]*)" fill/g)?.map((path) => path.split("z").length - 1)).toEqual([4, 2]);
  });
});
