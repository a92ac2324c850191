import { afterEach, describe, expect, it, vi } from "vitest";
import {
  formatTimeLeft,
  highestToBeat,
  readRound,
  roundPhase,
  serviceNowMs,
  timeLeftMs,
  WALL_CLOCK_LEAP_MS,
  wallClockLeapt,
} from "../../src/lib/auction/countdown.ts";
import type { WireRound } from "../../src/lib/auction/protocol.ts";

const END = Date.parse("2026-11-21T13:00:00.000Z");
const round = (overrides: Partial<WireRound> = {}): WireRound => ({
  number: 1,
  endsAt: new Date(END).toISOString(),
  ended: false,
  seconds: 3_600,
  softCloseSeconds: 30,
  ...overrides,
});

describe("the time left as the countdown reads", () => {
  it("reads M:SS below one hour and H:MM:SS from one hour", () => {
    expect(formatTimeLeft(59 * 60_000 + 59_000)).toBe("Ends in 59:59");
    expect(formatTimeLeft(3_600_000)).toBe("Ends in 1:00:00");
    expect(formatTimeLeft(65_000)).toBe("Ends in 1:05");
    expect(formatTimeLeft(9_000)).toBe("Ends in 0:09");
    expect(formatTimeLeft(25 * 3_600_000 + 61_000)).toBe("Ends in 25:01:01");
  });

  it("rounds part of a second up, so 0:00 shows only once the time is up", () => {
    expect(formatTimeLeft(59 * 60_000 + 59_001)).toBe("Ends in 1:00:00");
    expect(formatTimeLeft(1)).toBe("Ends in 0:01");
    expect(formatTimeLeft(0)).toBe("Ends in 0:00");
  });

  it("never reads below 0:00", () => {
    expect(formatTimeLeft(-1)).toBe("Ends in 0:00");
    expect(formatTimeLeft(-5 * 3_600_000)).toBe("Ends in 0:00");
    expect(formatTimeLeft(Number.NaN)).toBe("Ends in 0:00");
  });
});

describe("a round's phase by the service's clock", () => {
  it("is none before the first snapshot and before the first bid opens round 1", () => {
    expect(roundPhase(null, END)).toBe("none");
    expect(roundPhase(round({ number: 0, endsAt: null }), END)).toBe("none");
  });

  it("is endless when rounds are off", () => {
    expect(roundPhase(round({ endsAt: null, seconds: 0 }), END)).toBe("endless");
  });

  it("is open, then going inside the soft-close window, then closing once the time is up", () => {
    expect(roundPhase(round(), END - 3_600_000)).toBe("open");
    expect(roundPhase(round(), END - 30_000)).toBe("open");
    expect(roundPhase(round(), END - 29_999)).toBe("going");
    expect(roundPhase(round(), END - 1)).toBe("going");
    expect(roundPhase(round(), END)).toBe("closing");
    expect(roundPhase(round(), END + 60_000)).toBe("closing");
  });

  it("is ended once the service says so, whatever the time", () => {
    expect(roundPhase(round({ ended: true }), END - 60_000)).toBe("ended");
    expect(roundPhase(round({ ended: true }), END + 60_000)).toBe("ended");
  });

  it("counts the time left from the service's time, not the page's", () => {
    expect(timeLeftMs(round(), END - 90_000)).toBe(90_000);
    expect(timeLeftMs(round({ endsAt: null, seconds: 0 }), END)).toBeNull();
    expect(timeLeftMs(null, END)).toBeNull();
  });
});

describe("the service's time on the page's monotonic clock (docs/design.md#9)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The service said END - 90 s in a message that arrived when the page's monotonic clock read 5,000 ms. */
  const heard = END - 90_000 - 5_000;

  it("is the last message's now plus the monotonic time elapsed since it arrived", () => {
    expect(serviceNowMs(heard, 5_000)).toBe(END - 90_000);
    expect(serviceNowMs(heard, 5_000.25)).toBe(END - 90_000 + 0.25);
    expect(serviceNowMs(heard, 65_000)).toBe(END - 30_000);
  });

  it("reads the round's phase and time left from it, counting down as the monotonic clock runs", () => {
    expect(readRound(round(), heard, 5_000)).toEqual({ phase: "open", msLeft: 90_000 });
    expect(readRound(round(), heard, 65_000.5)).toEqual({ phase: "going", msLeft: 29_999.5 });
    expect(formatTimeLeft(readRound(round(), heard, 35_000).msLeft)).toBe("Ends in 1:00");
    expect(readRound(round(), heard, 95_000)).toEqual({ phase: "closing", msLeft: 0 });
    expect(readRound(round({ ended: true }), heard, 6_000).phase).toBe("ended");
    expect(readRound(round({ endsAt: null, seconds: 0 }), heard, 6_000)).toEqual({ phase: "endless", msLeft: 0 });
  });

  it("is none before the first message: no clock, no round", () => {
    expect(readRound(null, null, 5_000)).toEqual({ phase: "none", msLeft: 0 });
  });

  it("pays no heed to the page's wall clock, however far it is set after the message", () => {
    vi.useFakeTimers({ now: END - 90_000 });
    const before = readRound(round(), heard, 20_000);
    for (const wallMs of [END + 5 * 3_600_000, END - 5 * 3_600_000, 0, Date.parse("2083-01-01T00:00:00Z")]) {
      vi.setSystemTime(wallMs);
      expect(readRound(round(), heard, 20_000)).toEqual(before);
    }
    expect(before).toEqual({ phase: "open", msLeft: 75_000 });
  });
});

describe("a wall clock that leaps past the monotonic one (docs/design.md#9)", () => {
  const at = (monotonicMs: number, wallMs: number) => ({ monotonicMs, wallMs });
  const tick = at(10_000, END);

  it("is a wake from sleep: the wall clock moved on while the monotonic clock stood still", () => {
    expect(wallClockLeapt(tick, at(10_010, END + 10 * 60_000))).toBe(true);
    expect(wallClockLeapt(tick, at(11_000, END + 8 * 3_600_000))).toBe(true);
  });

  it("is a step forward beyond the allowance, not one within it", () => {
    expect(wallClockLeapt(tick, at(11_000, END + 1_000 + WALL_CLOCK_LEAP_MS))).toBe(false);
    expect(wallClockLeapt(tick, at(11_000, END + 1_001 + WALL_CLOCK_LEAP_MS))).toBe(true);
  });

  it("is not a steady tick, a late tick (a throttled tab) or a wall clock set back", () => {
    expect(wallClockLeapt(tick, at(11_000.4, END + 1_001))).toBe(false);
    expect(wallClockLeapt(tick, at(70_000, END + 60_000))).toBe(false);
    expect(wallClockLeapt(tick, at(11_000, END - 5 * 3_600_000))).toBe(false);
  });
});

describe("the highest a new bid must beat", () => {
  it("is the round's highest while it runs, or none without bids", () => {
    for (const phase of ["none", "endless", "open", "going"] as const) {
      expect(highestToBeat(phase, 1_500)).toBe(1_500);
      expect(highestToBeat(phase, null)).toBeNull();
    }
  });

  it("is none once the round is over: the next bid opens a new round at any amount", () => {
    expect(highestToBeat("ended", 1_500)).toBeNull();
    expect(highestToBeat("closing", 1_500)).toBeNull();
  });
});
