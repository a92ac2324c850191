/** The lottery's weighted draw (docs/product-reference.md#9): pure, with the random source injected. */
import { PRIZES, type Prize, type PrizeRarity } from "../data/prizes.ts";

/** A source of uniform numbers in [0, 1), such as Math.random. */
import type { RandomSource } from "./random.ts";

/** Weight of each prize entry by its rarity: two commons and two legendaries each carry their own. */
export const RARITY_WEIGHTS: Readonly<Record<PrizeRarity, number>> = {
  common: 50,
  rare: 30,
  epic: 15,
  legendary: 5,
};

export function totalWeight(prizes: readonly Prize[] = PRIZES): number {
  return prizes.reduce((sum, prize) => sum + RARITY_WEIGHTS[prize.rarity], 0);
}

/**
 * Picks a prize with probability weight / total. The draw lands at random() * total on the line
 * of weights laid end to end: [0, 50) Basic Nothing, [50, 100) Shiny Nothing, and so on up to 155.
 */
export function drawPrize(random: RandomSource, prizes: readonly Prize[] = PRIZES): Prize {
  const last = prizes.at(-1);
  if (!last) throw new Error("drawPrize needs at least one prize");
  let point = random() * totalWeight(prizes);
  for (const prize of prizes) {
    point -= RARITY_WEIGHTS[prize.rarity];
    if (point < 0) return prize;
  }
  // Only a source that breaks its [0, 1) promise (returns 1) gets here: give it the last prize.
  return last;
}
