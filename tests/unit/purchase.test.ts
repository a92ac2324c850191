import { describe, expect, it } from "vitest";
import { TIERS } from "../../src/data/tiers.ts";
import { PLAN_PURCHASED_EVENT, purchaseAlertText, purchasedSpins } from "../../src/lib/purchase.ts";

const ADDRESS = "ZNpaymentADDRESS1234567890";

describe("purchase alert", () => {
  it("gives the payment instructions of docs/design.md#3a, paragraphs separated by blank lines", () => {
    const deluxe = TIERS[1];
    if (!deluxe) throw new Error("tier 2 missing");
    expect(purchaseAlertText(deluxe, ADDRESS)).toBe(
      "Congratulations! You selected Deluxe Nothing for 100 $ZN!\n\n" +
        `Send 100 $ZN tokens to this address:\n${ADDRESS}\n\n` +
        "Once payment is confirmed, you'll receive +7 lottery spins!\n\n" +
        "Because nothing is worth everything.",
    );
  });

  it("formats large prices and spins with thousands separators", () => {
    const text = purchaseAlertText({ name: "Millionaire's Nothing", price: 1_000_000, spins: 1000 }, ADDRESS);
    expect(text).toContain("You selected Millionaire's Nothing for 1,000,000 $ZN!");
    expect(text).toContain("Send 1,000,000 $ZN tokens to this address:");
    expect(text).toContain("+1,000 lottery spins!");
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
