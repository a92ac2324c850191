/**
 * Group commit against placing one bid at a time (docs/design.md#6c), through the bid desk that the
 * service runs, on real PostgreSQL: generated bursts of bids, all arriving at once, mixing amounts
 * that win, tie or lose, a blocked name, names the filter refuses and more bids than the rate limit
 * lets through, are answered bid for bid as the same burst placed one bid per transaction, on a
 * database of its own, is answered. (Batches across a round's end are compared with a model in
 * roundProperties.test.ts, where the database's clock can be stepped.) And every accepted bid of a
 * batch is notified once, in order, after its one commit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBidBatcher } from "../../../service/auction/bidBatcher.ts";
import { createBidDesk } from "../../../service/auction/bidDesk.ts";
import { createKnownStanding } from "../../../service/auction/knownStanding.ts";
import { createRateLimiter } from "../../../service/http/rateLimiter.ts";
import { createMetrics } from "../../../service/metrics.ts";
import { createNameFilter } from "../../../service/names/nameFilter.ts";
import type { BidNotice, BidStore } from "../../../service/storage/types.ts";
import type { ServerMessage } from "../../../src/lib/auction/protocol.ts";
import { seededRuns } from "../../harness/seededRuns.ts";
import { scaled } from "../../harness/timeBudgets.ts";
import { modelNextWinningCents, modelWinningAmounts } from "../harness/auctionModel.ts";
import { freshStoreForThisTest, type TestLocation, testLogger, waitFor, withDirectSql } from "../harness/stores.ts";

const RATE_LIMIT = 12;
const ADDRESS = "203.0.113.7";
const BLOCKED = "Troll";

/** A desk as the service builds it, with the batching under test or one bid per transaction. */
function deskOver(store: BidStore, batching: boolean) {
  const metrics = createMetrics();
  const sizes: number[] = [];
  const batcher = createBidBatcher({
    store,
    maxBatchSize: batching ? undefined : 1,
    onBatch: (size) => sizes.push(size),
  });
  const desk = createBidDesk({
    store,
    rateLimiter: createRateLimiter(RATE_LIMIT, 60_000),
    metrics,
    logger: testLogger(),
    known: createKnownStanding(),
    nameFilter: createNameFilter(),
    roundClock: { nearEnd: () => false, observeClosedRound: () => {} },
    batcher,
  });
  return { desk, sizes };
}

/** No bids, rounds, blocks or audit, ids from 1, and the blocked name blocked. */
async function reset(location: TestLocation, store: BidStore) {
  await withDirectSql(location, async (query) => {
    await query(
      "TRUNCATE auction_moderation_log, auction_bids, auction_blocked_names, auction_rounds, auction_state RESTART IDENTITY",
    );
    await query("INSERT INTO auction_state DEFAULT VALUES");
  });
  await store.moderate({ action: "block", bidderName: BLOCKED, reason: null, sessionId: "test" });
}

/** An answer without the time of its insert, which differs between the two databases. */
function comparable(answer: ServerMessage) {
  if (answer.type !== "accepted") return answer;
  const { createdAt: _time, ...bid } = answer.bid;
  return { ...answer, bid };
}

const burst = fc.array(
  fc.record({
    bidderName: fc.constantFrom("Ann", "Bo", "ann", BLOCKED, "tRoLl", "shit", "visit nothing.store", "Zoë"),
    // $10.00 and the smallest amount that wins after it: equal and just-winning bids in one burst.
    cents: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.constantFrom(1_000, modelNextWinningCents(1_000), 2_000)),
  }),
  { minLength: 1, maxLength: 24 },
);

