/**
 * Buying a tier (docs/product-behaviour.md#4 and docs/product-reference.md#8, docs/design.md#3a): the planPurchased window event, the one
 * path by which a purchase credits spins, and the text of the purchase alert.
 */
import { formatCount, formatZn } from "./format.ts";

export const PLAN_PURCHASED_EVENT = "planPurchased";

/**
 * The page's pending payment requests in localStorage (docs/design.md#8): a page that finds the key
 * resumes them. Here rather than in payments.ts so the cards' first script needs no more than this.
 */
export const PENDING_PAYMENTS_KEY = "nothingStorePendingPayments";

export interface PlanPurchasedDetail {
  planId: number;
  spins: number;
}

/** The spins a planPurchased event credits: a positive whole number, or nothing for a malformed event. */
export function purchasedSpins(detail: unknown): number | undefined {
  if (typeof detail !== "object" || detail === null) return undefined;
  const { spins } = detail as Partial<PlanPurchasedDetail>;
  return typeof spins === "number" && Number.isSafeInteger(spins) && spins > 0 ? spins : undefined;
}

export interface PurchasedTier {
  name: string;
  price: number;
  spins: number;
}

/**
 * The alert of a purchase with payments off: no request can be paid, so it asks for no payment (an
 * address to send to would take tokens no one credits). Paragraphs separated by blank lines.
 */
export function purchaseAlertText(tier: PurchasedTier): string {
  return [
    `You chose ${tier.name} for ${formatZn(tier.price)}!`,
    "The store takes no payments right now: send nothing anywhere, as nothing sent would be credited.",
    `Your +${formatCount(tier.spins)} lottery spins are added anyway!`,
    "Because nothing is worth everything.",
  ].join("\n\n");
}
