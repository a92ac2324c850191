/**
 * The migrations runner: applies sql/NNN_name.sql in numeric order, each recorded in
 * schema_migrations, then the functions and views of sql/functions/ (functions.ts), all inside one
 * transaction that holds an advisory lock, so two instances starting together on one database
 * apply each migration once and a restart applies nothing. Numbered migrations hold the schema
 * (tables, types, indexes, data changes) and call no function or view of the project's: they run
 * before the functions are applied, so they would meet whatever bodies the database last got (none
 * on a new database), not those of their time (docs/design.md#7; sqlFunctions.test.ts checks).
 *
 * A database a newer release upgraded (recorded migrations this code does not know) is refused
 * (MigrationsAheadError), unless the newest of them declared, by a `-- compatible-with: NNN` line,
 * that code from level NNN on still runs on it (an expand-only migration, which a rolling deploy
 * needs): recorded in schema_migrations.compatible_with (sql/015), which older code reads from the
 * database since it cannot read the newer file (docs/decisions/2026-11-27-refuse-downgrades.md).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.ts";
import { applyFunctions, type FunctionSet } from "./functions.ts";
import type { InTransaction, MigrationTransaction } from "./schemaTransaction.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../sql/", import.meta.url));

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATIONS_LOCK_KEY = 4_711_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** From its `-- compatible-with: NNN` line: the oldest level of code that still runs on it. */
  compatibleWith?: number;
}

/** The migration that added schema_migrations.compatible_with: a declaration needs it applied first. */
const COMPATIBILITY_RECORDED_FROM = 15;

/**
 * The database has migrations this code does not know, and the newest does not declare itself
 * compatible with this code's level: a newer release upgraded it (a downgrade). Starting again
 * cannot help; running that release or restoring a backup can (exit 2, startFailures.ts).
 */
export class MigrationsAheadError extends Error {
  override name = "MigrationsAheadError";
  readonly unknown: string[];
  constructor(unknown: string[]) {
    super(
      `the database has migrations ${unknown.join(", ")} that this code does not know: it was upgraded by a newer release; run that release, or restore a backup taken before the upgrade`,
    );
    this.unknown = unknown;
  }
}

/**
 * Work that needs the schema the migrations leave and must run once, like them: it runs after
 * them in their transaction, under their lock, at every open (the re-keying of stored names,
 * nameKeyVersion.ts, which finds nothing to do unless the key changed).
 */
export type AfterMigrations = (tx: MigrationTransaction, logger: Logger) => Promise<unknown>;

const MIGRATION_FILE = /^(\d+)_([\w-]+)\.sql$/;
const COMPATIBLE_WITH = /^--\s*compatible-with:\s*(\d+)\s*$/m;

/** The level a migration's `-- compatible-with: NNN` line names, checked against its own number. */
export function compatibleWithOf(version: number, name: string, sql: string): number | undefined {
  const match = COMPATIBLE_WITH.exec(sql);
  if (!match) return undefined;
  const level = Number(match[1]);
  if (level >= version) throw new Error(`${name}: compatible-with ${level} must name a level below its own`);
  if (version < COMPATIBILITY_RECORDED_FROM) {
    throw new Error(`${name}: compatible-with is recorded from migration ${COMPATIBILITY_RECORDED_FROM} on`);
  }
  return level;
}

export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of await readdir(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    const [version, sql] = [Number(match[1]), await readFile(join(dir, file), "utf8")];
    migrations.push({ version, name: file, sql, compatibleWith: compatibleWithOf(version, file, sql) });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    const [previous, current] = [migrations[i - 1], migrations[i]];
    if (previous && current && previous.version === current.version) {
      throw new Error(`Two migrations share version ${current.version}: ${previous.name} and ${current.name}`);
    }
  }
  return migrations;
}

/**
 * Applies the migrations not yet recorded, then the functions where the database needs them, then
 * `afterMigrations` (the name keys' re-key); returns the names of the migrations it applied.
 */
export async function applyMigrations(
  inTransaction: InTransaction,
  migrations: Migration[],
  functions: FunctionSet,
  logger: Logger,
  afterMigrations?: AfterMigrations,
): Promise<string[]> {
  return inTransaction(async (tx) => {
    // The bid statement timeout is not for migrations, nor for waiting on another instance's.
    await tx.exec("SET LOCAL statement_timeout = 0");
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATIONS_LOCK_KEY]);
    const applied = await applyPendingMigrations(tx, migrations, logger);
    await applyFunctions(tx, functions, { schemaChanged: applied.length > 0 }, logger);
    await afterMigrations?.(tx, logger);
    return applied;
  });
}

async function applyPendingMigrations(
  tx: MigrationTransaction,
  migrations: Migration[],
  logger: Logger,
): Promise<string[]> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  // SELECT *: compatible_with exists from sql/015 on.
  const rows = await tx.query("SELECT * FROM schema_migrations ORDER BY version");
  const recorded = new Set(rows.map((row) => Number(row.version)));
  checkNotAhead(rows, migrations, logger);
  const applied: string[] = [];
  for (const migration of migrations) {
    if (recorded.has(migration.version)) continue;
    await tx.exec(migration.sql);
    await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
      migration.version,
      migration.name,
    ]);
    if (migration.compatibleWith !== undefined) {
      await tx.query("UPDATE schema_migrations SET compatible_with = $2::integer WHERE version = $1::integer", [
        migration.version,
        migration.compatibleWith,
      ]);
    }
    applied.push(migration.name);
    logger.info({ migration: migration.name }, "migration applied");
  }
  return applied;
}

/**
 * Refuses a database with recorded migrations this code does not know (MigrationsAheadError),
 * unless the newest of them declared code of this level compatible: then a warning, and the start
 * goes on (the older instances of a rolling deploy, or a rollback the newer release allowed).
 */
function checkNotAhead(rows: Record<string, unknown>[], migrations: Migration[], logger: Logger): void {
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = rows.filter((row) => !known.has(Number(row.version)));
  const newest = unknown.at(-1);
  if (!newest) return;
  const level = Math.max(0, ...known);
  const names = unknown.map((row) => String(row.name));
  // Absent (no column: recorded before sql/015) or null (no declaration): not compatible.
  const compatibleWith = newest.compatible_with == null ? null : Number(newest.compatible_with);
  if (compatibleWith === null || !(compatibleWith <= level)) throw new MigrationsAheadError(names);
  logger.warn(
    { migrations: names, codeLevel: level, compatibleWith },
    `the database has migrations this code does not know (${names.join(", ")}); the newest declares code from level ${compatibleWith} on compatible, so this code (level ${level}) runs on it`,
  );
}
