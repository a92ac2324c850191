/**
 * Tier ids are stored with every payment request (`payment_requests.tier_id`) and sent by the
 * pages (`POST /payments` `tierId`): a stored request must keep naming the tier it was made for.
 * The shipped tiers' ids are pinned here, so renumbering or reusing one fails; a new tier adds
 * its own line with a new id.
 */
import { describe, expect, it } from "vitest";
import { TIERS } from "../../src/data/tiers.ts";

/** Every tier ever shipped, by id. A retired tier stays listed here so that its id is never reused. */
const SHIPPED: Record<number, string> = {
  1: "A Tiny Bit of Nothing",
  2: "Deluxe Nothing",
  3: "Premium Nothing",
  4: "Ultimate Nothing",
  5: "God-Tier Nothing",
  6: "Millionaire's Nothing",
};

describe("tier ids", () => {
  it("each still name the tier shipped with it (a new tier adds its line above, with a new id)", () => {
    expect(Object.fromEntries(TIERS.map((tier) => [tier.id, tier.name]))).toEqual(
      Object.fromEntries(TIERS.map((tier) => [tier.id, SHIPPED[tier.id]])),
    );
  });

  it("give no tier a second id: one line per tier above", () => {
    const names = Object.values(SHIPPED);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });

  it("are positive integers, each used once", () => {
    const ids = TIERS.map((tier) => tier.id);
    expect(ids.filter((id) => !Number.isInteger(id) || id < 1)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
