/**
 * An independent model of the auction's answers, written from docs/design.md#3 and docs/protocol.md
 * rather than from src/lib/auction: the tests compare the real service (and the real rules) with it,
 * so it must not share their code. It works on code points and exact decimal text, never on the
 * regular expressions or the float arithmetic of the implementation. It takes only the two figures
 * of the amount rule from src/lib/auction/bidRules.ts, where they are stated once, and the
 * product's words from src/lib/auction/refusalTexts.ts (a change of wording is one edit); it is the
 * one model of that rule every test judges by (modelNextWinningCents, modelTooLow).
 *
 *   const model = new AuctionModel();
 *   const expected = model.expect(frameText);   // what the service must answer
 *   model.record(actualAnswer);                 // follow the service's high and ids
 */
import { createNameFilter } from "../../../service/names/nameFilter.ts";
import { BID_INCREMENT_CENTS, FIRST_BID_MIN_CENTS } from "../../../src/lib/auction/bidRules.ts";
import { tooLowText } from "../../../src/lib/auction/refusalTexts.ts";

const nameFilter = createNameFilter();

export const MODEL_MAX_MESSAGE_BYTES = 4096;
export const MODEL_MAX_NAME_CODE_POINTS = 40;
/** $1,000,000,000.00 in cents. */
export const MODEL_MAX_CENTS = 100_000_000_000;

// What "trimmed" removes: ECMAScript's WhiteSpace and LineTerminator (ECMA-262 12.2 and 12.3), the
// reading docs/protocol.md gives by naming String.prototype.trim's behaviour for the stored name.
const TRIMMED_CODE_POINTS = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
  0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);

const CONTROL = /^\p{General_Category=Control}$/u;
const FORMAT = /^\p{General_Category=Format}$/u;

/** The code points of a string; a lone surrogate counts as one (it is one UTF-16 unit with no partner). */
export function codePointsOf(text: string): number[] {
  const points: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    const following = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && following >= 0xdc00 && following <= 0xdfff) {
      points.push(0x10000 + ((unit - 0xd800) << 10) + (following - 0xdc00));
      index++;
    } else points.push(unit);
  }
  return points;
}

const isSurrogate = (point: number) => point >= 0xd800 && point <= 0xdfff;

const ZERO_WIDTH_JOINER = 0x200d;
const EMOJI_PRESENTATION = 0xfe0f;
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const SKIN_TONE = /^\p{Emoji_Modifier}$/u;
const isPictographic = (point: number | undefined) =>
  point !== undefined && !isSurrogate(point) && PICTOGRAPHIC.test(String.fromCodePoint(point));
const isSkinTone = (point: number | undefined) =>
  point !== undefined && !isSurrogate(point) && SKIN_TONE.test(String.fromCodePoint(point));

/**
 * Whether the joiner at `index` joins two emoji (docs/design.md#11): the next code point is a
 * pictograph, and so is the one before, or the one before an emoji presentation selector (U+FE0F)
 * and a skin tone standing between it and the joiner, each at most once, in either order.
 */
function joinsTwoEmoji(points: readonly number[], index: number): boolean {
  if (!isPictographic(points[index + 1])) return false;
  let before = index - 1;
  let presentation = false;
  let skinTone = false;
  for (let step = 0; step < 2; step++) {
    const point = points[before];
    if (point === EMOJI_PRESENTATION && !presentation) presentation = true;
    else if (isSkinTone(point) && !skinTone) skinTone = true;
    else break;
    before--;
  }
  return isPictographic(points[before]);
}

/**
 * Not allowed at this place in a stored name: Cc and Cf, and lone surrogates, which are not
 * characters at all; a zero width joiner (Cf) only where it joins two emoji. Takes `Array.some`'s
 * arguments: `points.some(isForbiddenInName)`.
 */
export function isForbiddenInName(point: number, index: number, points: readonly number[]): boolean {
  if (isSurrogate(point)) return true;
  if (point === ZERO_WIDTH_JOINER) return !joinsTwoEmoji(points, index);
  const character = String.fromCodePoint(point);
  return CONTROL.test(character) || FORMAT.test(character);
}

// What draws something (docs/design.md#11): letters, numbers, punctuation and symbols, except the
// code points Unicode marks as default-ignorable (the Hangul fillers are letters by category) and
// the blank braille pattern. Marks alone, spaces, unassigned and private-use code points do not.
const SHOWN_CATEGORY =
  /^[\p{General_Category=Letter}\p{General_Category=Number}\p{General_Category=Punctuation}\p{General_Category=Symbol}]$/u;
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;
const BLANK_BRAILLE = 0x2800;

