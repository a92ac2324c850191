/**
 * A downgrade, on both backends (docs/decisions/2026-11-27-refuse-downgrades.md): code that finds
 * migrations it does not know refuses the database, naming them, unless the newest declares this
 * code's level compatible; and a name keyed by older code (a rollback's, a rolling deploy's) is
 * re-keyed at the next open whatever key version the database records, so a blocked name's
 * disguise cannot stay a round's winner.
 */
import { describe, expect, it } from "vitest";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import { NAME_KEY_VERSION, nameKey } from "../../../service/names/nameKey.ts";
import { type Migration, MigrationsAheadError, readMigrations } from "../../../service/storage/migrations.ts";
import { openPgliteStore } from "../../../service/storage/pglite.ts";
import { openPostgresStore } from "../../../service/storage/postgres.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import { migrateAsReleased, RELEASES } from "../harness/releases.ts";
import { jsonLines, serviceProcessEnv, spawnService } from "../harness/serviceProcess.ts";
import {
  BACKENDS,
  cleanUpAfter,
  type DirectQuery,
  locationForThisTest,
  storeForThisTest,
  type TestLocation,
  testLogger,
  withDirectSql,
} from "../harness/stores.ts";

type Line = Record<string, unknown>;

/** Two migrations of a release after this one: a table and a column this code never reads. */
function newerMigrations(level: number, compatibleWith?: number): Migration[] {
  return [
    { version: level + 1, name: `${level + 1}_newer_table.sql`, sql: "CREATE TABLE newer_release (id integer);" },
    {
      version: level + 2,
      name: `${level + 2}_newer_column.sql`,
      sql: "ALTER TABLE newer_release ADD COLUMN note text;",
      compatibleWith,
    },
  ];
}

/** Opens a store with these migrations instead of sql/'s, closed when the test ends. */
async function openWith(location: TestLocation, migrations: Migration[], lines: Line[] = []): Promise<BidStore> {
  const logger = testLogger((line) => lines.push(line));
  const store = location.databaseUrl
    ? await openPostgresStore({ databaseUrl: location.databaseUrl, logger, migrations, poolSize: 2 })
    : await openPgliteStore({ dataDir: location.dataDir, logger, migrations });
  cleanUpAfter(() => store.close());
  return store;
}

/** sql/002's key, which the releases before the skeleton computed (nameKey.ts's version 1). */
const versionOneKey = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");

const ROUND = { roundSeconds: 60, softCloseSeconds: 10 };
const CLOCK_START = Date.parse("2026-06-01T12:00:00.000Z");

/**
 * What the operator saw: code of the old key, on the upgraded database, placing bids the way it
 * did (its own key, through the database's functions; its connections set no key version), and a
 * round settled with the disguise on top.
 */
async function bidAsOldCode(query: DirectQuery): Promise<number[]> {
  const at = (seconds: number) =>
    query("SELECT set_config('auction.test_now', $1, false)", [new Date(CLOCK_START + seconds * 1000).toISOString()]);
  const ids: number[] = [];
  await at(0);
  for (const [name, cents] of [
    ["Alice", 100],
    ["N\u043ebody", 900],
  ] as const) {
    const [row] = await query(
      "SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, $4::integer, $5::integer)",
      [name, versionOneKey(name), cents, ROUND.roundSeconds, ROUND.softCloseSeconds],
    );
    expect(row?.outcome, name).toBe("accepted");
    ids.push(Number(row?.id));
  }
  await at(120);
  await query("SELECT * FROM settle_auction_round($1::integer)", [ROUND.roundSeconds]);
  return ids;
}

