/**
 * PGlite has no autovacuum, so its store analyses the bids itself (service/storage/pglite.ts):
 * without statistics the planner read a snapshot's newest bids by sorting the whole round, and a
 * page's opening grew slower with every bid of the round (35 ms at 30,000 bids, measured). Read
 * through the plan, not the clock.
 */
import { describe, expect, it } from "vitest";
import { VIEW_SQL } from "../../../service/storage/queries.ts";
import { freshStoreForThisTest, placeRisingBids, withDirectSql } from "../harness/stores.ts";

const BIDS = 2_000;

/** A snapshot with its newest 50 bids, as the store reads it. */
const SNAPSHOT_SIZE = 50;

describe("the PGlite store's statistics", () => {
  it("keeps the bids analysed as they grow, so a snapshot reads the newest bids by index instead of sorting the round", async () => {
    const { location, store } = await freshStoreForThisTest("pglite");
    const outcomes = await placeRisingBids(store, BIDS, (n) => `Bidder ${n % 7}`);
    expect(outcomes.every((outcome) => outcome.accepted)).toBe(true);
    await store.close();

    const { tableRows, plan } = await withDirectSql(location, async (query) => ({
      // What ANALYZE last counted (pg_class keeps it; PGlite's activity statistics do not persist).
      tableRows: Number(
        (await query("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'auction_bids'"))[0]?.n,
      ),
      plan: (await query(`EXPLAIN ${VIEW_SQL}`, [SNAPSHOT_SIZE])).map((row) => String(row["QUERY PLAN"])).join("\n"),
    }));
    // Analysed after each 50 rows plus 10% of the table: at most about a tenth behind.
    expect(tableRows).toBeGreaterThanOrEqual(BIDS * 0.85);
    // The list: newest first straight off an index (by id, or by round and id), stopping at 50.
    expect(plan).toMatch(
      /Limit [^\n]* rows=50 [^\n]*\n\s*-> {2}Index Scan Backward using auction_bids_(pkey|round_id_idx) /,
    );
    // Nor does any other part of the snapshot sort.
    expect(plan).not.toContain("Sort");
  });
});
