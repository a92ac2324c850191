import { describe, expect, it } from "vitest";
import { TIERS } from "../../src/data/tiers.ts";
import { PLAN_PURCHASED_EVENT, purchaseAlertText, purchasedSpins } from "../../src/lib/purchase.ts";

describe("purchase alert", () => {
  it("names the tier and asks for no payment, paragraphs separated by blank lines", () => {
    const deluxe = TIERS[1];
    if (!deluxe) throw new Error("tier 2 missing");
    expect(purchaseAlertText(deluxe)).toBe(
      "You chose Deluxe Nothing for 100 $ZN!\n\n" +
        "The store takes no payments right now: send nothing anywhere, as nothing sent would be credited.\n\n" +
        "Your +7 lottery spins are added anyway!\n\n" +
        "Because nothing is worth everything.",
    );
  });

  it("formats large prices and spins with thousands separators, and names no address", () => {
    const text = purchaseAlertText({ name: "Millionaire's Nothing", price: 1_000_000, spins: 1000 });
    expect(text).toContain("You chose Millionaire's Nothing for 1,000,000 $ZN!");
    expect(text).toContain("+1,000 lottery spins");
    expect(text).not.toMatch(/Congratulations|address/);
  });
});

describe("planPurchased", () => {
  it("is the event name of the spec", () => {
    expect(PLAN_PURCHASED_EVENT).toBe("planPurchased");
  });

  it("credits a positive whole number of spins and ignores anything else", () => {
    expect(purchasedSpins({ planId: 2, spins: 7 })).toBe(7);
    for (const detail of [null, undefined, 7, {}, { spins: 0 }, { spins: -3 }, { spins: 2.5 }, { spins: "7" }]) {
      expect(purchasedSpins(detail), JSON.stringify(detail)).toBeUndefined();
    }
  });
});
