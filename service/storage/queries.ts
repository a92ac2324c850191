/**
 * The SQL both adapters send and the mapping of its rows, so the two backends cannot drift apart.
 * Each read is one statement, hence one snapshot: the bids and the bidder count always agree.
 */
import { BID_INCREMENT_CENTS, FIRST_BID_MIN_CENTS } from "../../src/lib/auction/bidRules.ts";
import type { Logger } from "../logger.ts";
import { nameKey } from "../names/nameKey.ts";
import type {
  AuctionView,
  AuditEntry,
  BidNotice,
  BidToPlace,
  BlockedName,
  MaximumOutcome,
  ModeratedBid,
  ModerationNotice,
  ModerationOutcome,
  ModerationRequest,
  ModerationView,
  OwnMaximum,
  PlaceBidOutcome,
  Placement,
  RoundClosedNotice,
  RoundSettings,
  RoundSettlement,
  RoundStanding,
  RoundWinner,
  StoredBid,
} from "./types.ts";

export const NOTIFY_CHANNEL = "auction_bids";

/**
 * $1 name (trimmed and checked by the rules), $2 its key, $3 amount in cents, $4 round length and
 * $5 soft close in seconds, $6 the bid increment and $7 the first bid's floor in cents (bidRules.ts).
 * See sql/functions/40_bids.sql.
 */
export const PLACE_BID_SQL =
  "SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, $4::integer, $5::integer, $6::bigint, $7::bigint)";

export function placeBidParameters(
  bidderName: string,
  amountCents: number,
  rounds: RoundSettings,
): [string, string, number, number, number, number, number] {
  return [
    bidderName,
    nameKey(bidderName),
    amountCents,
    rounds.roundSeconds,
    rounds.softCloseSeconds,
    BID_INCREMENT_CENTS,
    FIRST_BID_MIN_CENTS,
  ];
}

/**
 * $1 the bids and maximums as JSON [{name, key, cents} or {name, key, maximum, owner}] in arrival
 * order, $2 round length, $3 soft close, $4 the bid increment, $5 the first bid's floor; true: this
 * caller reads the maximums' answers. See sql/functions/40_bids.sql.
 */
const PLACE_BIDS_SQL =
  "SELECT * FROM place_auction_bids($1::text, $2::integer, $3::integer, $4::bigint, $5::bigint, true)";

/** A batch's entries as place_auction_bids takes them; sent as text, like FILL_KEYS_SQL's JSON. */
function placeBidsParameters(
  entries: readonly Placement[],
  rounds: RoundSettings,
): [string, number, number, number, number] {
  const json = JSON.stringify(
    entries.map((entry) => {
      const named = { name: entry.bidderName, key: nameKey(entry.bidderName) };
      return "ownerHash" in entry
        ? { ...named, maximum: entry.maximumCents, owner: entry.ownerHash }
        : { ...named, cents: entry.amountCents };
    }),
  );
  return [json, rounds.roundSeconds, rounds.softCloseSeconds, BID_INCREMENT_CENTS, FIRST_BID_MIN_CENTS];
}

/**
 * $1 the owner's hash: its newest maximum of the current round, if any. Only its owner is answered
 * (the socket that sent the secret), so the amount may be read.
 */
const OWN_MAXIMUM_SQL = `SELECT coalesce(s.round_number, 0) AS round_number, m.maximum_cents, m.ended_at IS NULL AS leading
FROM auction_state s
LEFT JOIN LATERAL (
  SELECT x.maximum_cents, x.ended_at FROM auction_maximums x
  WHERE x.owner_hash = $1::text AND x.round_number = s.round_number ORDER BY x.id DESC LIMIT 1
) m ON true`;

/** $1 round length in seconds. */
const SETTLE_ROUND_SQL = "SELECT * FROM settle_auction_round($1::integer)";

const WIRE_COLUMNS = "id, bidder_name, amount_cents, created_at";
const VISIBLE = "b.hidden_at IS NULL AND NOT b.name_blocked";

/** Past winners a snapshot carries (docs/design.md#6b: "the last 5 rounds"). */
const PAST_WINNERS_IN_VIEW = 5;

