/**
 * What a page shows of the auction, and what it should show, derived straight from the database's
 * tables (not through the service's reads, service/storage/queries.ts): the fault tests' final
 * check that every page ends equal to the database.
 *
 *   const { standing, shown } = await readShownState(sql); // from auction_state, auction_rounds, auction_bids_wire
 *   // once page.standing() equals `standing`:
 *   const problems = compareShownState(pageShows(page.state()), shown);
 *
 * The rules it derives with are the product's (docs/design.md#6a, #6b; the protocol's comments in
 * src/lib/auction/protocol.ts): the current round's visible bids (neither hidden nor of a blocked
 * name), newest first and at most SNAPSHOT_SIZE; the leader the highest of them, the earliest of
 * equal amounts; the bidder count their distinct names; the round ended once its end is recorded;
 * the last 5 ended rounds that have a visible bid, each won by its highest visible bid.
 */
import type postgres from "postgres";
import { SNAPSHOT_SIZE, type WireBid } from "../../../src/lib/auction/protocol.ts";
import type { AuctionState } from "../../../src/stores/auctionConnection.ts";
import type { Standing } from "./pageClient.ts";

/** docs/design.md#6b: "the last 5 rounds". */
const PAST_WINNERS_SHOWN = 5;

export interface ShownState {
  round: { number: number; endsAt: string | null; ended: boolean };
  bids: WireBid[];
  highest: WireBid | null;
  bidders: number;
  pastWinners: { round: number; bid: WireBid; endedAt: string }[];
}

/** The page's own state as the islands read it; a page before its first message shows round 0. */
export function pageShows(state: AuctionState): ShownState {
  const round = state.round ?? { number: 0, endsAt: null, ended: false };
  return {
    round: { number: round.number, endsAt: round.endsAt, ended: round.ended },
    bids: state.bids,
    highest: state.highest,
    bidders: state.bidders,
    pastWinners: state.pastWinners.map(({ round, bid, endedAt }) => ({ round, bid, endedAt })),
  };
}

/**
 * The state every page should show, and the standing it is at (compare a page once its own
 * standing is the same), read in one snapshot of the database.
 */
export async function readShownState(sql: postgres.Sql): Promise<{ standing: Standing; shown: ShownState }> {
  return (await sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const [state] = await tx`
      SELECT coalesce(s.round_number, 0) AS number, auction_time_text(r.ends_at) AS ends_at,
        coalesce(r.closed_at IS NOT NULL, false) AS ended, s.moderation_version AS moderation
      FROM auction_state s LEFT JOIN auction_rounds r ON r.number = s.round_number`;
    const number = Number(state?.number ?? 0);
    // Built as the wire spells a bid (json_build_object keeps the keys' order).
    const visible = await tx`
      SELECT json_build_object('id', id, 'bidderName', bidder_name, 'amountCents', amount_cents, 'createdAt', created_at) AS bid
      FROM auction_bids_wire WHERE visible AND round_number = ${number} ORDER BY id DESC`;
    const bids = visible.map((row) => row.bid as WireBid);
    let highest: WireBid | null = null;
    // Oldest first: of equal amounts the earliest leads.
    for (const bid of bids.toReversed()) if (!highest || bid.amountCents > highest.amountCents) highest = bid;
    const ended = await tx`
      SELECT r.number, auction_time_text(r.ends_at) AS ended_at,
        json_build_object('id', w.id, 'bidderName', w.bidder_name, 'amountCents', w.amount_cents, 'createdAt', w.created_at) AS bid
      FROM auction_rounds r
      JOIN LATERAL (
        SELECT * FROM auction_bids_wire b WHERE b.round_number = r.number AND b.visible
        ORDER BY b.amount_cents DESC, b.id LIMIT 1
      ) w ON true
      WHERE r.closed_at IS NOT NULL ORDER BY r.number DESC LIMIT ${PAST_WINNERS_SHOWN}`;
    const roundEnded = state?.ended === true;
    return {
      standing: { moderation: Number(state?.moderation ?? 0), round: number, ended: roundEnded },
      shown: {
        round: { number, endsAt: (state?.ends_at as string | null) ?? null, ended: roundEnded },
        bids: bids.slice(0, SNAPSHOT_SIZE),
        highest,
        bidders: new Set(bids.map((bid) => bid.bidderName)).size,
        pastWinners: ended.map((row) => ({
          round: Number(row.number),
          bid: row.bid as WireBid,
          endedAt: String(row.ended_at),
        })),
      },
    };
  })) as { standing: Standing; shown: ShownState };
}

const brief = (bid: WireBid | null | undefined) => (bid ? `#${bid.id} ${bid.bidderName} ${bid.amountCents}¢` : "none");

/** What differs between what a page shows and what it should, one line each; empty when equal. */
export function compareShownState(shown: ShownState, expected: ShownState): string[] {
  const differences: string[] = [];
  if (JSON.stringify(shown.round) !== JSON.stringify(expected.round)) {
    differences.push(`round ${JSON.stringify(shown.round)}, the database's ${JSON.stringify(expected.round)}`);
  }
  if (JSON.stringify(shown.bids) !== JSON.stringify(expected.bids)) {
    const shownIds = new Set(shown.bids.map((bid) => bid.id));
    const expectedIds = new Set(expected.bids.map((bid) => bid.id));
    const extra = [...shownIds].filter((id) => !expectedIds.has(id));
    const missing = [...expectedIds].filter((id) => !shownIds.has(id));
    differences.push(
      `list of ${shown.bids.length} bids, the database's ${expected.bids.length}: ` +
        `shows ${extra.slice(0, 5).join(", ") || "none"} it should not, lacks ${missing.slice(0, 5).join(", ") || "none"}` +
        (extra.length + missing.length === 0 ? " (same ids, other order or fields)" : ""),
    );
  }
  if (JSON.stringify(shown.highest) !== JSON.stringify(expected.highest)) {
    differences.push(`leader ${brief(shown.highest)}, the database's ${brief(expected.highest)}`);
  }
  if (shown.bidders !== expected.bidders)
    differences.push(`${shown.bidders} bidders, the database's ${expected.bidders}`);
  if (JSON.stringify(shown.pastWinners) !== JSON.stringify(expected.pastWinners)) {
    const list = (winners: ShownState["pastWinners"]) =>
      winners.map((winner) => `${winner.round}: ${brief(winner.bid)}`).join("; ") || "none";
    differences.push(`past winners ${list(shown.pastWinners)}, the database's ${list(expected.pastWinners)}`);
  }
  return differences;
}
