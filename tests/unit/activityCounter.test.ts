import { describe, expect, it } from "vitest";
import {
  ACTIVITY_TARGET,
  activityFigures,
  COUNT_UP_STEP_MS,
  COUNT_UP_STEPS,
  countUpValue,
  tick,
} from "../../src/lib/activityCounter.ts";

describe("Live Nothing Activity counter", () => {
  it("counts up from 0 to 7850 in 100 steps of 20 ms (about 2 s)", () => {
    expect(ACTIVITY_TARGET).toBe(7850);
    expect(COUNT_UP_STEPS * COUNT_UP_STEP_MS).toBe(2000);
    expect(countUpValue(0)).toBe(0);
    expect(countUpValue(1)).toBe(78);
    expect(countUpValue(50)).toBe(3925);
    expect(countUpValue(100)).toBe(7850);
  });

  it("never passes the target or goes below zero", () => {
    expect(countUpValue(150)).toBe(7850);
    expect(countUpValue(-3)).toBe(0);
  });

  it("rises monotonically during the count-up", () => {
    const values = Array.from({ length: COUNT_UP_STEPS + 1 }, (_, step) => countUpValue(step));
    for (let step = 1; step < values.length; step += 1) {
      expect(values[step]).toBeGreaterThan(values[step - 1] ?? Number.NaN);
    }
  });

  it("adds one on a tick with a draw under 30%, and nothing otherwise", () => {
    expect(tick(7850, 0)).toBe(7851);
    expect(tick(7850, 0.2999)).toBe(7851);
    expect(tick(7850, 0.3)).toBe(7850);
    expect(tick(7850, 0.99)).toBe(7850);
  });

  it("derives dollars spent (x 47.3) and premium owners (/ 3.7), rounded down", () => {
    expect(activityFigures(7850)).toEqual({ purchases: 7850, dollarsSpent: 371305, premiumOwners: 2121 });
    expect(activityFigures(7851)).toEqual({ purchases: 7851, dollarsSpent: 371352, premiumOwners: 2121 });
    expect(activityFigures(0)).toEqual({ purchases: 0, dollarsSpent: 0, premiumOwners: 0 });
    expect(activityFigures(37).premiumOwners).toBe(10);
    // 170 x 47.3 is exactly 8041; float multiplication gives 8040.999999999999.
    expect(activityFigures(170).dollarsSpent).toBe(8041);
  });
});