/** The last winners, newest first: each closed round's highest visible bid (the earliest of equal ones). */
function winnersSql(limit: string): string {
  return `coalesce((SELECT json_agg(w ORDER BY w.round DESC) FROM (
    SELECT r.number AS round, auction_time_text(r.ends_at) AS ended_at, top.*
    FROM auction_rounds r
    CROSS JOIN LATERAL (
      SELECT ${WIRE_COLUMNS} FROM auction_bids_wire
      WHERE id = (
        SELECT b.id FROM auction_bids b WHERE b.round_number = r.number AND ${VISIBLE} ORDER BY b.amount DESC, b.id LIMIT 1
      )
    ) top
    WHERE r.closed_at IS NOT NULL
    ORDER BY r.number DESC LIMIT ${limit}
  ) w), '[]'::json)`;
}
// Where the auction stands, in the same statement (so snapshot) as the bids read beside it. The
// state row's round is the current one (0 before round 1: no bid has a round 0).
const STANDING_COLUMNS = `s.bidder_count AS bidders,
  s.moderation_version AS moderation,
  coalesce((SELECT max(b.id) FROM auction_bids b), 0) AS last_id,
  coalesce((SELECT json_agg(n.name_key) FROM auction_blocked_names n), '[]'::json) AS blocked_keys,
  (SELECT row_to_json(h) FROM (
    SELECT ${WIRE_COLUMNS} FROM auction_bids_wire
    WHERE id = (
      SELECT b.id FROM auction_bids b WHERE b.round_number = s.round_number AND ${VISIBLE}
      ORDER BY b.amount DESC, b.id LIMIT 1
    )
  ) h) AS highest,
  coalesce(s.round_number, 0) AS round_number,
  (SELECT auction_time_text(r.ends_at) FROM auction_rounds r WHERE r.number = s.round_number) AS round_ends_at,
  coalesce((SELECT r.closed_at IS NOT NULL FROM auction_rounds r WHERE r.number = s.round_number), false) AS round_closed,
  ${winnersSql(String(PAST_WINNERS_IN_VIEW))} AS past_winners,
  auction_time_text(auction_clock()) AS now`;

/** $1 limit. Exported for the test that reads its plan (pgliteStatistics.test.ts). */
export const VIEW_SQL = `SELECT
  ${STANDING_COLUMNS},
  coalesce(
    (SELECT json_agg(b ORDER BY b.id DESC) FROM (
      SELECT ${WIRE_COLUMNS} FROM auction_bids_wire
      WHERE visible AND round_number = s.round_number ORDER BY id DESC LIMIT $1::integer
    ) b),
    '[]'::json
  ) AS bids
FROM auction_state s`;

/** $1 after id, $2 limit. */
const BIDS_AFTER_SQL = `SELECT
  ${STANDING_COLUMNS},
  coalesce(
    (SELECT json_agg(b ORDER BY b.id) FROM (
      SELECT ${WIRE_COLUMNS} FROM auction_bids_wire
      WHERE visible AND round_number = s.round_number AND id > $1::bigint ORDER BY id LIMIT $2::integer
    ) b),
    '[]'::json
  ) AS bids
FROM auction_state s`;

/** $1 limit. */
const WINNERS_SQL = `SELECT ${winnersSql("$1::integer")} AS winners`;

/** $1 action, $2 bid id, $3 name as typed, $4 its key, $5 reason, $6 session id. */
const MODERATE_SQL = "SELECT * FROM moderate_auction($1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text)";

function moderateParameters(request: ModerationRequest): unknown[] {
  const bidId = "bidId" in request ? request.bidId : null;
  const name = "bidderName" in request ? request.bidderName : null;
  return [request.action, bidId, name, name === null ? null : nameKey(name), request.reason, request.sessionId];
}

const UTC_TIME = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
/** Most audit entries the console lists (the newest). */
const AUDIT_LIST_SIZE = 100;

