import { describe, expect, it } from "vitest";
import { PRIZES } from "../../src/data/prizes.ts";
import { drawPrize, RARITY_WEIGHTS, totalWeight } from "../../src/lib/prizeDraw.ts";
import { seededRandom } from "../harness/seededRandom.ts";

const TOTAL = 155;
/** The largest double below x: the last point of the range that ends at x. */
const justBelow = (x: number) => x - Number.EPSILON * Math.max(1, x);

describe("the prizes", () => {
  it("are the six of the spec, each with its rarity and a value worth $0", () => {
    expect(PRIZES.map((prize) => [prize.name, prize.rarity])).toEqual([
      ["Basic Nothing", "common"],
      ["Shiny Nothing", "common"],
      ["Rare Void", "rare"],
      ["Epic Emptiness", "epic"],
      ["Mythical Nothing", "legendary"],
      ["Quantum Void", "legendary"],
    ]);
    for (const prize of PRIZES) {
      expect(prize.value).toContain("$0");
      expect(prize.description.length).toBeGreaterThan(10);
      expect(prize.icon).toMatch(/^M/);
    }
    expect(new Set(PRIZES.map((prize) => prize.icon)).size).toBe(PRIZES.length);
  });

  it("weigh 50, 30, 15 and 5 by rarity per entry, 155 in all", () => {
    expect(RARITY_WEIGHTS).toEqual({ common: 50, rare: 30, epic: 15, legendary: 5 });
    expect(totalWeight()).toBe(TOTAL);
  });
});

describe("drawPrize", () => {
  // Each prize owns [start, end) of the 155 weights laid end to end.
  const ranges = [
    ["Basic Nothing", 0, 50],
    ["Shiny Nothing", 50, 100],
    ["Rare Void", 100, 130],
    ["Epic Emptiness", 130, 145],
    ["Mythical Nothing", 145, 150],
    ["Quantum Void", 150, 155],
  ] as const;

  for (const [name, start, end] of ranges) {
    it(`gives ${name} from ${start}/155 up to just below ${end}/155`, () => {
      expect(drawPrize(() => start / TOTAL).name).toBe(name);
      expect(drawPrize(() => justBelow(end / TOTAL)).name).toBe(name);
    });
  }

  it("calls the random source once per draw", () => {
    let calls = 0;
    drawPrize(() => {
      calls += 1;
      return 0.5;
    });
    expect(calls).toBe(1);
  });

  it("gives the last prize to a source that returns 1 (out of contract) rather than failing", () => {
    expect(drawPrize(() => 1).name).toBe("Quantum Void");
  });

  it("follows the weights over many seeded draws", () => {
    const DRAWS = 200_000;
    const random = seededRandom(20261121);
    const counts = new Map<string, number>();
    for (let i = 0; i < DRAWS; i += 1) {
      const { name } = drawPrize(random);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    for (const prize of PRIZES) {
      const p = RARITY_WEIGHTS[prize.rarity] / TOTAL;
      // Binomial standard deviation; 5 sigma is about 1 in 3.5 million per prize for a fair draw,
      // yet catches a weight off by one (for the rarest prize, 5/155 vs 6/155 is ~25 sigma apart).
      const sigma = Math.sqrt(DRAWS * p * (1 - p));
      expect(Math.abs((counts.get(prize.name) ?? 0) - DRAWS * p), prize.name).toBeLessThan(5 * sigma);
    }
  });
});