function isVisible(point: number): boolean {
  if (isSurrogate(point) || point === BLANK_BRAILLE) return false;
  const character = String.fromCodePoint(point);
  return SHOWN_CATEGORY.test(character) && !IGNORABLE.test(character);
}

/** The stored name, or null for invalid_name. */
export function modelName(raw: string): string | null {
  const points = codePointsOf(raw);
  let start = 0;
  let end = points.length;
  while (start < end && TRIMMED_CODE_POINTS.has(points[start] as number)) start++;
  while (end > start && TRIMMED_CODE_POINTS.has(points[end - 1] as number)) end--;
  const kept = points.slice(start, end);
  if (kept.length < 1 || kept.length > MODEL_MAX_NAME_CODE_POINTS || kept.some(isForbiddenInName)) return null;
  if (!kept.some(isVisible)) return null;
  return String.fromCodePoint(...kept);
}

/** Exact decimal text of a whole number of cents: 12345 → "123.45", -5 → "-0.05". */
export function centsToDecimalText(cents: bigint): string {
  const sign = cents < 0n ? "-" : "";
  const magnitude = cents < 0n ? -cents : cents;
  return `${sign}${magnitude / 100n}.${String(magnitude % 100n).padStart(2, "0")}`;
}

/** Exact cents of a decimal text with at most 2 places ("12", "12.5", "12.50"); null for anything else. */
export function decimalTextToCents(text: string): bigint | null {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return null;
  const cents = BigInt(match[2] as string) * 100n + BigInt((match[3] ?? "").padEnd(2, "0"));
  return match[1] ? -cents : cents;
}

/**
 * Cents for a bid's amount (a JSON number), or null for invalid_amount. A number "has at most 2
 * decimals" when it is the double nearest to some whole number of cents over 100, i.e. what a
 * JSON text with at most 2 decimals parses to.
 */
export function modelAmountCents(value: number): number | null {
  // Far beyond the maximum (or not finite): no need to look for cents.
  if (!Number.isFinite(value) || Math.abs(value) > 1e13) return null;
  // The float product only finds the candidates; the check is exact, through decimal text.
  const near = BigInt(Math.round(value * 100));
  for (const cents of [near - 1n, near, near + 1n]) {
    if (Number(centsToDecimalText(cents)) === value) {
      return cents > 0n && cents <= BigInt(MODEL_MAX_CENTS) ? Number(cents) : null;
    }
  }
  return null;
}

/**
 * The smallest amount that wins against a round's highest visible bid (null: none yet): the highest
 * plus the increment, or the first bid's floor.
 */
export function modelNextWinningCents(highestCents: number | null): number {
  return highestCents === null ? FIRST_BID_MIN_CENTS : highestCents + BID_INCREMENT_CENTS;
}

/** Whether a valid amount is refused as too_low against a round's highest visible bid (null: none yet). */
export function modelTooLow(amountCents: number, highestCents: number | null): boolean {
  return amountCents < modelNextWinningCents(highestCents);
}

/** `count` amounts, each the smallest that wins after the one before, from a round's highest (null: none yet). */
export function modelWinningAmounts(count: number, highestCents: number | null = null): number[] {
  const amounts: number[] = [];
  for (let highest = highestCents; amounts.length < count; ) {
    highest = modelNextWinningCents(highest);
    amounts.push(highest);
  }
  return amounts;
}

/** Amounts from `firstCents` on, one a call, each the smallest that wins after the one before. */
export function modelRisingAmounts(firstCents: number): () => number {
  let next = firstCents;
  return () => {
    const cents = next;
    next = modelNextWinningCents(cents);
    return cents;
  };
}

/** The too_low message, naming the highest the bid lost to: the product's own builder, never retyped. */
export function modelTooLowMessage(highestCents: number): string {
  return tooLowText(highestCents);
}

export type ExpectedAnswer =
  | { type: "closed"; code: 1009 }
  | { type: "pong" }
  | { type: "error"; code: "bad_message"; requestId: string | undefined }
  | {
      type: "error";
      code: "invalid_name" | "name_not_allowed" | "invalid_amount" | "too_low";
      requestId: string;
      highestCents: number | null;
    }
  | { type: "accepted"; requestId: string; bidderName: string; amountCents: number };

