import { describe, expect, it } from "vitest";
import { TIERS } from "../../src/data/tiers.ts";
import { certificateIcon, generateSerial } from "../../src/lib/certificate.ts";
import { formatLongUsDate, localCalendarDate } from "../../src/lib/dates.ts";
import { seededRandom } from "../harness/seededRandom.ts";

describe("certificate serial", () => {
  it('is "NO-" and 9 uppercase letters or digits', () => {
    const random = seededRandom(7);
    for (let i = 0; i < 1000; i += 1) expect(generateSerial(random)).toMatch(/^NO-[A-Z0-9]{9}$/);
  });

  it("takes each character from one call of the random source", () => {
    const values = [0, 0.999999, 25.5 / 36, 26.5 / 36, 0.5, 0, 0, 0, 35.5 / 36];
    let calls = 0;
    const serial = generateSerial(() => values[calls++] ?? 0);
    expect(calls).toBe(9);
    expect(serial).toBe("NO-A9Z0SAAA9");
  });

  it("differs from draw to draw", () => {
    const random = seededRandom(11);
    const serials = new Set(Array.from({ length: 500 }, () => generateSerial(random)));
    expect(serials.size).toBe(500);
  });

  it("stays in the alphabet for a source that returns 1", () => {
    expect(generateSerial(() => 1)).toBe("NO-999999999");
  });
});

describe("certificate icon by price", () => {
  it.each([
    [1_000_000, "trophy"],
    [10_000, "trophy"],
    [9_999, "crown"],
    [1_000, "crown"],
    [999, "gem"],
    [500, "gem"],
    [499, "star"],
    [100, "star"],
    [99, "empty"],
    [25, "empty"],
    [0, "empty"],
  ])("%d $ZN shows %s", (price, icon) => {
    expect(certificateIcon(price)).toBe(icon);
  });

  it("gives each tier the picture of its price, the cheapest an empty box", () => {
    expect(TIERS.map((tier) => certificateIcon(tier.price))).toEqual([
      "empty",
      "star",
      "gem",
      "crown",
      "trophy",
      "trophy",
    ]);
  });
});

describe("certificate date", () => {
  it("is the visitor's today in long US format", () => {
    // Local noon on November 21: the day the visitor sees, whatever the time zone.
    expect(formatLongUsDate(localCalendarDate(new Date(2026, 10, 21, 12)))).toBe("November 21, 2026");
  });
});
