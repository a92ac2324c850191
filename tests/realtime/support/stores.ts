/**
 * Where a test keeps its auction data, for both backends, and stores opened on it.
 *
 *   const location = await createTestLocation("postgres"); // or "pglite"
 *   const store = await openTestStore(location);           // openBidStore on it, logs discarded
 *   ...
 *   await store.close(); await location.remove();
 *
 * PostgreSQL: a fresh database per location on the run's cluster (see postgresUrl()), dropped by
 * remove(). PGlite: a fresh data directory per location, copied from a migrated template built once
 * per run (a new PGlite directory takes seconds to initialise, a copy a fraction of one).
 * `location.databaseUrl` / `location.dataDir` are what a service under test is configured with
 * (DATABASE_URL / DATA_DIR).
 */

import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chown, cp, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { inject, onTestFinished, vi } from "vitest";
import { createLogger, type Logger } from "../../../realtime/logger.ts";
import { openBidStore } from "../../../realtime/storage/index.ts";
import type { RoundSettings, StoreWithPayments } from "../../../realtime/storage/types.ts";
import { startPostgresCluster } from "../../../scripts/support/postgresCluster.ts";
import { RUN_CLUSTER_DIR_NAME } from "./globalSetup.ts";

/**
 * For beforeEach/beforeAll hooks that open stores: the first PGlite location of a run builds the
 * template (seconds, more on a loaded machine).
 */
export const STORE_HOOK_TIMEOUT_MS = 60_000;

export type Backend = "postgres" | "pglite";
export const BACKENDS: Backend[] = ["postgres", "pglite"];

export interface TestLocation {
  backend: Backend;
  /** Set for "postgres": a database of its own. */
  databaseUrl?: string;
  /** For "pglite" the data directory; for "postgres" an empty directory nobody uses. */
  dataDir: string;
  /** Drops the database or removes the directory; close the stores on it first. */
  remove(): Promise<void>;
}

/** A logger that drops everything, or hands each parsed line to `onLine` (to assert on logs). */
export function testLogger(onLine?: (line: Record<string, unknown>) => void): Logger {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      if (onLine) for (const line of String(chunk).split("\n").filter(Boolean)) onLine(JSON.parse(line));
      done();
    },
  });
  return createLogger(onLine ? "debug" : "warn", sink);
}

const CLUSTER_START_TIMEOUT_MS = 60_000;

/**
 * Superuser URL of the run's PostgreSQL: DATABASE_URL, or one cluster per run, started by the first
 * worker that asks (the others wait for its URL) and stopped by the global teardown.
 */
async function postgresUrl(): Promise<string> {
  const configured = inject("databaseUrl");
  if (configured) return configured;
  const dir = join(inject("storageTempRoot"), RUN_CLUSTER_DIR_NAME);
  const urlFile = join(dir, "url");
  const errorFile = join(dir, "error");
  let starter = false;
  try {
    await mkdir(dir);
    starter = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  if (starter) {
    if (process.getuid?.() === 0) {
      const { stdout } = await promisify(execFile)("id", ["-u", "postgres"]);
      const { stdout: group } = await promisify(execFile)("id", ["-g", "postgres"]);
      await chown(dir, Number(stdout), Number(group));
    }
    try {
      const cluster = await startPostgresCluster({ dir });
      // Written whole, then renamed: a waiting worker never reads half a URL.
      await writeFile(`${urlFile}.tmp`, cluster.url);
      await rename(`${urlFile}.tmp`, urlFile);
    } catch (error) {
      // A failed start removes its directory; the others still need to hear why.
      await mkdir(dir, { recursive: true });
      await writeFile(errorFile, (error as Error).message);
      throw error;
    }
  }
  const deadline = Date.now() + CLUSTER_START_TIMEOUT_MS;
  for (;;) {
    const url = await readFile(urlFile, "utf8").catch(() => "");
    if (url) return url;
    const failure = await readFile(errorFile, "utf8").catch(() => "");
    if (failure) throw new Error(`The run's PostgreSQL did not start: ${failure}`);
    if (Date.now() > deadline) throw new Error("Timed out waiting for the run's PostgreSQL to start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A new empty database on the run's PostgreSQL. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = await postgresUrl();
  const name = `test_${randomUUID().replaceAll("-", "")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    async drop() {
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The migrated PGlite template of this run: built by the first worker that needs it, then shared. */
async function pgliteTemplate(): Promise<string> {
  const root = inject("storageTempRoot");
  const template = join(root, "pglite-template");
  if (await exists(template)) return template;
  const building = join(root, `pglite-template-building-${randomUUID()}`);
  const store = await openBidStore({ dataDir: building, logger: testLogger() });
  await store.close();
  try {
    await rename(building, template);
  } catch {
    // Another worker finished first: theirs is as good.
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

/** A new PGlite data directory, already migrated (a copy of the run's template). */
export async function createTestDataDir(options: { empty?: boolean } = {}): Promise<{
  dir: string;
  remove(): Promise<void>;
}> {
  const dir = join(inject("storageTempRoot"), `pglite-${randomUUID()}`);
  if (options.empty) await mkdir(dir);
  else await cp(await pgliteTemplate(), dir, { recursive: true });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function createTestLocation(backend: Backend): Promise<TestLocation> {
  if (backend === "postgres") {
    const database = await createTestDatabase();
    const unused = await createTestDataDir({ empty: true });
    return {
      backend,
      databaseUrl: database.url,
      dataDir: unused.dir,
      async remove() {
        await database.drop();
        await unused.remove();
      },
    };
  }
  const data = await createTestDataDir();
  return { backend, dataDir: data.dir, remove: data.remove };
}

/** openBidStore on a test location; logs are discarded unless a logger is given. */
export function openTestStore(
  location: TestLocation,
  options: { logger?: Logger; poolSize?: number; rounds?: RoundSettings } = {},
): Promise<StoreWithPayments> {
  return openBidStore({
    databaseUrl: location.databaseUrl,
    dataDir: location.dataDir,
    logger: options.logger ?? testLogger(),
    poolSize: options.poolSize,
    rounds: options.rounds,
  });
}

/** Waits until `check` returns true, failing with `what` after `timeoutMs`: every wait is bounded. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  // A deadline computed from a value the test has not got yet is NaN: say so, not "timed out".
  if (!Number.isFinite(timeoutMs)) throw new Error(`No time limit for waiting for ${what}: ${timeoutMs}`);
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/**
 * Runs `step` when the current test ends, pass or fail, the last registered first (Vitest's
 * onTestFinished). A failed cleanup is logged rather than raised: it must not hide the test's result.
 */
export function cleanUpAfter(step: () => Promise<unknown>): void {
  onTestFinished(async () => {
    await step().catch((error: unknown) => console.error("cleanup failed:", error));
  }, STORE_HOOK_TIMEOUT_MS);
}

export type DirectQuery = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Runs statements straight on a location's database, bypassing the store (to inspect rows or to
 * insert what the store never would). PGlite allows one process per directory: close its store first.
 */
export async function withDirectSql<T>(location: TestLocation, work: (query: DirectQuery) => Promise<T>): Promise<T> {
  if (location.databaseUrl) {
    const sql = postgres(location.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return await work(async (text, params = []) => [...(await sql.unsafe(text, params as never[]))]);
    } finally {
      await sql.end();
    }
  }
  const db = await PGlite.create({ dataDir: location.dataDir });
  try {
    return await work(async (text, params = []) => (await db.query<Record<string, unknown>>(text, params)).rows);
  } finally {
    await db.close();
  }
}