const BID_FIELDS = ["amount", "bidderName", "requestId", "type"];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A requestId the service can echo: a string of 1 to 64 UTF-16 units (JSON's own counting of a string's length). */
function readableRequestId(data: unknown): string | undefined {
  if (!isRecord(data) || typeof data.requestId !== "string") return undefined;
  return data.requestId.length >= 1 && data.requestId.length <= 64 ? data.requestId : undefined;
}

/** One auction as the rules say it should behave, with the rate limit lifted. */
export class AuctionModel {
  /**
   * Whether a valid name passes the name filter. The filter is a library's judgment (a profanity
   * dataset, IANA's TLDs), not a rule a model could restate, so the model asks the service's own.
   */
  private readonly nameAllowed = (name: string) => nameFilter(name).allowed;
  highestCents: number | null = null;
  lastId = 0;
  acceptances = 0;

  /** What the service must answer to one text frame, given the bids accepted so far. */
  expect(text: string): ExpectedAnswer {
    if (Buffer.byteLength(text, "utf8") > MODEL_MAX_MESSAGE_BYTES) return { type: "closed", code: 1009 };
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return { type: "error", code: "bad_message", requestId: undefined };
    }
    const requestId = readableRequestId(data);
    const badMessage = { type: "error", code: "bad_message", requestId } as const;
    if (!isRecord(data)) return badMessage;
    const keys = Object.keys(data).sort();
    if (data.type === "ping") return keys.length === 1 ? { type: "pong" } : badMessage;
    if (data.type !== "bid" || keys.join() !== BID_FIELDS.join()) return badMessage;
    // JSON has no NaN; a number too large for a double (1e309) reads as Infinity and is still a number.
    if (requestId === undefined || typeof data.bidderName !== "string" || typeof data.amount !== "number") {
      return badMessage;
    }
    const refusal = (code: "invalid_name" | "name_not_allowed" | "invalid_amount" | "too_low") =>
      ({ type: "error", code, requestId, highestCents: this.highestCents }) as const;
    const bidderName = modelName(data.bidderName);
    if (bidderName === null) return refusal("invalid_name");
    if (!this.nameAllowed(bidderName)) return refusal("name_not_allowed");
    const amountCents = modelAmountCents(data.amount);
    if (amountCents === null) return refusal("invalid_amount");
    if (modelTooLow(amountCents, this.highestCents)) return refusal("too_low");
    return { type: "accepted", requestId, bidderName, amountCents };
  }

  /** Follows an accepted bid, so the next expectations use the new high. */
  record(bid: { id: number; amountCents: number }) {
    this.highestCents = bid.amountCents;
    this.lastId = bid.id;
    this.acceptances++;
  }
}

/** One entry of a batch as the model takes it: a plain bid, or a maximum with its owner (any text). */
export type ModelEntry =
  | { kind: "bid"; name: string; cents: number }
  | { kind: "maximum"; name: string; maximumCents: number; owner: string };

/** What the rule answers one entry, and the bids it stores (in order: the entry's own, then an automatic one). */
export interface ModelMaximumAnswer {
  outcome:
    | "accepted"
    | "too_low"
    | "name_not_allowed"
    | "outbid_by_maximum"
    | "maximum_set"
    | "maximum_raised"
    | "maximum_too_low"
    | "name_leads";
  /** The entry's own bid, when stored. */
  ownCents: number | null;
  /** An accepted plain bid at once passed by an automatic bid. */
  outbidByMaximum: boolean;
  /** The round's highest after the entry (0: none). */
  highestCents: number;
  stored: { name: string; cents: number }[];
}

export interface ModelLeading {
  name: string;
  owner: string;
  maximumCents: number;
}

/** What the rule decides for one entry: its answer, the bids it stores in order, the leader after. */
export interface ModelRuleDecision {
  outcome: ModelMaximumAnswer["outcome"];
  stored: { name: string; cents: number }[];
  /** The first stored bid is the entry's own. */
  own: boolean;
  outbidByMaximum: boolean;
  leading: ModelLeading | null;
}

/**
 * The secret maximum bids' rule (docs/protocol.md#maximum-bids, eBay's), written from the rule's
 * text, not from the SQL: one entry against the round's highest visible bid and its leading
 * maximum. A plain leader's maximum is its bid; only the round's leading maximum is kept. Names
 * compare by `sameName` (their keys).
 */
