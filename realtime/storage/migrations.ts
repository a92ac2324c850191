/**
 * The migrations runner: applies sql/NNN_name.sql in numeric order, each recorded in
 * schema_migrations, then the functions and views of sql/functions/ (functions.ts), all inside one
 * transaction that holds an advisory lock, so two instances starting together on one database
 * apply each migration once and a restart applies nothing. Numbered migrations hold the schema
 * (tables, types, indexes, data changes) and call no function or view of the project's: they run
 * before the functions are applied, so they would meet whatever bodies the database last got (none
 * on a new database), not those of their time (docs/design.md#7; sqlFunctions.test.ts checks).
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
}

/**
 * Work that needs the schema the migrations leave and must run once, like them: it runs after
 * them in their transaction, under their lock, at every open (the re-keying of stored names,
 * nameKeyVersion.ts, which finds nothing to do unless the key changed).
 */
export type AfterMigrations = (tx: MigrationTransaction, logger: Logger) => Promise<unknown>;

const MIGRATION_FILE = /^(\d+)_([\w-]+)\.sql$/;

export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of await readdir(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    migrations.push({ version: Number(match[1]), name: file, sql: await readFile(join(dir, file), "utf8") });
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
  const recorded = new Set((await tx.query("SELECT version FROM schema_migrations")).map((row) => Number(row.version)));
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = [...recorded].filter((version) => !known.has(version));
  if (unknown.length > 0) {
    logger.warn({ versions: unknown }, "the database has migrations this code does not know (a newer release?)");
  }
  const applied: string[] = [];
  for (const migration of migrations) {
    if (recorded.has(migration.version)) continue;
    await tx.exec(migration.sql);
    await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
      migration.version,
      migration.name,
    ]);
    applied.push(migration.name);
    logger.info({ migration: migration.name }, "migration applied");
  }
  return applied;
}
