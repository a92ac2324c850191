/**
 * The bid rules of docs/design.md#3, with no I/O: the service applies them authoritatively and
 * the island applies the same ones first for quick feedback. Money is integer cents throughout.
 */

export const BIDDER_NAME_MAX_CODE_POINTS = 40;
/** $1,000,000,000.00, the largest bid the auction accepts. */
export const MAX_BID_CENTS = 100_000_000_000;

type BidRuleViolation = "invalid_name" | "invalid_amount" | "too_low";

export type RuleResult<T> = { ok: true; value: T } | { ok: false; code: BidRuleViolation };

// Cc (control) and Cf (format: bidi overrides, zero-width characters) never belong in a name. Nor
// does a lone surrogate (Cs), which a JSON "\ud800" escape can carry: it is no character at all, and
// the database would store it as U+FFFD, a name other than the one accepted.
const FORBIDDEN_IN_NAME = /[\p{Cc}\p{Cf}\p{Cs}]/u;
// Except U+200D (ZERO WIDTH JOINER, Cf) where it joins two emoji, as in 👩‍🚀, 👨‍👩‍👧, 🏳️‍🌈 or 👩🏽‍💻
// (docs/design.md#11): after a pictograph, itself maybe followed by U+FE0F (emoji presentation)
// and a skin tone, in either order, and before the next pictograph. Anywhere else ("a\u200db", alone,
// first or last, doubled) it only hides in a name, as U+200B does. sql/009_emoji_joiner.sql is the
// table's check of the same rule.
const EMOJI_JOINER =
  /(?<=\p{Extended_Pictographic}(?:\uFE0F\p{Emoji_Modifier}?|\p{Emoji_Modifier}\uFE0F?)?)\u200D(?=\p{Extended_Pictographic})/gu;
// A name must show something (docs/design.md#11): a letter, digit, punctuation mark or symbol that
// draws. Default-ignorable code points draw nothing, though U+115F, U+1160, U+3164 and U+FFA0 (the
// Hangul fillers) are letters by category; nor does the blank braille pattern U+2800, a symbol.
const DRAWS_NOTHING = /[\p{Default_Ignorable_Code_Point}\u2800]/gu;
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/**
 * The stored form of a bidder's name: trimmed, 1 to 40 code points, no control or format
 * characters (nor lone surrogates) but the joiner inside an emoji sequence, and something visible.
 */
export function checkBidderName(raw: string): RuleResult<string> {
  const name = raw.trim();
  const codePoints = [...name].length;
  if (
    codePoints < 1 ||
    codePoints > BIDDER_NAME_MAX_CODE_POINTS ||
    FORBIDDEN_IN_NAME.test(name.replace(EMOJI_JOINER, "")) ||
    !VISIBLE.test(name.replace(DRAWS_NOTHING, ""))
  ) {
    return { ok: false, code: "invalid_name" };
  }
  return { ok: true, value: name };
}

// A plain decimal with at most 2 places; String(number) never uses an exponent below 1e21.
const DOLLARS_WITH_CENTS = /^\d+(\.\d{1,2})?$/;

/** An amount in dollars (a JSON number) as integer cents: finite, above 0, at most 2 decimals and the maximum. */
export function checkAmount(dollars: number): RuleResult<number> {
  if (!Number.isFinite(dollars) || !DOLLARS_WITH_CENTS.test(String(dollars))) {
    return { ok: false, code: "invalid_amount" };
  }
  const cents = Math.round(dollars * 100);
  if (cents <= 0 || cents > MAX_BID_CENTS) return { ok: false, code: "invalid_amount" };
  return { ok: true, value: cents };
}

// What a person types for money: digits with an optional point ("12", "12.5", ".50", "12."),
// not the hex, exponent or signed forms that Number() would also take.
const TYPED_AMOUNT = /^(\d+\.?\d*|\.\d+)$/;

/** What a visitor typed into the amount field, as cents; then the same rule as checkAmount. */
export function parseAmountInput(text: string): RuleResult<number> {
  const trimmed = text.trim();
  if (!TYPED_AMOUNT.test(trimmed)) return { ok: false, code: "invalid_amount" };
  return checkAmount(Number(trimmed));
}

/**
 * How much a bid must beat the highest by: 1 cent, so any amount above it wins. The one statement
 * of the rule: the page, the service's quick refusal and the database (which receives it with each
 * placement, sql/functions/40_bids.sql) all judge by it, and the tests compute their amounts from it.
 */
export const BID_INCREMENT_CENTS = 1;
/** The smallest bid that opens a round (no visible bid yet): 1 cent, any valid amount. */
export const FIRST_BID_MIN_CENTS = 1;

/** The smallest bid that can win now: the placeholder of the amount field. */
export function nextWinningCents(highestCents: number | null): number {
  return highestCents === null ? FIRST_BID_MIN_CENTS : highestCents + BID_INCREMENT_CENTS;
}

/** At least nextWinningCents: above the highest accepted bid by the increment (the database enforces this atomically too). */
export function checkAboveHighest(amountCents: number, highestCents: number | null): RuleResult<number> {
  if (amountCents < nextWinningCents(highestCents)) return { ok: false, code: "too_low" };
  return { ok: true, value: amountCents };
}

/**
 * The form's guard against a slip of the finger (docs/product-behaviour.md#5): a bid more than
 * BIG_JUMP_FACTOR times the smallest winning bid, and more than BIG_JUMP_MIN_CENTS above it, asks
 * the bidder to confirm first. Only the page asks; the service takes any valid amount.
 */
export const BIG_JUMP_FACTOR = 10;
const BIG_JUMP_MIN_CENTS = 10_000;

export function isBigJump(amountCents: number, highestCents: number | null): boolean {
  const smallest = nextWinningCents(highestCents);
  return amountCents > smallest * BIG_JUMP_FACTOR && amountCents - smallest > BIG_JUMP_MIN_CENTS;
}
