import { describe, expect, it } from "vitest";
import { formatTimeLeft, highestToBeat, roundPhase, timeLeftMs } from "../../src/lib/auction/countdown.ts";
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
