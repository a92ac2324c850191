import { expect, it } from "vitest";
import { pickByDraw } from "../../src/lib/random.ts";

it("maps a draw in [0, 1) evenly onto the items, and a faulty 1 or below-0 draw onto the ends", () => {
  const items = ["a", "b", "c", "d"];
  expect([0, 0.2499, 0.25, 0.5, 0.75, 0.9999].map((draw) => pickByDraw(items, draw))).toEqual([
    "a",
    "a",
    "b",
    "c",
    "d",
    "d",
  ]);
  expect(pickByDraw(items, 1)).toBe("d");
  expect(pickByDraw(items, -0.5)).toBe("a");
  expect(() => pickByDraw([], 0.5)).toThrow(RangeError);
});
