/**
 * The functions of sql/functions/ and their version in the database (docs/design.md#7), on both
 * backends: applied after the migrations of a new database, not again while the database holds
 * them, again over older ones or after a migration, and never over a newer release's.
 */
import postgres from "postgres";
import { beforeEach, describe, expect, it } from "vitest";
import { type FunctionSet, readFunctions } from "../../../service/storage/functions.ts";
import { type Migration, readMigrations } from "../../../service/storage/migrations.ts";
import { openPgliteStore } from "../../../service/storage/pglite.ts";
import { openPostgresStore } from "../../../service/storage/postgres.ts";
import { PLACE_BID_SQL, storeQueries } from "../../../service/storage/queries.ts";
import { type BidStore, ENDLESS_ROUNDS } from "../../../service/storage/types.ts";
import { migrateAsReleased, RELEASES } from "../harness/releases.ts";
import {
  BACKENDS,
  cleanUpAfter,
  type DirectQuery,
  databaseForThisTest,
  locationForThisTest,
  storeForThisTest,
  type TestLocation,
  testLogger,
  withDirectSql,
} from "../harness/stores.ts";

type Line = Record<string, unknown>;

/**
 * Release `release`'s functions: today's, and one more that names the release, so that a test can
 * ask the database whose bodies it holds.
 */
function release(today: FunctionSet, release: number): FunctionSet {
  const marker = {
    name: "90_release.sql",
    sql: `CREATE OR REPLACE FUNCTION auction_release() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT ${release} $$;`,
  };
  return { version: release, digest: `digest of release ${release}`, files: [...today.files, marker] };
}

async function heldRelease(query: DirectQuery): Promise<number> {
  return Number((await query("SELECT auction_release() AS release"))[0]?.release);
}

/** Each function's row version: CREATE OR REPLACE writes a new one even for the same body. */
async function functionRowVersions(query: DirectQuery): Promise<string> {
  const [row] = await query(
    `SELECT string_agg(p.oid::regprocedure::text || ' ' || p.xmin::text, ', ' ORDER BY p.oid::regprocedure::text) AS rows
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace`,
  );
  return String(row?.rows);
}

describe.each(BACKENDS)("the functions' version on %s", (backend) => {
  let location: TestLocation;
  let store: BidStore | undefined;
  let today: FunctionSet;
  let lines: Line[];

  async function open(functions: FunctionSet, migrations?: Migration[]): Promise<BidStore> {
    await store?.close();
    lines = [];
    const logger = testLogger((line) => lines.push(line));
    const options = { logger, functions, migrations: migrations ?? (await readMigrations()) };
    const opened = location.databaseUrl
      ? await openPostgresStore({ ...options, databaseUrl: location.databaseUrl, poolSize: 2 })
      : await openPgliteStore({ ...options, dataDir: location.dataDir });
    cleanUpAfter(() => opened.close());
    store = opened;
    return opened;
  }

  async function closeAnd<T>(work: (query: DirectQuery) => Promise<T>): Promise<T> {
    await store?.close();
    store = undefined;
    return withDirectSql(location, work);
  }

  const applied = () => lines.filter((line) => line.msg === "functions applied");

  beforeEach(async () => {
    store = undefined;
    location = await locationForThisTest(backend, { unmigrated: true });
    today = await readFunctions();
  });

  it("are applied to a new database after its migrations, with their version recorded", async () => {
    await open(today);
    expect(applied()).toMatchObject([{ version: today.version, files: today.files.map((file) => file.name) }]);
    expect(await store?.placeBid("Alice", 100)).toMatchObject({ accepted: true });
    const recorded = await closeAnd((query) => query("SELECT version, digest FROM schema_functions"));
    expect(recorded).toEqual([{ version: today.version, digest: today.digest }]);
  });

  it("are not applied again while the database holds them: a restart replaces no function", async () => {
    await open(release(today, 2));
    const before = await closeAnd(functionRowVersions);
    await open(release(today, 2));
    expect(applied()).toEqual([]);
    expect(await closeAnd(functionRowVersions)).toBe(before);
  });

  it("replace an older release's, and the same version's if their text changed", async () => {
    await open(release(today, 1));
    await open(release(today, 2));
    expect(applied()).toMatchObject([{ version: 2 }]);
    expect(await closeAnd(heldRelease)).toBe(2);

    // The same version with other text (edited without a new version): applied again.
    await open({ ...release(today, 5), version: 2, digest: "edited" });
    expect(applied()).toMatchObject([{ version: 2 }]);
    const held = await closeAnd(async (query) => ({
      release: await heldRelease(query),
      recorded: await query("SELECT version, digest FROM schema_functions ORDER BY version"),
    }));
    expect(held.release).toBe(5);
    expect(held.recorded).toMatchObject([
      { version: 1, digest: "digest of release 1" },
      { version: 2, digest: "edited" },
    ]);
  });

  it("are applied again after a migration ran, which may have dropped one of them", async () => {
    await open(release(today, 2));
    const dropping: Migration = {
      version: 10_000,
      name: "10000_drop_a_function.sql",
      sql: "DROP FUNCTION auction_release();",
    };
    await open(release(today, 2), [...(await readMigrations()), dropping]);
    expect(applied()).toMatchObject([{ version: 2 }]);
    expect(await closeAnd(heldRelease)).toBe(2);
  });

  it("of a newer release are left in place by an older one, which still works with them", async () => {
    await open(release(today, 3));
    const restarted = await open(release(today, 2));
    expect(applied()).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        held: 3,
        own: 2,
        msg: "the database has functions of a newer release: leaving them in place",
      }),
    );
    expect(await restarted.placeBid("Alice", 100)).toMatchObject({ accepted: true, bid: { bidderName: "Alice" } });
    const held = await closeAnd(async (query) => ({
      release: await heldRelease(query),
      versions: await query("SELECT version FROM schema_functions ORDER BY version"),
    }));
    expect(held).toEqual({ release: 3, versions: [{ version: 3 }] });
  });
});

