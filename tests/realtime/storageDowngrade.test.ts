/**
 * A downgrade, on both backends (docs/decisions/2026-11-27-refuse-downgrades.md): code that finds
 * migrations it does not know refuses the database, naming them, unless the newest declares this
 * code's level compatible.
 */
import { describe, expect, it } from "vitest";
import { type Migration, MigrationsAheadError, readMigrations } from "../../realtime/storage/migrations.ts";
import { openPgliteStore } from "../../realtime/storage/pglite.ts";
import { openPostgresStore } from "../../realtime/storage/postgres.ts";
import type { BidStore } from "../../realtime/storage/types.ts";
import { withTimeout } from "../../scripts/support/childProcess.ts";
import { migrateAsReleased, RELEASES } from "./support/releases.ts";
import { jsonLines, serviceProcessEnv, spawnService } from "./support/serviceProcess.ts";
import {
  BACKENDS,
  cleanUpAfter,
  locationForThisTest,
  storeForThisTest,
  type TestLocation,
  testLogger,
  withDirectSql,
} from "./support/stores.ts";

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
