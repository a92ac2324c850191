/**
 * The auction's storage on both backends, against real databases: migrations, the constraints
 * that hold the bid rules, the atomic "strictly above" insert, reads, and notifications.
 */
import { describe, expect, it } from "vitest";
import { nameKey } from "../../../service/names/nameKey.ts";
import { readMigrations } from "../../../service/storage/migrations.ts";
import { type BidNotice, type PlaceBidOutcome, StoreUnavailableError } from "../../../service/storage/types.ts";
import {
  BACKENDS,
  ISO_UTC_MILLIS,
  locationForThisTest,
  NO_BIDS,
  placeEachAlone,
  storeForThisTest,
  storeTestOn,
  testLogger,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

// These stores run with rounds off (AUCTION_ROUND_SECONDS=0): every bid is in one endless round 1.
const IN_ENDLESS_ROUND_1 = { round: 1, endsAt: null, closedRoundBids: null };
const ENDLESS_ROUND_1_VIEW = {
  round: { number: 1, endsAt: null, closed: false },
  pastWinners: [],
  now: expect.stringMatching(ISO_UTC_MILLIS),
};
const BEFORE_ROUND_1 = { ...ENDLESS_ROUND_1_VIEW, round: { number: 0, endsAt: null, closed: false } };

function acceptedBid(outcome: PlaceBidOutcome) {
  if (!outcome.accepted) throw new Error(`bid refused, highest ${outcome.highestCents}`);
  return outcome.bid;
}

describe.each(BACKENDS)("auction storage on %s", (backend) => {
  const storeTest = storeTestOn(backend);

  storeTest("records each migration once and applies nothing on reopen", async ({ location, store }) => {
    await store.close();
    const lines: Record<string, unknown>[] = [];
    const reopened = await storeForThisTest(location, { logger: testLogger((line) => lines.push(line)) });
    expect(lines.filter((line) => line.msg === "migration applied")).toEqual([]);
    await reopened.close();
    const recorded = await withDirectSql(location, (query) =>
      query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version"),
    );
    // Every file of sql/, in order (readMigrations is the runner's own reading of them).
    expect(recorded.map((row) => [Number(row.version), row.name])).toEqual(
      (await readMigrations()).map((migration) => [migration.version, migration.name]),
    );
    expect(recorded[0]?.applied_at).toBeTruthy();
  });

  storeTest("refuses rows that break the bid rules, even inserted directly", async ({ location, store }) => {
    await store.close();
    const refused = async (
      query: (text: string, params?: unknown[]) => Promise<unknown>,
      name: string,
      amount: string,
    ) =>
      query("INSERT INTO auction_bids (bidder_name, amount, round_number) VALUES ($1, $2::numeric, 1)", [
        name,
        amount,
      ]).then(
        () => `stored ${JSON.stringify(name)} ${amount}`,
        (error: Error) => error.message,
      );
    await withDirectSql(location, async (query) => {
      // Every bid belongs to a round (sql/003_rounds.sql): these rows to round 1.
      await query("INSERT INTO auction_rounds (number, opened_at) VALUES (1, now())");
      const badNames = [
        "",
        "x".repeat(41),
        "bell\u0007",
        "tab\tinside",
        "zero\u200Bwidth",
        // U+200D joins two emoji only (sql/functions/45_bidder_names.sql): alone, between letters, first, last, doubled.
        "\u200D",
        "zero\u200Djoiner",
        "\u200D\u{1F680}",
        "\u{1F469}\u200D",
        "\u{1F469}\u200D\u200D\u{1F680}",
        "\u{1F469}\u200Da",
        "right\u202Eleft",
        " lead",
        "trail ",
        "nbsp\u00A0",
        "\u3000ideographic",
      ];
      for (const name of badNames) {
        expect(await refused(query, name, "1.00"), JSON.stringify(name)).toMatch(
          /violates check constraint "auction_bids_name/,
        );
      }
      // Names that show nothing, refused by new rows' trigger (sql/functions/45_bidder_names.sql).
      for (const name of ["\u3164", "\u2800\u2800", "\u115f\u1160", "\u0301"]) {
        expect(await refused(query, name, "1.00"), JSON.stringify(name)).toMatch(/must show something/);
      }
      for (const amount of ["0", "-1.00", "1000000000.01"]) {
        expect(await refused(query, "ok", amount), amount).toMatch(
          /violates check constraint "auction_bids_amount_range"/,
        );
      }
      expect(await refused(query, "ok", "10000000000.00")).toMatch(/numeric field overflow/);

      // The boundaries themselves are fine: 40 code points (emoji are 2 UTF-16 units each), the maximum.
      const fortyEmoji = "\u{1F4B8}".repeat(40);
      await query(
        "INSERT INTO auction_bids (bidder_name, amount, round_number) VALUES ($1, 1000000000.00, 1), ('Zoë and Chloé', 0.01, 1)",
        [fortyEmoji],
      );
      // Emoji joined by U+200D, with U+FE0F and a skin tone before a joiner.
      const joined = [
        "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}",
        "\u{1F3F3}\uFE0F\u200D\u{1F308}",
        "\u{1F469}\u{1F3FD}\u200D\u{1F4BB}",
      ];
      for (const name of joined) {
        await query("INSERT INTO auction_bids (bidder_name, amount, round_number) VALUES ($1, 0.02, 1)", [name]);
      }
      // A third decimal never reaches the table: the numeric(12,2) scale rounds it.
      await query("INSERT INTO auction_bids (bidder_name, amount, round_number) VALUES ('three decimals', 1.005, 1)");
      const rows = await query("SELECT bidder_name, amount::text AS amount FROM auction_bids ORDER BY id");
      expect(rows.map((row) => [row.bidder_name, row.amount])).toEqual([
        [fortyEmoji, "1000000000.00"],
        ["Zoë and Chloé", "0.01"],
        ...joined.map((name) => [name, "0.02"]),
        ["three decimals", "1.01"],
      ]);
    });
  });

  storeTest(
    "keeps a name stored before names had to show something, and lets the operator hide it",
    async ({ location, store: first }) => {
      await first.close();
      // A bid of a blank name, as the service stored it before the visible-name trigger.
      await withDirectSql(location, async (query) => {
        await query("ALTER TABLE auction_bids DISABLE TRIGGER auction_bids_name_characters");
        await query("SELECT * FROM place_auction_bid('\u3164', NULL, 100, 0, 0)");
        await query("ALTER TABLE auction_bids ENABLE TRIGGER auction_bids_name_characters");
      });
      const store = await storeForThisTest(location);
      const [blank] = (await store.view(50)).bids;
      expect(blank?.bidderName).toBe("\u3164");
      const hide = { action: "hide", bidId: blank?.id ?? 0, reason: null, sessionId: "s" } as const;
      expect(await store.moderate(hide)).toMatchObject({ outcome: "done" });
      expect((await store.view(50)).bids).toEqual([]);
    },
  );

  storeTest("accepts only bids strictly above the highest, and says what the highest is", async ({ store }) => {
    const first = acceptedBid(await store.placeBid("Alice", 1));
    expect(first).toEqual({
      id: expect.any(Number),
      bidderName: "Alice",
      amountCents: 1,
      createdAt: expect.stringMatching(ISO_UTC_MILLIS),
    });
    expect(Math.abs(Date.parse(first.createdAt) - Date.now())).toBeLessThan(60_000);

    const second = acceptedBid(await store.placeBid("Bob", 1050));
    expect(second.id).toBeGreaterThan(first.id);
    expect(await store.placeBid("Carol", 1050)).toEqual({
      accepted: false,
      code: "too_low",
      highestCents: 1050,
      moderation: 0,
      ...IN_ENDLESS_ROUND_1,
    });
    expect(await store.placeBid("Carol", 999)).toEqual({
      accepted: false,
      code: "too_low",
      highestCents: 1050,
      moderation: 0,
      ...IN_ENDLESS_ROUND_1,
    });
    const top = acceptedBid(await store.placeBid("Carol", 100_000_000_000));
    expect(top.amountCents).toBe(100_000_000_000);
    expect(await store.placeBid("Dave", 100_000_000_000)).toEqual({
      accepted: false,
      code: "too_low",
      highestCents: 100_000_000_000,
      moderation: 0,
      ...IN_ENDLESS_ROUND_1,
    });

    const view = await store.view(50);
    expect(view.bids.map((bid) => [bid.bidderName, bid.amountCents])).toEqual([
      ["Carol", 100_000_000_000],
      ["Bob", 1050],
      ["Alice", 1],
    ]);
  });

  storeTest(
    "judges a placement by the increment and first bid's floor the call brings, and the previous release's calls by a cent",
    async ({ location, store: first }) => {
      await first.close();
      await withDirectSql(location, async (query) => {
        // A $1.00 increment and a 50-cent floor: no figure the service uses today, so none the SQL could hold.
        const rule = [100, 50];
        const alone = async (name: string, cents: number, { previousRelease = false } = {}) => {
          const [row] = previousRelease
            ? await query("SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, 0, 0)", [
                name,
                nameKey(name),
                cents,
              ])
            : await query(
                "SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, 0, 0, $4::bigint, $5::bigint)",
                [name, nameKey(name), cents, ...rule],
              );
          return [row?.outcome, Number(row?.highest_cents)];
        };
        const batch = async (bids: [string, number][], { previousRelease = false } = {}) => {
          const json = JSON.stringify(bids.map(([name, cents]) => ({ name, key: nameKey(name), cents })));
          const rows = previousRelease
            ? await query("SELECT * FROM place_auction_bids($1::text, 0, 0)", [json])
            : await query("SELECT * FROM place_auction_bids($1::text, 0, 0, $2::bigint, $3::bigint)", [json, ...rule]);
          return rows.map((row) => row.outcome);
        };
        expect(await alone("Alice", 49)).toEqual(["too_low", 0]);
        expect(await alone("Alice", 50)).toEqual(["accepted", 50]);
        expect(await alone("Bob", 149)).toEqual(["too_low", 50]);
        expect(await alone("Bob", 150)).toEqual(["accepted", 150]);
        expect(
          await batch([
            ["Carol", 249],
            ["Carol", 250],
            ["Dave", 349],
            ["Dave", 350],
          ]),
        ).toEqual(["too_low", "accepted", "too_low", "accepted"]);
        // The previous release's calls keep its rule: any amount above the highest.
        expect(await alone("Eve", 350, { previousRelease: true })).toEqual(["too_low", 350]);
        expect(await alone("Eve", 351, { previousRelease: true })).toEqual(["accepted", 351]);
        expect(
          await batch(
            [
              ["Fay", 351],
              ["Fay", 352],
            ],
            { previousRelease: true },
          ),
        ).toEqual(["too_low", "accepted"]);
      });
    },
  );

  storeTest("counts distinct names exactly as stored, refused bids not included", async ({ store }) => {
    const outcomes = await placeEachAlone(store, [
      ["alice", 100],
      ["bob", 200],
      ["alice", 300],
      ["Alice", 400],
      ["carol", 400],
      ["Émile", 500],
    ]);
    expect(outcomes.map((outcome) => (outcome.accepted ? outcome.bidders : "refused"))).toEqual([
      1,
      2,
      2,
      3,
      "refused",
      4,
    ]);
    expect((await store.view(10)).bidders).toBe(4);
    expect((await store.bidsAfter(0, 10)).bidders).toBe(4);
  });

  storeTest("shows an empty auction before the first bid", async ({ store }) => {
    expect(await store.view(50)).toEqual({ ...NO_BIDS, ...BEFORE_ROUND_1 });
    expect(await store.bidsAfter(0, 50)).toEqual({ ...NO_BIDS, ...BEFORE_ROUND_1 });
  });

  storeTest(
    "reads the newest bids newest first and the bids after an id oldest first, within limits",
    async ({ store }) => {
      const ids: number[] = [];
      for (let i = 1; i <= 6; i++) ids.push(acceptedBid(await store.placeBid(`bidder ${i % 3}`, i * 100)).id);

      const view = await store.view(4);
      expect(view.bids.map((bid) => bid.id)).toEqual(ids.slice(2).reverse());
      expect(view.highest).toEqual(view.bids[0]);
      expect(view.highest?.amountCents).toBe(600);
      expect(view.bidders).toBe(3);
      const noList = await store.view(0);
      expect(noList.bids).toEqual([]);
      expect(noList.highest?.id).toBe(ids[5]);

      const after = await store.bidsAfter(ids[1] ?? 0, 3);
      expect(after.bids.map((bid) => bid.id)).toEqual(ids.slice(2, 5));
      expect(after.bids.map((bid) => bid.amountCents)).toEqual([300, 400, 500]);
      expect(after.bidders).toBe(3);
      // Nothing after the newest: the highest still comes with the same read (a resume is one query).
      expect(await store.bidsAfter(ids[5] ?? 0, 10)).toEqual({
        bids: [],
        highest: view.highest,
        bidders: 3,
        moderation: 0,
        lastId: ids[5],
        blockedKeys: [],
        ...ENDLESS_ROUND_1_VIEW,
      });
      expect((await store.bidsAfter(ids[1] ?? 0, 1)).highest).toEqual(view.highest);
      expect((await store.bidsAfter(0, 100)).bids.map((bid) => bid.id)).toEqual(ids);
    },
  );

  storeTest("notifies every accepted bid once, in id order, with the bidder count", async ({ store }) => {
    const notices: BidNotice[] = [];
    const unsubscribe = store.onBid((notice) => notices.push(notice));
    const outcomes = await placeEachAlone(store, [
      ["a", 100],
      ["b", 50],
      ["b", 200],
      ["a", 200],
      ["c", 300],
    ]);
    const accepted = outcomes.flatMap((outcome) => (outcome.accepted ? [outcome] : []));
    await waitFor("3 notices", () => notices.length >= 3);
    expect(notices).toEqual(
      accepted.map(({ bid, bidders }) => ({ bid, bidders, moderation: 0, round: 1, endsAt: null })),
    );
    unsubscribe();
    await store.placeBid("d", 400);
    const last = (await store.view(1)).highest;
    expect(last?.amountCents).toBe(400);
    // Give a stray notice time to arrive (bounded), then check none did.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(notices).toHaveLength(3);
  });

  storeTest(
    "keeps the bids and the bidder count across a reopen, and refuses work once closed",
    async ({ location, store }) => {
      const bid = acceptedBid(await store.placeBid("Persistent Pat", 4200));
      await store.close();
      await expect(store.placeBid("Too Late", 5000)).rejects.toBeInstanceOf(StoreUnavailableError);
      const reopened = await storeForThisTest(location);
      expect(await reopened.view(10)).toEqual({
        bids: [bid],
        highest: bid,
        bidders: 1,
        moderation: 0,
        lastId: bid.id,
        blockedKeys: [],
        ...ENDLESS_ROUND_1_VIEW,
      });
      expect(await reopened.placeBid("Pat's rival", 4200)).toEqual({
        accepted: false,
        code: "too_low",
        highestCents: 4200,
        moderation: 0,
        ...IN_ENDLESS_ROUND_1,
      });
    },
  );

  storeTest("is ready while open", ({ store }) => {
    expect(store.isReady()).toBe(true);
    expect(store.backend).toBe(backend);
  });
});

describe("migrations on PostgreSQL", () => {
  it("are applied once when two instances start together on a new database", async () => {
    // A new PostgreSQL database: no migration applied yet.
    const location = await locationForThisTest("postgres");
    const lines: Record<string, unknown>[] = [];
    await Promise.all([
      storeForThisTest(location, { logger: testLogger((line) => lines.push(line)) }),
      storeForThisTest(location, { logger: testLogger((line) => lines.push(line)) }),
    ]);
    const migrations = await readMigrations();
    expect(lines.filter((line) => line.msg === "migration applied").map((line) => line.migration)).toEqual(
      migrations.map((migration) => migration.name),
    );
    const rows = await withDirectSql(location, (query) => query("SELECT count(*)::int AS n FROM schema_migrations"));
    expect(rows[0]?.n).toBe(migrations.length);
  });
});