export function modelMaximumRule(
  highest: { name: string; cents: number } | null,
  leading: ModelLeading | null,
  entry: ModelEntry,
  sameName: (a: string, b: string) => boolean,
): ModelRuleDecision {
  const decide = (
    outcome: ModelRuleDecision["outcome"],
    stored: ModelRuleDecision["stored"] = [],
    after: ModelLeading | null = leading,
    { own = false, outbid = false } = {},
  ): ModelRuleDecision => ({ outcome, stored, own, outbidByMaximum: outbid, leading: after });
  const smallest = modelNextWinningCents(highest?.cents ?? null);
  const automatic = (cents: number) => ({ name: (leading as ModelLeading).name, cents });
  if (entry.kind === "bid") {
    const a = entry.cents;
    const own = { name: entry.name, cents: a };
    if (a < smallest) return decide("too_low");
    if (!leading || sameName(leading.name, entry.name)) {
      return decide("accepted", [own], leading && a >= leading.maximumCents ? null : leading, { own: true });
    }
    if (a > leading.maximumCents) return decide("accepted", [own], null, { own: true });
    if (a < leading.maximumCents) {
      const answer = automatic(Math.min(leading.maximumCents, a + BID_INCREMENT_CENTS));
      return decide("accepted", [own, answer], leading, { own: true, outbid: true });
    }
    // A tie: the earlier maximum wins.
    return decide("outbid_by_maximum", [automatic(leading.maximumCents)]);
  }
  const m = entry.maximumCents;
  const mine = { name: entry.name, owner: entry.owner, maximumCents: m };
  if (m < smallest) return decide("too_low");
  if (leading && leading.owner === entry.owner) {
    if (m <= leading.maximumCents) return decide("maximum_too_low");
    return decide("maximum_raised", [], { ...leading, maximumCents: m });
  }
  // The leading maximum's name from another browser: no contest with itself.
  if (leading && sameName(leading.name, entry.name)) return decide("name_leads");
  if (!leading && highest && sameName(highest.name, entry.name)) return decide("maximum_set", [], mine);
  const rival = leading ? leading.maximumCents : (highest?.cents ?? null);
  if (rival === null || m > rival) {
    const price = rival === null ? smallest : Math.max(smallest, Math.min(m, rival + BID_INCREMENT_CENTS));
    return decide("maximum_set", [{ name: entry.name, cents: price }], mine, { own: true });
  }
  // Not above the leading maximum (a plain leader's bid is below any maximum that passes too_low).
  if (!leading) throw new Error("a maximum not above a plain leader cannot pass too_low");
  return decide("outbid_by_maximum", [automatic(Math.min(leading.maximumCents, m + BID_INCREMENT_CENTS))]);
}

/** One round under the rule (modelMaximumRule), names compared by `keyOf`. */
export class MaximumRuleModel {
  highest: { name: string; cents: number } | null = null;
  leading: ModelLeading | null = null;
  readonly bids: { name: string; cents: number }[] = [];
  blocked = new Set<string>();
  private readonly keyOf: (name: string) => string;

  constructor(keyOf: (name: string) => string = (name) => name.toLowerCase()) {
    this.keyOf = keyOf;
  }

  place(entry: ModelEntry): ModelMaximumAnswer {
    const refused = this.blocked.has(this.keyOf(entry.name));
    const decision: ModelRuleDecision = refused
      ? { outcome: "name_not_allowed", stored: [], own: false, outbidByMaximum: false, leading: this.leading }
      : modelMaximumRule(this.highest, this.leading, entry, (a, b) => this.keyOf(a) === this.keyOf(b));
    for (const bid of decision.stored) {
      this.highest = bid;
      this.bids.push(bid);
    }
    this.leading = decision.leading;
    return {
      outcome: decision.outcome,
      ownCents: decision.own ? (decision.stored[0]?.cents ?? null) : null,
      outbidByMaximum: decision.outbidByMaximum,
      highestCents: this.highest?.cents ?? 0,
      stored: decision.stored,
    };
  }

  /** A copy to try an order on, leaving this one as it is. */
  clone(): MaximumRuleModel {
    const copy = new MaximumRuleModel(this.keyOf);
    copy.highest = this.highest && { ...this.highest };
    copy.leading = this.leading && { ...this.leading };
    copy.bids.push(...this.bids);
    copy.blocked = new Set(this.blocked);
    return copy;
  }
}
