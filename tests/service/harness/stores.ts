/**
 * Where a test keeps its auction data, for both backends, and stores opened on it.
 *
 *   const location = await createTestLocation("postgres"); // or "pglite"
 *   const store = await openTestStore(location);           // openBidStore on it, logs discarded
 *   ...
 *   await store.close(); await location.remove();
 *
 * or, closed and removed when the current test ends, pass or fail (from the test or a beforeEach):
 *
 *   const { location, store } = await freshStoreForThisTest("pglite");
 *
 * PostgreSQL: a fresh database per location on the run's cluster (see postgresUrl()), dropped by
 * remove(). PGlite: a fresh data directory per location, copied from a migrated template built once
 * per run (a new PGlite directory takes seconds to initialise, a copy a fraction of one).
 * `createTestLocation(backend, { unmigrated: true })`: a database no migration has touched yet.
 * `location.databaseUrl` / `location.dataDir` are what a service under test is configured with
 * (DATABASE_URL / DATA_DIR).
 */

import { randomUUID } from "node:crypto";
import { chown, cp, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { inject, it, onTestFinished, vi } from "vitest";
import { run } from "../../../scripts/harness/childProcess.ts";
import { startPostgresCluster } from "../../../scripts/harness/postgresCluster.ts";
import { createLogger, type Logger } from "../../../service/logger.ts";
import { openBidStore } from "../../../service/storage/index.ts";
import type { BidStore, PlaceBidOutcome, RoundSettings, StoreWithPayments } from "../../../service/storage/types.ts";
import { modelWinningAmounts } from "./auctionModel.ts";
import { RUN_CLUSTER_DIR_NAME } from "./globalSetup.ts";

/** A time as the store writes it: ISO 8601 in UTC, to the millisecond. */
export const ISO_UTC_MILLIS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** What a view of an auction without a single bid says, round aside. */
export const NO_BIDS = { bids: [], highest: null, bidders: 0, moderation: 0, lastId: 0, blockedKeys: [] };

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
      const { stdout } = await run("id", ["-u", "postgres"]);
      const { stdout: group } = await run("id", ["-g", "postgres"]);
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

/**
 * A PGlite directory of this run built once by the first worker that needs it, then shared
 * (copied, never opened in place).
 */
async function sharedPgliteDir(name: string, build: (dir: string) => Promise<void>): Promise<string> {
  const root = inject("storageTempRoot");
  const template = join(root, name);
  if (await exists(template)) return template;
  const building = join(root, `${name}-building-${randomUUID()}`);
  await build(building);
  try {
    await rename(building, template);
  } catch {
    // Another worker finished first: theirs is as good.
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

/** Migrated by today's code. */
const pgliteTemplate = () =>
  sharedPgliteDir("pglite-template", async (dir) => {
    await (await openBidStore({ dataDir: dir, logger: testLogger() })).close();
  });

/** Initialised, with no migration applied. */
const pgliteUnmigrated = () =>
  sharedPgliteDir("pglite-unmigrated", async (dir) => {
    await (await PGlite.create({ dataDir: dir })).close();
  });

/**
 * A new PGlite data directory: migrated (a copy of the run's template), or `unmigrated` (initialised,
 * no migration applied), or `empty` (PGlite initialises it when it opens, in seconds).
 */
export async function createTestDataDir(options: { empty?: boolean; unmigrated?: boolean } = {}): Promise<{
  dir: string;
  remove(): Promise<void>;
}> {
  const dir = join(inject("storageTempRoot"), `pglite-${randomUUID()}`);
  if (options.empty) await mkdir(dir);
  else await cp(await (options.unmigrated ? pgliteUnmigrated() : pgliteTemplate()), dir, { recursive: true });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function createTestLocation(
  backend: Backend,
  options: { unmigrated?: boolean } = {},
): Promise<TestLocation> {
  // A new PostgreSQL database is unmigrated until a store opens on it.
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
  const data = await createTestDataDir(options);
  return { backend, dataDir: data.dir, remove: data.remove };
}

export interface TestStoreOptions {
  logger?: Logger;
  poolSize?: number;
  rounds?: RoundSettings;
}

/** openBidStore on a test location; logs are discarded unless a logger is given. */
export function openTestStore(location: TestLocation, options: TestStoreOptions = {}): Promise<StoreWithPayments> {
  return openBidStore({
    databaseUrl: location.databaseUrl,
    dataDir: location.dataDir,
    logger: options.logger ?? testLogger(),
    poolSize: options.poolSize,
    rounds: options.rounds,
  });
}

/** A store on a location of its own, for a whole suite. */
export interface SuiteStore {
  location: TestLocation;
  store: BidStore;
  /** Closes the store and removes the location (the suite's afterAll). */
  remove(): Promise<void>;
}

/** For a suite's beforeAll: a new location with a store open on it. */
export async function openStoreOnNewLocation(backend: Backend, options: TestStoreOptions = {}): Promise<SuiteStore> {
  const location = await createTestLocation(backend);
  const store = await openTestStore(location, options).catch(async (error: unknown) => {
    await location.remove();
    throw error;
  });
  return {
    location,
    store,
    async remove() {
      await store.close();
      await location.remove();
    },
  };
}

/*
 * The same, tied to the current test (called from it or from a beforeEach): whatever they create is
 * closed or removed when the test ends, pass or fail, stores before their location. A test may close
 * a store itself first (close is idempotent) and open another on the location the same way.
 */

/** A new empty database on the run's PostgreSQL, dropped when the current test ends. */
export async function databaseForThisTest(): Promise<{ url: string; drop(): Promise<void> }> {
  const database = await createTestDatabase();
  cleanUpAfter(() => database.drop());
  return database;
}

/** A new PGlite data directory, already migrated, removed when the current test ends. */
export async function dataDirForThisTest(): Promise<{ dir: string; remove(): Promise<void> }> {
  const data = await createTestDataDir();
  cleanUpAfter(() => data.remove());
  return data;
}

/** A new location (`unmigrated`: see createTestLocation), removed when the current test ends. */
export async function locationForThisTest(
  backend: Backend,
  options: { unmigrated?: boolean } = {},
): Promise<TestLocation> {
  const location = await createTestLocation(backend, options);
  cleanUpAfter(() => location.remove());
  return location;
}

/** A store on `location`, closed when the current test ends. */
export async function storeForThisTest(location: TestLocation, options: TestStoreOptions = {}): Promise<BidStore> {
  const store = await openTestStore(location, options);
  cleanUpAfter(() => store.close());
  return store;
}

/** A new location with a store open on it, both gone when the current test ends. */
export async function freshStoreForThisTest(
  backend: Backend,
  options: TestStoreOptions = {},
): Promise<{ location: TestLocation; store: BidStore }> {
  const location = await locationForThisTest(backend);
  return { location, store: await storeForThisTest(location, options) };
}

/**
 * `it` for tests given a fresh location and a store open on it, as
 * `storeTest("…", async ({ location, store }) => …)`: each made when the test first asks for it
 * (a test that asks only for `location` opens its own stores, with storeForThisTest) and gone when
 * the test ends. They are made within the test's time limit (the first PGlite location of a run
 * builds the template: seconds, more on a busy machine).
 */
export function storeTestOn(backend: Backend, options: TestStoreOptions = {}) {
  return it
    .extend("location", () => locationForThisTest(backend))
    .extend("store", ({ location }) => storeForThisTest(location, options));
}

/**
 * A new location whose database has the auction's tables and no store open on it (to drive with
 * withDirectSql), removed when the current test ends.
 */
export async function migratedLocationForThisTest(backend: Backend): Promise<TestLocation> {
  const location = await locationForThisTest(backend);
  // A PGlite location is a copy of a migrated template already; a PostgreSQL one is an empty database.
  if (backend === "postgres") await (await openTestStore(location)).close();
  return location;
}

/**
 * `it` for tests given such a location, as `locationTest("…", async ({ location }) => …)`, to
 * prepare with withDirectSql before they open their stores (storeForThisTest). Like storeTestOn's,
 * it is made within the test's time limit.
 */
export function migratedLocationTestOn(backend: Backend) {
  return it.extend("location", () => migratedLocationForThisTest(backend));
}

/**
 * Places `count` bids, each the smallest that wins after the one before, `batch` to a transaction
 * as group commit does, so every one is accepted. Names from `nameOf(n)`, n counting the bids from 1.
 */
export async function placeRisingBids(
  store: BidStore,
  count: number,
  nameOf: (n: number) => string,
  batch = 100,
): Promise<PlaceBidOutcome[]> {
  const amounts = modelWinningAmounts(count);
  const outcomes: PlaceBidOutcome[] = [];
  for (let first = 0; first < count; first += batch) {
    const bids = amounts.slice(first, first + batch).map((amountCents, index) => ({
      bidderName: nameOf(first + index + 1),
      amountCents,
    }));
    outcomes.push(...(await store.placeBids(bids)));
  }
  return outcomes;
}

/** Places each bid alone (`[name, cents]`), one after the other, as a page's single bids come. */
export async function placeEachAlone(
  store: BidStore,
  bids: readonly (readonly [string, number])[],
): Promise<PlaceBidOutcome[]> {
  const outcomes: PlaceBidOutcome[] = [];
  for (const [name, cents] of bids) outcomes.push(await store.placeBid(name, cents));
  return outcomes;
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
  });
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
