/**
 * The bidder count asks, per bid, whether the name already has a visible bid in the round. That
 * lookup must stay one index probe whatever ANALYZE has learnt: with a few names bidding thousands
 * of times, the planner otherwise prefers a sequential scan that expects to meet the name early,
 * and a name new to the round then reads the whole table at every bid (sql/006_known_bidders_by_index.sql;
 * bench:realtime measured 3 to 18 ms a placement). The plans are read through auto_explain, whose
 * output PostgreSQL hands the session as notices.
 */
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { cleanUpAfter, freshStoreForThisTest, placeRisingBids } from "../harness/stores.ts";

const BIDS = 4_000;
const NAMES = 4;

describe("the known-bidder lookup on PostgreSQL", () => {
  it("probes the (round, name) index for a new name and a frequent one, after ANALYZE has seen a few names bid thousands of times", async () => {
    const { location, store } = await freshStoreForThisTest("postgres");
    await placeRisingBids(store, BIDS, (n) => `Regular ${n % NAMES}`);

    const notices: string[] = [];
    const sql = postgres(location.databaseUrl as string, {
      max: 1,
      onnotice: (notice) => notices.push(String(notice.message)),
    });
    cleanUpAfter(() => sql.end());
    await sql.unsafe("ANALYZE auction_bids");
    await sql.unsafe("LOAD 'auto_explain'");
    await sql.unsafe(
      "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice",
    );
    const [row] = await sql.unsafe("SELECT auction_round_known_bidders(1, ARRAY['Nobody new', 'Regular 1']) AS known");
    expect(row?.known).toEqual(["Regular 1"]);

    const probe = notices.find((notice) => notice.includes("FROM auction_bids b"));
    expect(probe, notices.join("\n---\n")).toBeDefined();
    expect(probe).toContain("auction_bids_round_bidder_name_idx");
    expect(probe).not.toContain("Seq Scan on auction_bids");
  });
});