/**
 * Today's placements as the previous release sent them: without the increment and the first bid's
 * floor (its rule was a bid strictly above the highest). Other statements are as they were.
 */
function asPreviousRelease(text: string, params: never[]): [string, never[]] {
  if (text === PLACE_BID_SQL) {
    return [
      "SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, $4::integer, $5::integer)",
      params.slice(0, 5),
    ];
  }
  if (text.startsWith("SELECT * FROM place_auction_bids(")) {
    return ["SELECT * FROM place_auction_bids($1::text, $2::integer, $3::integer)", params.slice(0, 3)];
  }
  return [text, params];
}

describe("the functions on PostgreSQL", () => {
  it("are applied once when two instances start together on a new database", async () => {
    const database = await databaseForThisTest();
    const lines: Line[] = [];
    const open = async () => {
      const store = await openPostgresStore({
        databaseUrl: database.url,
        logger: testLogger((line) => lines.push(line)),
        poolSize: 2,
      });
      cleanUpAfter(() => store.close());
    };
    await Promise.all([open(), open()]);
    expect(lines.filter((line) => line.msg === "functions applied")).toHaveLength(1);
  });

  it("keep answering the previous release's prepared calls while the next release upgrades the database", async () => {
    // The previous release's instance: its store's statements (queries.ts sent the same text from
    // c0d7271 until the amount rule came with each placement), prepared on one connection as its
    // pool prepares them, over a database it made.
    const location = await locationForThisTest("postgres", { unmigrated: true });
    const previous = postgres(location.databaseUrl as string, { max: 1, onnotice: () => {} });
    try {
      await migrateAsReleased(location, RELEASES[RELEASES.length - 1] as (typeof RELEASES)[number]);
      const calls = storeQueries(
        async (text, params) => [
          ...(await previous.unsafe(...asPreviousRelease(text, params as never[]), { prepare: true })),
        ],
        ENDLESS_ROUNDS,
      );
      expect(await calls.placeBid("Alice", 100)).toMatchObject({ accepted: true, bid: { id: 1 }, bidders: 1 });
      expect(await calls.placeBids([{ bidderName: "Bob", amountCents: 200 }])).toMatchObject([{ accepted: true }]);
      expect((await calls.view(10)).bids).toHaveLength(2);

      // The next release starts: 008 drops and creates the placement functions again, their
      // result now a type of its own (a lone bid's gains `ordinal`).
      const lines: Line[] = [];
      const next = await storeForThisTest(location, { logger: testLogger((line) => lines.push(line)) });
      expect(lines.filter((line) => line.msg === "migration applied").map((line) => line.migration)).toContain(
        "008_auction_placement.sql",
      );
      expect(await calls.placeBid("Carol", 300)).toMatchObject({ accepted: true, bid: { id: 3 }, bidders: 3 });
      expect(await calls.placeBid("Dave", 250)).toMatchObject({
        accepted: false,
        code: "too_low",
        highestCents: 300,
      });
      expect(
        await calls.placeBids([
          { bidderName: "Alice", amountCents: 400 },
          { bidderName: "Eve", amountCents: 350 },
        ]),
      ).toMatchObject([
        { accepted: true, bid: { id: 4 }, bidders: 3 },
        { accepted: false, code: "too_low" },
      ]);
      expect(await next.placeBid("Frank", 500)).toMatchObject({ accepted: true, bid: { id: 5 }, bidders: 4 });
      expect((await calls.view(10)).bids.map((bid) => bid.id)).toEqual([5, 4, 3, 2, 1]);
    } finally {
      await previous.end();
    }
  });
});
