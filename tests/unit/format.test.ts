import { describe, expect, it } from "vitest";
import { formatCents, formatCount, formatDollars, formatSpinBonus, formatZn } from "../../src/lib/format.ts";

describe("number formats (en-US)", () => {
  it("shows counters with thousands separators", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(7850)).toBe("7,850");
    expect(formatCount(1_234_567)).toBe("1,234,567");
  });

  it("shows auction money from cents with two decimals and separators", () => {
    expect(formatCents(123450)).toBe("$1,234.50");
    expect(formatCents(1)).toBe("$0.01");
    expect(formatCents(100_000_000_000)).toBe("$1,000,000,000.00");
  });

  it("shows Wall of Fame amounts as whole dollars", () => {
    expect(formatDollars(25000)).toBe("$25,000");
    expect(formatDollars(83600)).toBe("$83,600");
    expect(formatDollars(371305)).toBe("$371,305");
  });

  it("shows tier prices in $ZN", () => {
    expect(formatZn(25)).toBe("25 $ZN");
    expect(formatZn(1_000_000)).toBe("1,000,000 $ZN");
  });

  it("pluralises the spin badge", () => {
    expect(formatSpinBonus(1)).toBe("+1 Spin");
    expect(formatSpinBonus(3)).toBe("+3 Spins");
    expect(formatSpinBonus(1000)).toBe("+1,000 Spins");
  });
});
