/** Randomness is injected everywhere (Math.random in the page, a fixed or seeded source in tests). */
export type RandomSource = () => number;

/** One item of `items` for a draw in [0, 1); a draw of exactly 1 (a faulty source) still picks the last. */
export function pickByDraw<T>(items: readonly T[], draw: number): T {
  if (items.length === 0) throw new RangeError("pickByDraw needs at least one item");
  const index = Math.min(Math.max(Math.floor(draw * items.length), 0), items.length - 1);
  return items[index] as T;
}
