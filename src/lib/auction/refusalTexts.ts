/**
 * What a refused bid says, in the words of the product (docs/design.md#3a): the service sends these as
 * the `message` of its error answers, and the bid form's toasts use the same sentences.
 */
import { formatCents } from "../format.ts";
import { BIDDER_NAME_MAX_CODE_POINTS, MAX_BID_CENTS } from "./bidRules.ts";
import type { ErrorCode } from "./protocol.ts";

export const REFUSAL_TEXTS = {
  invalid_name: `Use 1 to ${BIDDER_NAME_MAX_CODE_POINTS} characters, no control characters.`,
  name_not_allowed: "Please choose another name.",
  invalid_amount: `Bid more than ${formatCents(0)} and at most ${formatCents(MAX_BID_CENTS)}, with at most 2 decimals.`,
  too_low: "Your bid must be higher than the current highest bid.",
  rate_limited: "You're bidding too fast. Nothing will still be here in a moment.",
  unavailable: "The auction is unavailable right now. Try again in a moment.",
  bad_message: "The message could not be read.",
  maximum_too_low: "Your new maximum must be higher than your current one.",
  outbid_by_maximum: "Outbid by an automatic bid.",
  name_leads: "That name leads already. Bid under your own name.",
} as const satisfies Record<ErrorCode, string>;

/**
 * The too_low refusal with the highest it lost to, "Your bid must be higher than $12.34" (docs/product-reference.md#8):
 * the one builder of that sentence, for the service's answer and the bid form's toast alike.
 */
export function tooLowText(highestCents: number): string {
  return `Your bid must be higher than ${formatCents(highestCents)}`;
}
