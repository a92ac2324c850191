/**
 * The SQL both adapters send and the mapping of its rows, so the two backends cannot drift apart.
 * Each read is one statement, hence one snapshot: the bids and the bidder count always agree.
 */
import type { AuctionView, BidNotice, BidsAfter, PlaceBidOutcome, StoredBid } from "./types.ts";

export const NOTIFY_CHANNEL = "auction_bids";

/** $1 name (trimmed and checked by the rules), $2 amount in cents. See sql/001_auction_bids.sql. */
export const PLACE_BID_SQL = "SELECT * FROM place_auction_bid($1::text, $2::bigint)";

const HIGHEST_COLUMN = `(SELECT row_to_json(h) FROM (SELECT * FROM auction_bids_wire ORDER BY id DESC LIMIT 1) h) AS highest`;

/** $1 limit. */
export const VIEW_SQL = `SELECT
  (SELECT bidder_count FROM auction_state) AS bidders,
  ${HIGHEST_COLUMN},
  coalesce(
    (SELECT json_agg(b ORDER BY b.id DESC) FROM (SELECT * FROM auction_bids_wire ORDER BY id DESC LIMIT $1::integer) b),
    '[]'::json
  ) AS bids`;

/** $1 after id, $2 limit. */
export const BIDS_AFTER_SQL = `SELECT
  (SELECT bidder_count FROM auction_state) AS bidders,
  ${HIGHEST_COLUMN},
  coalesce(
    (SELECT json_agg(b ORDER BY b.id) FROM (
      SELECT * FROM auction_bids_wire WHERE id > $1::bigint ORDER BY id LIMIT $2::integer
    ) b),
    '[]'::json
  ) AS bids`;

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

export function toPlaceBidOutcome(row: Row | undefined): PlaceBidOutcome {
  if (!row) throw new Error("place_auction_bid returned no row");
  if (row.accepted) return { accepted: true, bid: toStoredBid(row), bidders: Number(row.bidders) };
  return { accepted: false, highestCents: Number(row.highest_cents) };
}

function toBidsWithHighest(row: Row): AuctionView {
  const highest = parseJson(row.highest) as Row | null;
  return {
    bids: (parseJson(row.bids) as Row[]).map(toStoredBid),
    highest: highest ? toStoredBid(highest) : null,
    bidders: Number(row.bidders),
  };
}

export function toAuctionView(row: Row | undefined): AuctionView {
  if (!row) throw new Error("the auction view returned no row");
  return toBidsWithHighest(row);
}

export function toBidsAfter(row: Row | undefined): BidsAfter {
  if (!row) throw new Error("bids after returned no row");
  return toBidsWithHighest(row);
}

/** The NOTIFY payload built by place_auction_bid(); null when it is not one (logged by the caller). */
export function parseBidNotice(payload: string): BidNotice | null {
  try {
    const data = JSON.parse(payload) as Record<string, unknown>;
    const bid: StoredBid = {
      id: Number(data.id),
      bidderName: String(data.bidderName),
      amountCents: Number(data.amountCents),
      createdAt: String(data.createdAt),
    };
    const bidders = Number(data.bidders);
    if (!Number.isSafeInteger(bid.id) || !Number.isSafeInteger(bid.amountCents) || !Number.isSafeInteger(bidders)) {
      return null;
    }
    return { bid, bidders };
  } catch {
    return null;
  }
}