describe.each(BACKENDS)("a downgrade on %s", (backend) => {
  it("is refused, naming the migrations this code does not know", async () => {
    const location = await locationForThisTest(backend, { unmigrated: true });
    const today = await readMigrations();
    const level = Math.max(...today.map((migration) => migration.version));
    await (await openWith(location, [...today, ...newerMigrations(level)])).close();

    const refused = await openWith(location, today).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MigrationsAheadError);
    expect((refused as Error).message).toBe(
      `the database has migrations ${level + 1}_newer_table.sql, ${level + 2}_newer_column.sql that this code does not know: it was upgraded by a newer release; run that release, or restore a backup taken before the upgrade`,
    );
    // Nothing was changed by the refused start: the newer release still finds its database.
    const recorded = await withDirectSql(location, (query) =>
      query("SELECT version, compatible_with FROM schema_migrations WHERE version > $1 ORDER BY version", [level]),
    );
    expect(recorded).toEqual([
      { version: level + 1, compatible_with: null },
      { version: level + 2, compatible_with: null },
    ]);
  }, 120_000);

  it("is allowed, with a warning, when the newest unknown migration declares this code compatible", async () => {
    const location = await locationForThisTest(backend, { unmigrated: true });
    const today = await readMigrations();
    const level = Math.max(...today.map((migration) => migration.version));
    await (await openWith(location, [...today, ...newerMigrations(level, level)])).close();

    const lines: Line[] = [];
    const store = await openWith(location, today, lines);
    expect(await store.placeBid("Alice", 100)).toMatchObject({ accepted: true });
    await store.close();
    // Placed through a pooled connection, which carries this code's key version (sql/016).
    expect(await withDirectSql(location, (query) => query("SELECT key_version FROM auction_bids"))).toEqual([
      { key_version: NAME_KEY_VERSION },
    ]);
    expect(lines.filter((line) => line.level === 40)).toContainEqual(
      expect.objectContaining({
        migrations: [`${level + 1}_newer_table.sql`, `${level + 2}_newer_column.sql`],
        codeLevel: level,
        compatibleWith: level,
      }),
    );

    // Compatible only from a level above this code's: refused all the same.
    const newer = await locationForThisTest(backend, { unmigrated: true });
    await (await openWith(newer, [...today, ...newerMigrations(level, level + 1)])).close();
    await expect(openWith(newer, today)).rejects.toBeInstanceOf(MigrationsAheadError);
  }, 120_000);

  it("cannot leave a disguise keyed by older code the winner: the next open re-keys it", async () => {
    const location = await locationForThisTest(backend);
    const store = await storeForThisTest(location, { rounds: ROUND });
    await store.moderate({ action: "block", bidderName: "Nobody", reason: null, sessionId: "session-today" });
    await store.close();
    // What this code writes records the version of the key it computed.
    expect(
      await withDirectSql(location, (query) => query("SELECT name_key, key_version FROM auction_blocked_names")),
    ).toEqual([{ name_key: nameKey("Nobody"), key_version: NAME_KEY_VERSION }]);

    const ids = await withDirectSql(location, bidAsOldCode);
    const before = await withDirectSql(location, (query) =>
      query("SELECT bidder_key, key_version, name_blocked FROM auction_bids WHERE id = $1", [ids[1]]),
    );
    // The bug: the old key passes the block, and the database says it is keyed by the new version.
    expect(before).toEqual([{ bidder_key: versionOneKey("N\u043ebody"), key_version: null, name_blocked: false }]);
    expect(await withDirectSql(location, (query) => query("SELECT version FROM auction_name_key_version"))).toEqual([
      { version: NAME_KEY_VERSION },
    ]);

    const lines: Line[] = [];
    const reopened = await storeForThisTest(location, {
      rounds: ROUND,
      logger: testLogger((line) => lines.push(line)),
    });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "names keyed by older code, or by none, re-keyed", bidsShownOrHidden: 1 }),
    );
    expect((await reopened.winners(5)).map((winner) => winner.bid.bidderName)).toEqual(["Alice"]);
    await reopened.close();
    const after = await withDirectSql(location, (query) =>
      query("SELECT bidder_name, bidder_key, key_version, name_blocked FROM auction_bids ORDER BY id"),
    );
    expect(after).toEqual([
      { bidder_name: "Alice", bidder_key: nameKey("Alice"), key_version: NAME_KEY_VERSION, name_blocked: false },
      { bidder_name: "N\u043ebody", bidder_key: nameKey("Nobody"), key_version: NAME_KEY_VERSION, name_blocked: true },
    ]);
  }, 120_000);
});

describe("a release from before the check, on a database this code upgraded", () => {
  it("only warns, and applies nothing (docs/upgrading.md says so)", async () => {
    const location = await locationForThisTest("postgres");
    await (await storeForThisTest(location)).close();
    const lines: Line[] = [];
    const released = RELEASES.at(-1);
    if (!released) throw new Error("no release");
    expect(
      await migrateAsReleased(
        location,
        released,
        testLogger((line) => lines.push(line)),
      ),
    ).toEqual([]);
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      "the database has migrations this code does not know (a newer release?)",
    ]);
  });
});

describe("the service on a database a newer release upgraded", () => {
  it("exits 2 naming the migrations, before it listens", async () => {
    const location = await locationForThisTest("pglite", { unmigrated: true });
    const today = await readMigrations();
    const level = Math.max(...today.map((migration) => migration.version));
    await (await openWith(location, [...today, ...newerMigrations(level)])).close();

    const service = spawnService(serviceProcessEnv({ dataDir: location.dataDir }));
    const code = await withTimeout(service.exited, 60_000, "the service exiting");
    expect(code).toBe(2);
    const fatal = jsonLines(service.stdout()).find((line) => line.level === 60);
    expect(fatal?.msg).toBe(
      `refusing to start on PGlite in DATA_DIR ${location.dataDir}: the database has migrations ${level + 1}_newer_table.sql, ${level + 2}_newer_column.sql that this code does not know: it was upgraded by a newer release; run that release, or restore a backup taken before the upgrade`,
    );
    expect(service.output()).not.toContain(" is open at ");
  }, 120_000);
});
