import { describe, expect, it } from "vitest";
import {
  addressGroups,
  formatCents,
  formatCount,
  formatDollars,
  formatSpinBonus,
  formatZn,
} from "../../src/lib/format.ts";

describe("number formats (en-US)", () => {
  it.each([
    {
      name: "shows counters with thousands separators",
      format: formatCount,
      cases: [
        [0, "0"],
        [7850, "7,850"],
        [1_234_567, "1,234,567"],
      ],
    },
    {
      name: "shows auction money from cents with two decimals and separators",
      format: formatCents,
      cases: [
        [123450, "$1,234.50"],
        [1, "$0.01"],
        [100_000_000_000, "$1,000,000,000.00"],
      ],
    },
    {
      name: "shows Wall of Fame amounts as whole dollars",
      format: formatDollars,
      cases: [
        [25000, "$25,000"],
        [83600, "$83,600"],
        [371305, "$371,305"],
      ],
    },
    {
      name: "shows tier prices in $ZN",
      format: formatZn,
      cases: [
        [25, "25 $ZN"],
        [1_000_000, "1,000,000 $ZN"],
      ],
    },
    {
      name: "pluralises the spin badge",
      format: formatSpinBonus,
      cases: [
        [1, "+1 Spin"],
        [3, "+3 Spins"],
        [1000, "+1,000 Spins"],
      ],
    },
  ] satisfies { name: string; format: (value: number) => string; cases: [number, string][] }[])(
    "$name",
    ({ format, cases }) => {
      for (const [value, text] of cases) expect(format(value), String(value)).toBe(text);
    },
  );
});

describe("addressGroups", () => {
  it("splits an address into even groups of 3 or 4 that join back to it", () => {
    for (let length = 32; length <= 44; length++) {
      const address = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijk".slice(0, length);
      const groups = addressGroups(address);
      expect(groups.join("")).toBe(address);
      for (const group of groups) expect([3, 4]).toContain(group.length);
    }
  });

  it("never leaves one or two characters alone: 33 characters are 6 groups of 4 and 3 of 3", () => {
    const groups = addressGroups("x".repeat(33));
    expect(groups.map((group) => group.length)).toEqual([4, 4, 4, 4, 4, 4, 3, 3, 3]);
  });
});
