/**
 * The "Live Nothing Activity" counter (docs/product-reference.md#9): a count-up from 0 to 7850 in
 * 100 steps of 20 ms, then every 10 s a 30% chance of one more purchase of nothing.
 * Pure: time and randomness come from the caller.
 */

export const ACTIVITY_TARGET = 7850;
export const COUNT_UP_STEPS = 100;
export const COUNT_UP_STEP_MS = 20;
export const TICK_INTERVAL_MS = 10_000;
const TICK_CHANCE = 0.3;

/** Value shown after `step` of the count-up (0..COUNT_UP_STEPS); the last step lands exactly on the target. */
export function countUpValue(step: number): number {
  const clamped = Math.min(Math.max(step, 0), COUNT_UP_STEPS);
  return Math.floor((ACTIVITY_TARGET * clamped) / COUNT_UP_STEPS);
}

/** One 10-second tick: `random` is a draw in [0, 1). */
export function tick(count: number, random: number): number {
  return random < TICK_CHANCE ? count + 1 : count;
}

export interface ActivityFigures {
  purchases: number;
  /** count x 47.3, rounded down; computed in tenths: float 170 * 47.3 is 8040.999… */
  dollarsSpent: number;
  /** count / 3.7, rounded down. */
  premiumOwners: number;
}

export function activityFigures(count: number): ActivityFigures {
  return {
    purchases: count,
    dollarsSpent: Math.floor((count * 473) / 10),
    premiumOwners: Math.floor((count * 10) / 37),
  };
}
