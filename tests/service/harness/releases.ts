/**
 * Databases as the service's earlier releases left them, read from git history: for a pinned
 * commit, the migrations of its sql/ applied by its own runner (service/storage/migrations.ts as it
 * was then, loaded from that commit), recorded in schema_migrations as that runner recorded them.
 * The SQL is read with `git show` rather than kept as fixtures, so that no release's SQL is copied
 * into the tree a second time; the tests need a clone with its history (not --depth).
 *
 *   await migrateAsReleased(location, releaseAt(2)); // 001 and 002 as 002 shipped them
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { inject } from "vitest";
import { run } from "../../../scripts/harness/childProcess.ts";
import type { Logger } from "../../../service/logger.ts";
import { pgliteTransaction } from "../../../service/storage/pglite.ts";
import { postgresTransaction } from "../../../service/storage/postgres.ts";
import type { InTransaction } from "../../../service/storage/schemaTransaction.ts";
import { type TestLocation, testLogger } from "./stores.ts";

const REPOSITORY = fileURLToPath(new URL("../../../", import.meta.url));
/** Where a commit keeps its migration runner: service/ since the layout's renaming, realtime/ before. */
const RUNNER_PATHS = ["service/storage/migrations.ts", "realtime/storage/migrations.ts"];

export interface Release {
  /** The newest migration it shipped. */
  level: number;
  commit: string;
  /** What the commit did to sql/. */
  change: string;
}

/**
 * Every state sql/ has been in on the main line, so every database a deployed commit can have
 * created: each migration as it landed, and 004 and 005 as they were edited after landing (a
 * database migrated in between kept the edited text; 005 was restored to its landed text at
 * c0d7271, its later changes moved to 006).
 */
export const RELEASES: readonly Release[] = [
  { level: 1, commit: "355b5a57b50923a249680d9426ef79eae5d8d3e4", change: "001 landed" },
  { level: 2, commit: "6341e02764721c561959748a1d4c5a0bc957f23f", change: "002 landed" },
  { level: 3, commit: "968c85b247c43a1c17491c9042501e781c8a1c36", change: "003 landed" },
  { level: 4, commit: "a9efc888d4126c1e508bfe39d0c421310638d2b4", change: "004 landed" },
  { level: 4, commit: "95f105d93ff3dbf4454ef387a5d42289219250a1", change: "004 edited: batches in one pass" },
  { level: 4, commit: "ef28bdcfa8574f35894afb225839ff231bffaa0b", change: "004 edited: known bidders by index" },
  { level: 4, commit: "60917dcf3214d0af58defa417ac926a4afa381fa", change: "004 edited: open_auction_round" },
  { level: 5, commit: "a93f2cad16d9e567ca39f537ee64111cdb5a7b96", change: "005 landed" },
  { level: 5, commit: "c98bfcdd74cfd0f9cf2d5297f3a92237551a9c75", change: "005 edited: lookup in plpgsql" },
  { level: 5, commit: "87d480495498b36bd6f9b731f55098bfe6e4d4db", change: "005 edited: no sequential scans" },
  { level: 6, commit: "c0d7271aba41dd9bfc34fb70f5c633440659b94f", change: "006 landed, 005 restored" },
];

/** The first release at a level: its migrations exactly as they landed. */
export function releaseAt(level: number): Release {
  const release = RELEASES.find((candidate) => candidate.level === level);
  if (!release) throw new Error(`No release shipped migration ${level}`);
  return release;
}

async function git(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run("git", ["-C", REPOSITORY, ...args], { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    throw new Error(
      `git ${args.join(" ")} failed: the released migrations are read from git history, which needs a clone with its full history (${(error as Error).message})`,
    );
  }
}

/** The API of service/storage/migrations.ts, which every release so far has kept. */
interface ReleasedRunner {
  readMigrations(): Promise<unknown[]>;
  applyMigrations(inTransaction: InTransaction, migrations: unknown[], logger: Logger): Promise<string[]>;
}

/**
 * The commit's runner and sql/ written out at their paths in a directory of their own, so that the
 * runner reads that sql/ as it read its own; the runner's imports are types only.
 */
async function checkOut(release: Release): Promise<ReleasedRunner> {
  const root = await mkdtemp(join(inject("storageTempRoot"), `release-${release.commit.slice(0, 7)}-`));
  const runnerPath = (await git("ls-tree", "--name-only", release.commit, "--", ...RUNNER_PATHS)).split("\n")[0] ?? "";
  if (!runnerPath) throw new Error(`${release.commit} has no migration runner at ${RUNNER_PATHS.join(" or ")}`);
  const paths = [
    runnerPath,
    ...(await git("ls-tree", "--name-only", release.commit, "sql/"))
      .split("\n")
      .filter((path) => path.endsWith(".sql")),
  ];
  for (const path of paths) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), await git("show", `${release.commit}:${path}`));
  }
  return (await import(pathToFileURL(join(root, runnerPath)).href)) as ReleasedRunner;
}

/**
 * Migrates a location's database (new, or at an earlier release) as `release` did when its service
 * opened the store; PGlite: an empty directory is initialised first. Returns the migrations applied.
 */
export async function migrateAsReleased(
  location: TestLocation,
  release: Release,
  logger: Logger = testLogger(),
): Promise<string[]> {
  const runner = await checkOut(release);
  const migrations = await runner.readMigrations();
  if (location.databaseUrl) {
    const sql = postgres(location.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return await runner.applyMigrations(postgresTransaction(sql), migrations, logger);
    } finally {
      await sql.end();
    }
  }
  const db = await PGlite.create({ dataDir: location.dataDir });
  try {
    return await runner.applyMigrations(pgliteTransaction(db), migrations, logger);
  } finally {
    await db.close();
  }
}
