import { describe, expect, it } from "vitest";
import {
  BID_FAILED,
  bidPlaced,
  bidRefusedToast,
  bidTooLow,
  INVALID_BID,
  INVALID_NAME,
  maximumBelowHighest,
  maximumSet,
  maximumTooLow,
  NAME_NOT_ALLOWED,
  NAME_REQUIRED,
  OUTBID_BY_MAXIMUM,
  SLOW_DOWN,
} from "../../src/lib/auction/bidToasts.ts";
import { ERROR_CODES } from "../../src/lib/auction/protocol.ts";
import { tooLowText } from "../../src/lib/auction/refusalTexts.ts";

describe("bid toasts", () => {
  it("uses the product's texts (docs/product-reference.md#8-bid) with en-US money", () => {
    expect(bidPlaced(123_450)).toEqual({
      title: "Bid Placed!",
      description: "You bid $1,234.50 for absolutely nothing!",
      variant: "default",
    });
    expect(bidTooLow(1_000)).toMatchObject({
      title: "Bid Too Low",
      description: "Your bid must be higher than $10.00",
    });
    expect(NAME_REQUIRED).toMatchObject({
      title: "Name Required",
      description: "Please enter your name to place a bid",
    });
    expect(INVALID_BID).toMatchObject({ title: "Invalid Bid", description: "Please enter a valid bid amount" });
    expect(BID_FAILED).toEqual({
      title: "Bid Failed",
      description: "Failed to place your bid. Please try again.",
      variant: "destructive",
    });
  });

  it("maps each refusal to the toast of the rule it matches", () => {
    const context = { typedName: "Ada", highestCents: 5_000 };
    expect(bidRefusedToast("invalid_name", context)).toBe(INVALID_NAME);
    expect(bidRefusedToast("invalid_name", { ...context, typedName: "   " })).toBe(NAME_REQUIRED);
    expect(bidRefusedToast("invalid_amount", context)).toBe(INVALID_BID);
    expect(bidRefusedToast("name_not_allowed", context)).toBe(NAME_NOT_ALLOWED);
    expect(NAME_NOT_ALLOWED).toMatchObject({ title: "Name Not Allowed", description: "Please choose another name." });
    expect(bidRefusedToast("too_low", context).description).toBe(tooLowText(5_000));
    expect(bidRefusedToast("rate_limited", context)).toBe(SLOW_DOWN);
    for (const code of ["unavailable", "bad_message", "no_connection", "timeout", "connection_lost"] as const) {
      expect(bidRefusedToast(code, context)).toBe(BID_FAILED);
    }
  });

  it("has a toast for every error code of the protocol, destructive but for the personal outbid by a maximum", () => {
    for (const code of ERROR_CODES) {
      expect(bidRefusedToast(code, { typedName: "Ada", highestCents: null }).variant, code).toBe(
        code === "outbid_by_maximum" ? "personal" : "destructive",
      );
    }
  });

  it("says what a maximum did, and why one was refused (docs/product-behaviour.md#maximum-bids)", () => {
    const context = { typedName: "Ada", highestCents: 5_000 };
    expect(maximumSet(123_450)).toEqual({
      title: "Maximum Set",
      description: "We bid for you up to $1,234.50. Nobody else sees it.",
      variant: "default",
    });
    expect(bidRefusedToast("outbid_by_maximum", context)).toEqual({
      title: "Outbid by an automatic bid",
      description: "Someone's secret maximum answered it at once. Bid again to go above it.",
      variant: "personal",
    });
    expect(bidRefusedToast("outbid_by_maximum", context)).toBe(OUTBID_BY_MAXIMUM);
    expect(bidRefusedToast("maximum_too_low", context)).toEqual({
      title: "Maximum Too Low",
      description: "Your new maximum must be higher than your current one.",
      variant: "destructive",
    });
    expect(maximumBelowHighest(12_345)).toEqual({
      title: "Maximum Too Low",
      description: "Your maximum must be higher than $123.45",
      variant: "destructive",
    });
    expect(maximumTooLow(5_000).description).toBe("Your new maximum must be higher than your current one, $50.00.");
  });
});