/** $1 list bids below this id (null: from the newest), $2 page size. One more is read to tell if older ones exist. */
const MODERATION_VIEW_SQL = `SELECT
  s.moderation_version AS moderation,
  -- The current round's highest visible bid when its name bids automatically (a leading maximum of
  -- its key): the console says so beside it, never the amount.
  (SELECT b.id FROM auction_bids b
    JOIN auction_maximums m ON m.round_number = b.round_number AND m.ended_at IS NULL AND m.bidder_key = b.bidder_key
    WHERE b.id = (
      SELECT h.id FROM auction_bids h WHERE h.round_number = s.round_number AND h.hidden_at IS NULL AND NOT h.name_blocked
      ORDER BY h.amount DESC, h.id LIMIT 1
    )) AS automatic_bid_id,
  coalesce(
    (SELECT json_agg(b ORDER BY b.id DESC) FROM (
      SELECT ${WIRE_COLUMNS}, hidden, name_blocked FROM auction_bids_wire
      WHERE $1::bigint IS NULL OR id < $1::bigint ORDER BY id DESC LIMIT $2::integer + 1
    ) b),
    '[]'::json
  ) AS bids,
  coalesce(
    (SELECT json_agg(n ORDER BY n.blocked_at DESC) FROM (
      SELECT bidder_name, to_char(blocked_at AT TIME ZONE 'UTC', ${UTC_TIME}) AS blocked_at FROM auction_blocked_names
    ) n),
    '[]'::json
  ) AS blocked_names,
  coalesce(
    (SELECT json_agg(a ORDER BY a.id DESC) FROM (
      SELECT id, to_char(at AT TIME ZONE 'UTC', ${UTC_TIME}) AS at, session_id, action, bid_id, bidder_name, reason
      FROM auction_moderation_log ORDER BY id DESC LIMIT ${AUDIT_LIST_SIZE}
    ) a),
    '[]'::json
  ) AS audit
FROM auction_state s`;

type Row = Record<string, unknown>;

// bigint columns come back as strings from postgres.js and as numbers from PGlite.
function toStoredBid(row: Row): StoredBid {
  return {
    id: Number(row.id),
    bidderName: String(row.bidder_name),
    amountCents: Number(row.amount_cents),
    createdAt: String(row.created_at),
  };
}