describe("group commit through the bid desk (PostgreSQL)", () => {
  it(
    "answers every bid of a burst exactly as placing them one per transaction does",
    async () => {
      const batched = await freshStoreForThisTest("postgres");
      const single = await freshStoreForThisTest("postgres");
      let largestBatch = 0;
      await fc.assert(
        fc.asyncProperty(burst, burst, async (first, second) => {
          await reset(batched.location, batched.store);
          await reset(single.location, single.store);
          const withBatching = deskOver(batched.store, true);
          const oneByOne = deskOver(single.store, false);
          // Two bursts: the second arrives while the first's transactions are still in flight.
          for (const bids of [first, second]) {
            const place = (desk: typeof withBatching.desk) =>
              Promise.all(
                bids.map((bid, index) =>
                  desk.place(
                    { type: "bid", requestId: `r${index}`, bidderName: bid.bidderName, amount: bid.cents / 100 },
                    ADDRESS,
                  ),
                ),
              );
            const [answers, expected] = await Promise.all([place(withBatching.desk), place(oneByOne.desk)]);
            expect(answers.map(comparable)).toEqual(expected.map(comparable));
          }
          expect(Math.max(...oneByOne.sizes)).toBe(1);
          largestBatch = Math.max(largestBatch, ...withBatching.sizes);
          const stored = async (store: BidStore) =>
            (await store.view(100)).bids.map(({ createdAt: _time, ...bid }) => bid);
          expect(await stored(batched.store)).toEqual(await stored(single.store));
        }),
        seededRuns(20_261_123, 40),
      );
      // The bursts did go to the database in batches, not one by one.
      expect(largestBatch).toBeGreaterThan(1);
    },
    scaled(240_000),
  );

  it("notifies every accepted bid of a batch once, in id order, after its one commit", async () => {
    const { store } = await freshStoreForThisTest("postgres");
    const heard: BidNotice[] = [];
    store.onBid((notice) => heard.push(notice));
    const outcomes = await store.placeBids([
      { bidderName: "Ann", amountCents: 100 },
      { bidderName: "Bo", amountCents: 100 },
      { bidderName: "Bo", amountCents: 300 },
      { bidderName: "Di", amountCents: 400 },
      { bidderName: "Cy", amountCents: 200 },
      { bidderName: "Cy", amountCents: 500 },
    ]);
    expect(outcomes.map((outcome) => outcome.accepted || outcome.code)).toEqual([
      true,
      "too_low",
      true,
      true,
      "too_low",
      true,
    ]);
    const accepted = outcomes.flatMap((outcome) => (outcome.accepted ? [outcome] : []));
    await waitFor("every accepted bid heard", () => heard.length >= accepted.length);
    expect(heard.map((notice) => notice.bid)).toEqual(accepted.map((outcome) => outcome.bid));
    expect(heard.map((notice) => notice.bidders)).toEqual([1, 2, 3, 4]);
  });

  it("places a batch the table refused bid by bid: only the refused bid fails, the rest is stored and answered", async () => {
    const { store } = await freshStoreForThisTest("postgres");
    const batcher = createBidBatcher({ store });
    // Each amount wins after the one before.
    const [firstCents, annCents, refusedCents, boCents] = modelWinningAmounts(4) as [number, number, number, number];
    // Holds the next ones back into one batch.
    const first = batcher.place({ bidderName: "First", amountCents: firstCents });
    // 41 code points: the service's rules never send it, the table's constraint refuses it.
    const answers = [
      { bidderName: "Ann", amountCents: annCents },
      { bidderName: "x".repeat(41), amountCents: refusedCents },
      { bidderName: "Bo", amountCents: boCents },
    ].map((bid) =>
      batcher.place(bid).then(
        (outcome) => outcome.accepted,
        (error: { code?: string }) => error.code,
      ),
    );
    expect((await first).accepted).toBe(true);
    expect(await Promise.all(answers)).toEqual([true, "23514", true]);
    const view = await store.view(10);
    expect(view.bids.map((bid) => [bid.bidderName, bid.amountCents])).toEqual([
      ["Bo", boCents],
      ["Ann", annCents],
      ["First", firstCents],
    ]);
    expect(view.bidders).toBe(3);
  });
});
