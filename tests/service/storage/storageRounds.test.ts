/**
 * Rounds in the store, on both backends (docs/design.md#6b, sql/003_rounds.sql): the first bid opens a
 * round that ends a configured number of seconds later, a bid in the soft-close window moves the
 * end, the end is recorded once (by a settlement or by the bid that opens the next round) and
 * announced in order with the bids, each closed round's winner is its highest visible bid, rounds
 * off is one endless round, and a database from before rounds keeps its bids as round 1.
 * Rounds are real and short (1 to 3 s of the database's clock); every wait is on a condition.
 */
import { describe, expect, it } from "vitest";
import { nameKey } from "../../../service/names/nameKey.ts";
import { readMigrations } from "../../../service/storage/migrations.ts";
import { openPgliteStore } from "../../../service/storage/pglite.ts";
import { openPostgresStore } from "../../../service/storage/postgres.ts";
import type {
  BidStore,
  ModerationRequest,
  PlaceBidOutcome,
  RoundSettings,
  StoredBid,
} from "../../../service/storage/types.ts";
import { modelNextWinningCents } from "../harness/auctionModel.ts";
import { migrateAsReleased, releaseAt } from "../harness/releases.ts";
import {
  BACKENDS,
  type Backend,
  cleanUpAfter,
  createTestDataDir,
  ISO_UTC_MILLIS,
  locationForThisTest,
  storeForThisTest,
  storeTestOn,
  type TestLocation,
  testLogger,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

const SESSION = "session-rounds";
/** Longest wait for a round's end: the rounds here last at most a few seconds. */
const ROUND_END_WAIT_MS = 10_000;

type AcceptedOutcome = Extract<PlaceBidOutcome, { accepted: true }>;

function accepted(outcome: PlaceBidOutcome): AcceptedOutcome {
  if (!outcome.accepted) throw new Error(`bid refused (${outcome.code}), highest ${outcome.highestCents}`);
  return outcome;
}

/** An ISO time `seconds` later, as the database writes it (UTC, milliseconds). */
function plusSeconds(iso: string, seconds: number): string {
  return new Date(Date.parse(iso) + seconds * 1000).toISOString();
}

/**
 * Places the bid that opens round `round` in an auction nothing was moderated in, and checks all the
 * store answers: the round's first bidder, its end `roundSeconds` after this bid, and
 * `closedRoundBids`, the bids of the round before when this bid recorded its end.
 */
async function placeRoundOpener(
  store: BidStore,
  bidderName: string,
  amountCents: number,
  { round, roundSeconds, closedRoundBids }: { round: number; roundSeconds: number; closedRoundBids: number | null },
): Promise<AcceptedOutcome> {
  const opener = accepted(await store.placeBid(bidderName, amountCents));
  expect(opener).toEqual({
    accepted: true,
    bid: { id: expect.any(Number), bidderName, amountCents, createdAt: opener.bid.createdAt },
    bidders: 1,
    moderation: 0,
    round,
    endsAt: plusSeconds(opener.bid.createdAt, roundSeconds),
    closedRoundBids,
  });
  return opener;
}

function hide(bidId: number): ModerationRequest {
  return { action: "hide", bidId, reason: null, sessionId: SESSION };
}

function restore(bidId: number): ModerationRequest {
  return { action: "restore", bidId, reason: null, sessionId: SESSION };
}

function winner(round: number, bid: StoredBid, endedAt: string) {
  return { round, bid, endedAt };
}

/** Waits, without settling anything, until the database's clock has reached `iso`. */
async function untilDatabaseClockReaches(store: BidStore, iso: string): Promise<void> {
  await waitFor(
    `the database's clock to reach ${iso}`,
    async () => Date.parse((await store.view(0)).now) >= Date.parse(iso),
    ROUND_END_WAIT_MS,
  );
}

type HeardNotice = { bid: number; round: number; endsAt: string | null } | { roundClosed: number };

/** Every bid and round-end notice of the store, in the order heard. */
function hearNotices(store: BidStore): HeardNotice[] {
  const heard: HeardNotice[] = [];
  store.onBid((notice) => heard.push({ bid: notice.bid.id, round: notice.round, endsAt: notice.endsAt }));
  store.onRoundClosed((notice) => heard.push({ roundClosed: notice.round }));
  return heard;
}

/**
 * Waits for the notice of `opener`, the bid that opened round 2, then checks all that was heard:
 * `round1Bids` with round 1's end, that end once, then `opener`.
 */
async function expectHeardRoundChange(
  heard: HeardNotice[],
  {
    round1Bids,
    round1EndsAt,
    opener,
  }: { round1Bids: AcceptedOutcome[]; round1EndsAt: string; opener: AcceptedOutcome },
) {
  await waitFor(`the notice of bid ${opener.bid.id}`, () =>
    heard.some((notice) => "bid" in notice && notice.bid === opener.bid.id),
  );
  expect(heard).toEqual([
    ...round1Bids.map(({ bid }) => ({ bid: bid.id, round: 1, endsAt: round1EndsAt })),
    { roundClosed: 1 },
    { bid: opener.bid.id, round: 2, endsAt: opener.endsAt },
  ]);
}

describe.each(BACKENDS)("rounds in the store on %s", (backend) => {
  // Each test opens its stores with the round lengths it is about.
  const storeTest = storeTestOn(backend);

  storeTest("opens round 1 with the first accepted bid, ending roundSeconds after that bid", async ({ location }) => {
    const auction = await storeForThisTest(location, { rounds: { roundSeconds: 2, softCloseSeconds: 0 } });
    expect(await auction.view(10)).toMatchObject({
      bids: [],
      round: { number: 0, endsAt: null, closed: false },
      pastWinners: [],
      now: expect.stringMatching(ISO_UTC_MILLIS),
    });

    const first = await placeRoundOpener(auction, "Alice", 100, { round: 1, roundSeconds: 2, closedRoundBids: null });
    const endsAt = first.endsAt;
    // A later bid of the same round, far from the end: the end stays.
    const second = accepted(await auction.placeBid("Bob", 200));
    expect(second).toMatchObject({ round: 1, endsAt, closedRoundBids: null, bidders: 2 });

    const view = await auction.view(10);
    expect(view).toMatchObject({
      bids: [second.bid, first.bid],
      highest: second.bid,
      bidders: 2,
      round: { number: 1, endsAt, closed: false },
      pastWinners: [],
      now: expect.stringMatching(ISO_UTC_MILLIS),
    });
    expect(Date.parse(view.now)).toBeGreaterThanOrEqual(Date.parse(second.bid.createdAt));
  });

  storeTest(
    "settles nothing before the end, then records the end once with the round's bid count",
    async ({ location }) => {
      const auction = await storeForThisTest(location, { rounds: { roundSeconds: 2, softCloseSeconds: 0 } });
      const heard = hearNotices(auction);
      expect(await auction.settleRound()).toEqual({
        number: 0,
        endsAt: null,
        closed: false,
        closedRoundBids: null,
        now: expect.stringMatching(ISO_UTC_MILLIS),
      });

      const alice = accepted(await auction.placeBid("Alice", 100));
      const bob = accepted(await auction.placeBid("Bob", 200));
      const endsAt = alice.endsAt ?? "";
      const early = await auction.settleRound();
      expect(early).toEqual({ number: 1, endsAt, closed: false, closedRoundBids: null, now: early.now });
      expect(Date.parse(early.now)).toBeLessThan(Date.parse(endsAt));
      expect((await auction.view(10)).round).toEqual({ number: 1, endsAt, closed: false });

      await untilDatabaseClockReaches(auction, endsAt);
      const settled = await auction.settleRound();
      expect(settled).toEqual({ number: 1, endsAt, closed: true, closedRoundBids: 2, now: settled.now });
      expect(Date.parse(settled.now)).toBeGreaterThanOrEqual(Date.parse(endsAt));
      // Another instance's timer firing later finds it recorded.
      const again = await auction.settleRound();
      expect(again).toEqual({ number: 1, endsAt, closed: true, closedRoundBids: null, now: again.now });

      // Until the next bid the auction shows the closed round, its winner among the past ones.
      expect(await auction.view(10)).toMatchObject({
        bids: [bob.bid, alice.bid],
        highest: bob.bid,
        round: { number: 1, endsAt, closed: true },
        pastWinners: [winner(1, bob.bid, endsAt)],
      });

      // The end was recorded already: the bid that opens round 2 recorded none.
      const carol = accepted(await auction.placeBid("Carol", 50));
      expect(carol).toMatchObject({ round: 2, closedRoundBids: null, bidders: 1 });
      // Carol's notice comes after anything the two settlements sent: exactly one end was heard.
      await expectHeardRoundChange(heard, { round1Bids: [alice, bob], round1EndsAt: endsAt, opener: carol });
    },
  );

  storeTest(
    "accepts a bid after the end into round 2 even below round 1's highest, and that bid records round 1's end",
    async ({ location }) => {
      const auction = await storeForThisTest(location, { rounds: { roundSeconds: 1, softCloseSeconds: 0 } });
      const heard = hearNotices(auction);
      const alice = accepted(await auction.placeBid("Alice", 500));
      const bob = accepted(await auction.placeBid("Bob", 1_000));
      const round1EndsAt = alice.endsAt ?? "";

      await untilDatabaseClockReaches(auction, round1EndsAt);
      const carol = await placeRoundOpener(auction, "Carol", 100, { round: 2, roundSeconds: 1, closedRoundBids: 2 });
      expect(Date.parse(carol.bid.createdAt)).toBeGreaterThanOrEqual(Date.parse(round1EndsAt));
      // Judged against round 2's highest from here on.
      expect(await auction.placeBid("Dave", 100)).toMatchObject({
        accepted: false,
        code: "too_low",
        highestCents: 100,
        round: 2,
        endsAt: carol.endsAt,
        closedRoundBids: null,
      });

      const view = await auction.view(10);
      expect(view).toMatchObject({
        bids: [carol.bid],
        highest: carol.bid,
        bidders: 1,
        lastId: carol.bid.id,
        round: { number: 2, endsAt: carol.endsAt, closed: false },
        pastWinners: [winner(1, bob.bid, round1EndsAt)],
      });
      // A resume from before round 2 gets round 2's bids only.
      expect((await auction.bidsAfter(0, 10)).bids).toEqual([carol.bid]);
      expect(await auction.winners(10)).toEqual([winner(1, bob.bid, round1EndsAt)]);

      await expectHeardRoundChange(heard, { round1Bids: [alice, bob], round1EndsAt, opener: carol });
    },
  );

  storeTest(
    "moves the end to a bid's time plus the soft close when less than the soft close was left, and only then",
    async ({ location }) => {
      const auction = await storeForThisTest(location, { rounds: { roundSeconds: 3, softCloseSeconds: 2 } });
      const alice = accepted(await auction.placeBid("Alice", 100));
      const endsAt = alice.endsAt ?? "";
      expect(endsAt).toBe(plusSeconds(alice.bid.createdAt, 3));

      // About 3 s left, more than the soft close: the end stays.
      const bob = accepted(await auction.placeBid("Bob", 200));
      expect(Date.parse(endsAt) - Date.parse(bob.bid.createdAt)).toBeGreaterThan(2_000);
      expect(bob).toMatchObject({ round: 1, endsAt });

      // About 1 s left, less than the soft close: the end becomes Carol's time plus 2 s.
      await untilDatabaseClockReaches(auction, plusSeconds(endsAt, -1));
      const carol = accepted(await auction.placeBid("Carol", 300));
      expect(carol.round).toBe(1);
      expect(Date.parse(endsAt) - Date.parse(carol.bid.createdAt)).toBeLessThan(2_000);
      const movedEnd = plusSeconds(carol.bid.createdAt, 2);
      expect(carol).toMatchObject({ round: 1, endsAt: movedEnd, closedRoundBids: null });
      expect(Date.parse(movedEnd)).toBeGreaterThan(Date.parse(endsAt));
      expect((await auction.view(10)).round).toEqual({ number: 1, endsAt: movedEnd, closed: false });

      // The first end passes (about a second before the moved one) and the round goes on.
      await untilDatabaseClockReaches(auction, endsAt);
      const goingOn = await auction.settleRound();
      expect(Date.parse(goingOn.now)).toBeLessThan(Date.parse(movedEnd));
      expect(goingOn).toMatchObject({ number: 1, endsAt: movedEnd, closed: false, closedRoundBids: null });
      await untilDatabaseClockReaches(auction, movedEnd);
      expect(await auction.settleRound()).toMatchObject({
        number: 1,
        endsAt: movedEnd,
        closed: true,
        closedRoundBids: 3,
      });
      expect(await auction.winners(10)).toEqual([winner(1, carol.bid, movedEnd)]);
    },
  );

  storeTest(
    "hands a round with a hidden winning bid to its next visible bid, and drops a round whose bids are all hidden",
    async ({ location }) => {
      const auction = await storeForThisTest(location, { rounds: { roundSeconds: 1, softCloseSeconds: 0 } });
      const alice = accepted(await auction.placeBid("Alice", 100));
      const bob = accepted(await auction.placeBid("Bob", 200));
      await untilDatabaseClockReaches(auction, alice.endsAt ?? "");
      const carol = accepted(await auction.placeBid("Carol", 50));
      const dave = accepted(await auction.placeBid("Dave", modelNextWinningCents(50)));
      expect([carol.round, dave.round, carol.closedRoundBids]).toEqual([2, 2, 2]);
      await untilDatabaseClockReaches(auction, carol.endsAt ?? "");
      expect(await auction.settleRound()).toMatchObject({ number: 2, closed: true, closedRoundBids: 2 });

      const round1End = alice.endsAt ?? "";
      const round2End = carol.endsAt ?? "";
      expect(await auction.winners(10)).toEqual([winner(2, dave.bid, round2End), winner(1, bob.bid, round1End)]);

      await auction.moderate(hide(bob.bid.id));
      const bobHidden = [winner(2, dave.bid, round2End), winner(1, alice.bid, round1End)];
      expect(await auction.winners(10)).toEqual(bobHidden);
      expect((await auction.view(10)).pastWinners).toEqual(bobHidden);

      // The current round, closed, is handed over the same way.
      await auction.moderate(hide(dave.bid.id));
      expect(await auction.winners(10)).toEqual([winner(2, carol.bid, round2End), winner(1, alice.bid, round1End)]);

      await auction.moderate(hide(alice.bid.id));
      expect(await auction.winners(10)).toEqual([winner(2, carol.bid, round2End)]);
      expect((await auction.view(10)).pastWinners).toEqual([winner(2, carol.bid, round2End)]);
      expect(await auction.winners(1)).toEqual([winner(2, carol.bid, round2End)]);

      await auction.moderate(restore(bob.bid.id));
      expect(await auction.winners(10)).toEqual([winner(2, carol.bid, round2End), winner(1, bob.bid, round1End)]);
    },
  );

  storeTest(
    "with rounds off never ends the round, and makes an open timed round endless at its next bid or settlement",
    async ({ location }) => {
      let auction = await storeForThisTest(location, { rounds: { roundSeconds: 0, softCloseSeconds: 5 } });
      // PGlite allows one store open on a location: each reopen closes the last.
      const reopen = async (rounds: RoundSettings) => {
        await auction.close();
        auction = await storeForThisTest(location, { rounds });
      };
      /** A settlement finds round 1 endless, and the view says so. */
      const expectEndlessRound1 = async () => {
        expect(await auction.settleRound()).toMatchObject({
          number: 1,
          endsAt: null,
          closed: false,
          closedRoundBids: null,
        });
        expect((await auction.view(10)).round).toEqual({ number: 1, endsAt: null, closed: false });
      };

      const alice = accepted(await auction.placeBid("Alice", 100));
      expect(alice).toMatchObject({ round: 1, endsAt: null, closedRoundBids: null });
      // No soft close without an end.
      expect(accepted(await auction.placeBid("Bob", 200))).toMatchObject({ round: 1, endsAt: null });
      await expectEndlessRound1();

      // Rounds on: the endless round gets its end, counted from when it opened.
      await reopen({ roundSeconds: 3_600, softCloseSeconds: 0 });
      const round1End = plusSeconds(alice.bid.createdAt, 3_600);
      expect(accepted(await auction.placeBid("Carol", 300))).toMatchObject({
        round: 1,
        endsAt: round1End,
        closedRoundBids: null,
      });

      // Rounds off again: a settlement makes it endless...
      await reopen({ roundSeconds: 0, softCloseSeconds: 0 });
      await expectEndlessRound1();

      // ...and so does a bid.
      await reopen({ roundSeconds: 3_600, softCloseSeconds: 0 });
      expect(await auction.settleRound()).toMatchObject({ number: 1, endsAt: round1End, closed: false });
      await reopen({ roundSeconds: 0, softCloseSeconds: 0 });
      const dave = accepted(await auction.placeBid("Dave", 400));
      expect(dave).toMatchObject({ round: 1, endsAt: null, closedRoundBids: null, bidders: 4 });
      expect(await auction.view(10)).toMatchObject({
        bids: [dave.bid, expect.anything(), expect.anything(), alice.bid],
        round: { number: 1, endsAt: null, closed: false },
        pastWinners: [],
      });

      await auction.close();
      const stored = await withDirectSql(location, (query) =>
        query("SELECT number, ends_at, closed_at FROM auction_rounds ORDER BY number"),
      );
      expect(stored.map((row) => [Number(row.number), row.ends_at, row.closed_at])).toEqual([[1, null, null]]);
    },
  );
});

/** A location with no migrations applied yet, on which a store may open with a chosen list; removed when the test ends. */
async function emptyLocationForThisTest(backend: Backend): Promise<TestLocation> {
  if (backend === "postgres") return locationForThisTest("postgres");
  const data = await createTestDataDir({ empty: true });
  cleanUpAfter(() => data.remove());
  return { backend, dataDir: data.dir, remove: data.remove };
}

/** A store with only the migrations `versions` picks, closed when the test ends. */
async function openWithMigrations(
  location: TestLocation,
  versions: (version: number) => boolean,
  rounds?: RoundSettings,
): Promise<BidStore> {
  const migrations = (await readMigrations()).filter((migration) => versions(migration.version));
  const logger = testLogger();
  const store = await (location.databaseUrl
    ? openPostgresStore({ databaseUrl: location.databaseUrl, logger, migrations, poolSize: 2, rounds })
    : openPgliteStore({ dataDir: location.dataDir, logger, migrations, rounds }));
  cleanUpAfter(() => store.close());
  return store;
}

describe.each(BACKENDS)("a database from before rounds on %s", (backend) => {
  it("keeps its bids as round 1, open since the first of them, which a short round's settlement closes and the next bid follows", async () => {
    const location = await emptyLocationForThisTest(backend);
    // Migrations 001 and 002 as 002 shipped them, and bids placed as the service placed them then.
    await migrateAsReleased(location, releaseAt(2));
    const oldBids = await withDirectSql(location, async (query) => {
      const placed: StoredBid[] = [];
      for (const [name, cents] of [
        ["Alice", 100],
        ["Bob", 200],
        ["Alice", 300],
        ["Carol", 250],
      ] as const) {
        const [row] = await query("SELECT * FROM place_auction_bid($1, $2, $3)", [name, nameKey(name), cents]);
        if (row?.outcome === "accepted") {
          placed.push({
            id: Number(row.id),
            bidderName: String(row.bidder_name),
            amountCents: Number(row.amount_cents),
            createdAt: String(row.created_at),
          });
        }
      }
      return placed;
    });
    expect(oldBids.map((bid) => [bid.bidderName, bid.amountCents])).toEqual([
      ["Alice", 100],
      ["Bob", 200],
      ["Alice", 300],
    ]);
    const [first, , highest] = oldBids as [StoredBid, StoredBid, StoredBid];

    // Every migration, rounds of an hour: the old bids are round 1, as they stood.
    const hourRounds = await openWithMigrations(location, () => true, { roundSeconds: 3_600, softCloseSeconds: 0 });
    expect(await hourRounds.view(10)).toMatchObject({
      bids: [...oldBids].reverse(),
      highest,
      bidders: 2,
      moderation: 0,
      lastId: highest.id,
      round: { number: 1, endsAt: null, closed: false },
      pastWinners: [],
    });
    expect((await hourRounds.bidsAfter(0, 10)).bids).toEqual(oldBids);
    await hourRounds.close();
    const stored = await withDirectSql(location, async (query) => ({
      rounds: await query(
        "SELECT number, auction_time_text(opened_at) AS opened_at, ends_at, closed_at FROM auction_rounds",
      ),
      bidRounds: await query("SELECT round_number FROM auction_bids ORDER BY id"),
      state: await query("SELECT round_number, (high_amount * 100)::int AS high, bidder_count FROM auction_state"),
    }));
    expect(stored.rounds.map((row) => [Number(row.number), row.opened_at, row.ends_at, row.closed_at])).toEqual([
      [1, first.createdAt, null, null],
    ]);
    expect(stored.bidRounds.map((row) => Number(row.round_number))).toEqual([1, 1, 1]);
    expect(stored.state.map((row) => [Number(row.round_number), row.high, row.bidder_count])).toEqual([[1, 300, 2]]);

    // Reopened with 1 s rounds once the first old bid is over 1 s old: round 1 ended at opened_at + 1 s.
    const store = await openWithMigrations(location, () => true, { roundSeconds: 1, softCloseSeconds: 0 });
    const heard = hearNotices(store);
    const round1End = plusSeconds(first.createdAt, 1);
    await untilDatabaseClockReaches(store, round1End);
    const settled = await store.settleRound();
    expect(settled).toEqual({ number: 1, endsAt: round1End, closed: true, closedRoundBids: 3, now: settled.now });
    expect(await store.winners(10)).toEqual([winner(1, highest, round1End)]);

    const next = accepted(await store.placeBid("Dave", 50));
    expect(next).toMatchObject({
      round: 2,
      closedRoundBids: null,
      bidders: 1,
      endsAt: plusSeconds(next.bid.createdAt, 1),
    });
    expect(await store.view(10)).toMatchObject({
      bids: [next.bid],
      highest: next.bid,
      bidders: 1,
      round: { number: 2, endsAt: next.endsAt, closed: false },
      pastWinners: [winner(1, highest, round1End)],
    });
    await expectHeardRoundChange(heard, { round1Bids: [], round1EndsAt: round1End, opener: next });
  });
});
