/**
 * Every toast the bid form shows, in one place: docs/product-behaviour.md#5 and docs/product-reference.md#8, and docs/design.md#3a for the
 * cases the spec has no text for. A refusal from the service maps to the same toast as the
 * client-side rule it matches.
 */
import { formatCents } from "../format.ts";
import type { ErrorCode } from "./protocol.ts";
import { REFUSAL_TEXTS, tooLowText } from "./refusalTexts.ts";

export interface BidToast {
  title: string;
  description: string;
  variant: "default" | "destructive" | "personal";
}

const failure = (title: string, description: string): BidToast => ({ title, description, variant: "destructive" });

export const BID_FAILED = failure("Bid Failed", "Failed to place your bid. Please try again.");
export const NAME_REQUIRED = failure("Name Required", "Please enter your name to place a bid");
export const INVALID_NAME = failure("Invalid Name", REFUSAL_TEXTS.invalid_name);
export const NAME_NOT_ALLOWED = failure("Name Not Allowed", REFUSAL_TEXTS.name_not_allowed);
export const INVALID_BID = failure("Invalid Bid", "Please enter a valid bid amount");
export const SLOW_DOWN = failure("Slow Down", REFUSAL_TEXTS.rate_limited);

/**
 * A bid (or a maximum) that someone's secret maximum passed at once (docs/product-behaviour.md#maximum-bids):
 * personal, like being outbid by a bid, news for this visitor alone.
 */
export const OUTBID_BY_MAXIMUM: BidToast = {
  title: "Outbid by an automatic bid",
  description: "Someone's secret maximum answered it at once. Bid again to go above it.",
  variant: "personal",
};

export function maximumSet(maximumCents: number): BidToast {
  return {
    title: "Maximum Set",
    description: `We bid for you up to ${formatCents(maximumCents)}. Nobody else sees it.`,
    variant: "default",
  };
}

export function maximumTooLow(currentCents: number | null): BidToast {
  return failure(
    "Maximum Too Low",
    currentCents === null
      ? REFUSAL_TEXTS.maximum_too_low
      : `Your new maximum must be higher than your current one, ${formatCents(currentCents)}.`,
  );
}

/** A maximum at or below the highest bid: it could not even make the next bid. */
export function maximumBelowHighest(highestCents: number | null): BidToast {
  return failure("Maximum Too Low", `Your maximum must be higher than ${formatCents(highestCents ?? 0)}`);
}

export function bidTooLow(highestCents: number | null): BidToast {
  return failure("Bid Too Low", tooLowText(highestCents ?? 0));
}

export function bidPlaced(amountCents: number): BidToast {
  return {
    title: "Bid Placed!",
    description: `You bid ${formatCents(amountCents)} for absolutely nothing!`,
    variant: "default",
  };
}

/**
 * Why a bid failed: a refusal from the service, or: no_connection (nothing was sent), timeout (no
 * answer in time), connection_lost (sent, but the connection ended first: its answer can never come).
 */
export type BidFailureCode = ErrorCode | "no_connection" | "timeout" | "connection_lost";

/** The toast for a bid the service (or the connection) refused. */
export function bidRefusedToast(
  code: BidFailureCode,
  context: { typedName: string; highestCents: number | null },
): BidToast {
  switch (code) {
    case "invalid_name":
      return context.typedName.trim() === "" ? NAME_REQUIRED : INVALID_NAME;
    case "name_not_allowed":
      return NAME_NOT_ALLOWED;
    case "invalid_amount":
      return INVALID_BID;
    case "too_low":
      return bidTooLow(context.highestCents);
    case "maximum_too_low":
      return maximumTooLow(null);
    case "outbid_by_maximum":
      return OUTBID_BY_MAXIMUM;
    case "name_leads":
      return failure("Name Leads", REFUSAL_TEXTS.name_leads);
    case "rate_limited":
      return SLOW_DOWN;
    case "unavailable":
    case "bad_message":
    case "no_connection":
    case "timeout":
    case "connection_lost":
      return BID_FAILED;
  }
}