function parseJson(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

function nullableText(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function toPlaceBidOutcome(row: Row | undefined): PlaceBidOutcome {
  if (!row) throw new Error("place_auction_bid returned no row");
  const moderation = Number(row.moderation);
  const round = {
    round: Number(row.round_number ?? 0),
    endsAt: nullableText(row.round_ends_at),
    closedRoundBids: nullableNumber(row.closed_round_bids),
  };
  const highestCents = Number(row.highest_cents);
  if (row.outcome === "accepted") {
    const outcome: PlaceBidOutcome = {
      accepted: true,
      bid: toStoredBid(row),
      bidders: Number(row.bidders),
      moderation,
      ...round,
    };
    // Only when it happened: a plain answer stays as it was.
    if (row.outbid_by_maximum === true) outcome.outbidByMaximumCents = highestCents;
    return outcome;
  }
  if (row.outcome === "name_not_allowed") {
    // 0 is the empty auction's state, not a bid.
    return {
      accepted: false,
      code: "name_not_allowed",
      highestCents: highestCents > 0 ? highestCents : null,
      moderation,
      ...round,
    };
  }
  const code = row.outcome === "outbid_by_maximum" ? "outbid_by_maximum" : "too_low";
  return { accepted: false, code, highestCents, moderation, ...round };
}

function toMaximumOutcome(row: Row): MaximumOutcome {
  if (row.outcome === "maximum_set" || row.outcome === "maximum_raised") {
    return {
      accepted: true,
      raised: row.outcome === "maximum_raised",
      bid: row.id === null || row.id === undefined ? null : toStoredBid(row),
      bidders: Number(row.bidders),
      moderation: Number(row.moderation),
      round: Number(row.round_number ?? 0),
      endsAt: nullableText(row.round_ends_at),
      closedRoundBids: nullableNumber(row.closed_round_bids),
    };
  }
  if (row.outcome === "maximum_too_low" || row.outcome === "name_leads") {
    const refused = toPlaceBidOutcome({ ...row, outcome: "too_low" });
    return { ...refused, code: row.outcome } as MaximumOutcome;
  }
  return toPlaceBidOutcome(row) as MaximumOutcome;
}

function toRoundWinners(value: unknown): RoundWinner[] {
  return (parseJson(value) as Row[]).map((row) => ({
    round: Number(row.round),
    bid: toStoredBid(row),
    endedAt: String(row.ended_at),
  }));
}

function toRoundSettlement(row: Row | undefined): RoundSettlement {
  if (!row) throw new Error("settle_auction_round returned no row");
  return {
    number: Number(row.round_number ?? 0),
    endsAt: nullableText(row.ends_at),
    closed: row.closed === true,
    closedRoundBids: nullableNumber(row.closed_round_bids),
    now: String(row.now),
  };
}

function toAuctionView(row: Row | undefined): AuctionView {
  if (!row) throw new Error("the auction read returned no row");
  const highest = parseJson(row.highest) as Row | null;
  return {
    bids: (parseJson(row.bids) as Row[]).map(toStoredBid),
    highest: highest ? toStoredBid(highest) : null,
    bidders: Number(row.bidders),
    moderation: Number(row.moderation),
    lastId: Number(row.last_id),
    blockedKeys: (parseJson(row.blocked_keys) as unknown[]).map(String),
    round: toRoundStanding(row),
    pastWinners: toRoundWinners(row.past_winners),
    now: String(row.now),
  };
}

function toRoundStanding(row: Row): RoundStanding {
  return {
    number: Number(row.round_number),
    endsAt: nullableText(row.round_ends_at),
    closed: row.round_closed === true,
  };
}

function toModerationOutcome(row: Row | undefined): ModerationOutcome {
  if (!row) throw new Error("moderate_auction returned no row");
  const moderation = Number(row.moderation);
  if (row.outcome === "no_such_bid") return { outcome: "no_such_bid", moderation, bidderName: null };
  const bidderName = row.bidder_name === null ? null : String(row.bidder_name);
  return { outcome: row.outcome === "done" ? "done" : "unchanged", moderation, bidderName };
}

function toModerationView(row: Row | undefined, limit: number): ModerationView {
  if (!row) throw new Error("the moderation read returned no row");
  const bids: ModeratedBid[] = (parseJson(row.bids) as Row[]).map((bid) => ({
    ...toStoredBid(bid),
    hidden: Boolean(bid.hidden),
    nameBlocked: Boolean(bid.name_blocked),
  }));
  const blockedNames: BlockedName[] = (parseJson(row.blocked_names) as Row[]).map((name) => ({
    bidderName: String(name.bidder_name),
    blockedAt: String(name.blocked_at),
  }));
  const audit: AuditEntry[] = (parseJson(row.audit) as Row[]).map((entry) => ({
    id: Number(entry.id),
    at: String(entry.at),
    sessionId: String(entry.session_id),
    action: entry.action as AuditEntry["action"],
    bidId: entry.bid_id === null ? null : Number(entry.bid_id),
    bidderName: String(entry.bidder_name),
    reason: entry.reason === null ? null : String(entry.reason),
  }));
  return {
    bids: bids.slice(0, limit),
    olderBids: bids.length > limit,
    blockedNames,
    audit,
    moderation: Number(row.moderation),
    automaticBidId: nullableNumber(row.automatic_bid_id),
  };
}

type Notice =
  | { kind: "bid"; notice: BidNotice }
  | { kind: "moderation"; notice: ModerationNotice }
  | { kind: "roundClosed"; notice: RoundClosedNotice };

/**
 * A NOTIFY payload: a bid from place_auction_bid(), a moderation action from moderate_auction(),
 * or a round's end from advance_auction_round(); null when it is none of them (logged by the caller).
 */
function parseNotice(payload: string): Notice | null {
  try {
    const data = JSON.parse(payload) as Record<string, unknown>;
    const moderation = Number(data.moderation);
    if (!Number.isSafeInteger(moderation)) return null;
    if (data.roundClosed !== undefined) {
      const round = Number(data.roundClosed);
      return Number.isSafeInteger(round) ? { kind: "roundClosed", notice: { round, moderation } } : null;
    }
    if (data.id === undefined) return { kind: "moderation", notice: { moderation } };
    const bid: StoredBid = {
      id: Number(data.id),
      bidderName: String(data.bidderName),
      amountCents: Number(data.amountCents),
      createdAt: String(data.createdAt),
    };
    const bidders = Number(data.bidders);
    const round = Number(data.round);
    if (
      !Number.isSafeInteger(bid.id) ||
      !Number.isSafeInteger(bid.amountCents) ||
      !Number.isSafeInteger(bidders) ||
      !Number.isSafeInteger(round)
    ) {
      return null;
    }
    return { kind: "bid", notice: { bid, bidders, moderation, round, endsAt: nullableText(data.endsAt) } };
  } catch {
    return null;
  }
}

type Query = (text: string, params: unknown[]) => Promise<Row[]>;

/**
 * The drivers' errors carry the statement's parameters (postgres.js `parameters` and `args`,
 * PGlite `params`) and PostgreSQL's `detail` ("Failing row contains (…)" for a refused row), which a
 * logged error would print: a batch's maximums and their owners' hashes, which no log line may show
 * (docs/decisions/2026-11-28-maximum-bids.md). The code, message and constraint stay.
 */
function withoutParameters(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return error;
  for (const key of ["parameters", "args", "params", "detail"]) {
    // A logger prints enumerable properties only; postgres.js already hides its own outside debug.
    const property = Object.getOwnPropertyDescriptor(error, key);
    if (!property?.enumerable) continue;
    if (property.configurable) Object.defineProperty(error, key, { value: undefined, enumerable: false });
    else if (property.writable) (error as Record<string, unknown>)[key] = undefined;
  }
  return error;
}

/** The reads and writes of BidStore over one backend's query function, with the store's round lengths. */
export function storeQueries(query: Query, rounds: RoundSettings) {
  async function placeEntries(entries: readonly Placement[]): Promise<(PlaceBidOutcome | MaximumOutcome)[]> {
    if (entries.length === 0) return [];
    const rows = await query(PLACE_BIDS_SQL, placeBidsParameters(entries, rounds)).catch((error: unknown) => {
      throw withoutParameters(error);
    });
    const byOrdinal = new Map(rows.map((row) => [Number(row.ordinal), row]));
    return entries.map((entry, index) => {
      const row = byOrdinal.get(index + 1);
      if (!row) throw new Error(`place_auction_bids returned no row for bid ${index + 1}`);
      return "ownerHash" in entry ? toMaximumOutcome(row) : toPlaceBidOutcome(row);
    });
  }
  return {
    rounds,
    async placeBid(bidderName: string, amountCents: number): Promise<PlaceBidOutcome> {
      return toPlaceBidOutcome((await query(PLACE_BID_SQL, placeBidParameters(bidderName, amountCents, rounds)))[0]);
    },
    async placeBids(bids: readonly BidToPlace[]): Promise<PlaceBidOutcome[]> {
      return (await placeEntries(bids)) as PlaceBidOutcome[];
    },
    placeEntries,
    async ownMaximum(ownerHash: string): Promise<OwnMaximum> {
      const row = (await query(OWN_MAXIMUM_SQL, [ownerHash]))[0];
      if (!row) throw new Error("the maximum read returned no row");
      const maximumCents = nullableNumber(row.maximum_cents);
      return { round: Number(row.round_number), maximumCents, leading: maximumCents !== null && row.leading === true };
    },
    async settleRound(): Promise<RoundSettlement> {
      return toRoundSettlement((await query(SETTLE_ROUND_SQL, [rounds.roundSeconds]))[0]);
    },
    async winners(limit: number): Promise<RoundWinner[]> {
      return toRoundWinners((await query(WINNERS_SQL, [limit]))[0]?.winners ?? "[]");
    },
    async view(limit: number): Promise<AuctionView> {
      return toAuctionView((await query(VIEW_SQL, [limit]))[0]);
    },
    async bidsAfter(afterId: number, limit: number): Promise<AuctionView> {
      return toAuctionView((await query(BIDS_AFTER_SQL, [afterId, limit]))[0]);
    },
    async moderate(request: ModerationRequest): Promise<ModerationOutcome> {
      return toModerationOutcome((await query(MODERATE_SQL, moderateParameters(request)))[0]);
    },
    async moderationView(beforeId: number | null, limit: number): Promise<ModerationView> {
      return toModerationView((await query(MODERATION_VIEW_SQL, [beforeId, limit]))[0], limit);
    },
  };
}

/** The listeners of a store's notifications, and the delivery of one payload to them. */
export function createNoticeListeners(logger: Logger) {
  const bidListeners = new Set<(notice: BidNotice) => void>();
  const moderationListeners = new Set<(notice: ModerationNotice) => void>();
  const roundClosedListeners = new Set<(notice: RoundClosedNotice) => void>();
  return {
    deliver(payload: string): void {
      const parsed = parseNotice(payload);
      if (!parsed) logger.error({ payload }, "unreadable auction notification");
      else if (parsed.kind === "bid") for (const listener of bidListeners) listener(parsed.notice);
      else if (parsed.kind === "moderation") for (const listener of moderationListeners) listener(parsed.notice);
      else for (const listener of roundClosedListeners) listener(parsed.notice);
    },
    onBid(listener: (notice: BidNotice) => void) {
      bidListeners.add(listener);
      return () => void bidListeners.delete(listener);
    },
    onModeration(listener: (notice: ModerationNotice) => void) {
      moderationListeners.add(listener);
      return () => void moderationListeners.delete(listener);
    },
    onRoundClosed(listener: (notice: RoundClosedNotice) => void) {
      roundClosedListeners.add(listener);
      return () => void roundClosedListeners.delete(listener);
    },
    clear(): void {
      bidListeners.clear();
      moderationListeners.clear();
      roundClosedListeners.clear();
    },
  };
}
