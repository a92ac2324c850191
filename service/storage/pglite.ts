/**
 * The embedded backend: PGlite in this process with its data in a directory that this process
 * locks. PGlite runs one query at a time and queues concurrent calls itself; the one-statement
 * place_auction_bid() keeps bids atomic all the same.
 *
 * Storage faults (storageFaults.ts): a write that fails for lack of space makes the store not ready
 * until the directory's file system has room again (looked for with statfs, without touching the
 * engine); an engine that PANICked or aborted is never called again, and the service's onFatal
 * hears of it from within the failing call, before a queued call could wedge the process.
 */
import { statfs } from "node:fs/promises";
import type { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger.ts";
import { NAME_KEY_VERSION } from "../names/nameKey.ts";
import { ADMIN_SESSIONS_CHANNEL, createAdminNotices, createAdminStore } from "./admin.ts";
import { type DataDirLock, lockDataDir } from "./dataDirLock.ts";
import { type FunctionSet, readFunctions } from "./functions.ts";
import { applyMigrations, type Migration, readMigrations } from "./migrations.ts";
import { NAME_KEY_VERSION_SETTING, rekeyNames } from "./nameKeyVersion.ts";
import {
  createPaymentNotices,
  createPaymentStore,
  type LeaseConnection,
  PAYMENT_OUTCOMES_CHANNEL,
  PAYMENT_WATCHER_CHANNEL,
} from "./payments.ts";
import { dumpPglite } from "./pgliteBackup.ts";
import { openPglite } from "./pgliteDatabase.ts";
import { prepareDataDir } from "./pgliteTemplate.ts";
import { makePrivate } from "./privateFiles.ts";
import { createNoticeListeners, NOTIFY_CHANNEL, storeQueries } from "./queries.ts";
import { refuseIncompleteRestore } from "./restoreLeftovers.ts";
import type { InTransaction } from "./schemaTransaction.ts";
import { createSpaceWatch, isEngineAbortLine, type SpaceWatch, storageFaultOf } from "./storageFaults.ts";
import {
  ENDLESS_ROUNDS,
  type RoundSettings,
  type StorageFaultHooks,
  StorageFullError,
  StoreUnavailableError,
  type StoreWithPayments,
} from "./types.ts";

export interface PgliteStoreOptions {
  dataDir: string;
  /** The initialised directory a new data directory is copied from (default: the build's, pgliteTemplate.ts). */
  templateDir?: string;
  logger: Logger;
  migrations?: Migration[];
  functions?: FunctionSet;
  /** Round lengths (default: one endless round). */
  rounds?: RoundSettings;
  faults?: StorageFaultHooks;
}

/**
 * Free space the data directory's file system needs before a store that ran out is ready again:
 * room for the next table pages and then some, so that readiness does not flap on the last bytes.
 */
const PGLITE_SPACE_MARGIN_BYTES = 4 * 1024 * 1024;

/** The engine's state: alive, or aborted for good (the reason); `abortListeners` hear it first. */
interface Engine {
  aborted: string | null;
  readonly abortListeners: Set<() => void>;
  abort(reason: string): void;
}

function createEngine(faults: StorageFaultHooks): Engine {
  const engine: Engine = {
    aborted: null,
    abortListeners: new Set(),
    abort(reason) {
      if (engine.aborted !== null) return;
      engine.aborted = reason;
      faults.onWriteFailure?.("panic");
      for (const listener of engine.abortListeners) listener();
      faults.onFatal?.(reason);
    },
  };
  return engine;
}

/** autovacuum's defaults for ANALYZE: 50 rows changed plus 10% of the table. */
const ANALYZE_THRESHOLD_ROWS = 50;
const ANALYZE_SCALE_FACTOR = 0.1;

/**
 * PGlite has no autovacuum, so nothing ever gave its planner statistics: with none, it read a
 * snapshot's newest bids through the visible-amount index and sorted the whole round (38 ms for a
 * round of 20,000 bids, against 1 ms by the (round_number, id) index once analysed). The store
 * analyses the bids when it opens and, like autovacuum's default rule, whenever the bids it has
 * placed since pass 50 plus 10% of the table. Queued behind the bids, never awaited by them.
 */
function createAnalyzer(
  db: PGlite,
  logger: Logger,
  isClosed: () => boolean,
  intoEngine: <T>(work: () => Promise<T>) => Promise<T>,
) {
  let tableRows = 0;
  let placedSince = 0;
  let running: Promise<void> | null = null;
  function analyze(): Promise<void> {
    running ??= (async () => {
      try {
        placedSince = 0;
        await intoEngine(() => db.exec("ANALYZE auction_bids"));
        const { rows } = await intoEngine(() =>
          db.query<{ rows: number }>(
            "SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'auction_bids'::regclass",
          ),
        );
        tableRows = Math.max(0, rows[0]?.rows ?? 0);
      } catch (error) {
        // A full disk or an aborted engine is the store's to report, once.
        if (!isClosed() && !(error instanceof StoreUnavailableError)) {
          logger.warn({ err: error }, "analysing the bids failed; the next placements try again");
        }
      } finally {
        running = null;
      }
    })();
    return running;
  }
  return {
    analyze,
    placed(count: number): void {
      placedSince += count;
      if (running || isClosed()) return;
      if (placedSince > ANALYZE_THRESHOLD_ROWS + ANALYZE_SCALE_FACTOR * tableRows) void analyze();
    },
    /** Resolves when no analysis is running (before closing the database). */
    async settled(): Promise<void> {
      await running;
    },
  };
}

/** The migrations runner's transaction on PGlite. */
export function pgliteTransaction(db: PGlite): InTransaction {
  return (work) =>
    db.transaction((tx) =>
      work({
        query: async (text, params) => (await tx.query<Record<string, unknown>>(text, params)).rows,
        exec: async (script) => {
          await tx.exec(script);
        },
      }),
    );
}

export async function openPgliteStore(options: PgliteStoreOptions): Promise<StoreWithPayments> {
  const { dataDir, logger } = options;
  const faults = options.faults ?? {};
  // The lock lost to another process (this one stalled past its heartbeats): stop before both write.
  const lock = await lockDataDir(dataDir, { onLost: (reason) => faults.onFatal?.(reason) });
  const engine = createEngine(faults);
  let db: PGlite | undefined;
  try {
    // Before anything is written: an empty or unfinished directory must not become an empty store.
    await refuseIncompleteRestore(dataDir);
    await tightenAtStart(dataDir, logger);
    await prepareDataDir(dataDir, logger, options.templateDir);
    db = await openPglite(dataDir, (line) => {
      if (isEngineAbortLine(line)) engine.abort(line);
    });
    const opened = db;
    // The version each bid and block this code writes records with its key (sql/016).
    await opened.query("SELECT set_config($1, $2, false)", [NAME_KEY_VERSION_SETTING, String(NAME_KEY_VERSION)]);
    await applyMigrations(
      pgliteTransaction(opened),
      options.migrations ?? (await readMigrations()),
      options.functions ?? (await readFunctions()),
      logger,
      rekeyNames,
    );
    // What PGlite wrote as it opened (pg_internal.init, 0644 each time) and the migrations made.
    await makePrivate(dataDir);
    return await createPgliteStore(opened, {
      lock,
      logger,
      rounds: options.rounds ?? ENDLESS_ROUNDS,
      dataDir,
      faults,
      engine,
    });
  } catch (error) {
    if (engine.aborted === null) await db?.close().catch(() => {});
    await lock.release();
    throw error;
  }
}

/**
 * Makes a directory an older service left (or an operator loosened) private, saying so once: its
 * files were open to the machine's other users, and backups taken meanwhile recorded their modes.
 */
async function tightenAtStart(dataDir: string, logger: Logger): Promise<void> {
  const { tightened, notOurs } = await makePrivate(dataDir);
  if (tightened === 0 && notOurs === 0) return;
  logger.warn(
    { dataDir, tightened, notOurs },
    `tightened ${tightened} entries of the data directory ${dataDir} to owner-only modes (0700 directories, 0600 files)` +
      (notOurs > 0 ? `; ${notOurs} belong to another user and were left as they are` : ""),
  );
}

interface StoreParts {
  lock: DataDirLock;
  logger: Logger;
  rounds: RoundSettings;
  dataDir: string;
  faults: StorageFaultHooks;
  engine: Engine;
}

/** Resolves when the file system of dataDir has the margin free; rejects while it has not. */
async function probeSpace(dataDir: string): Promise<void> {
  const { bavail, bsize } = await statfs(dataDir);
  if (bavail * bsize < PGLITE_SPACE_MARGIN_BYTES) throw new Error(`${bavail * bsize} bytes free`);
}

async function createPgliteStore(db: PGlite, parts: StoreParts): Promise<StoreWithPayments> {
  const { lock, logger, rounds, dataDir, faults, engine } = parts;
  const notices = createNoticeListeners(logger);
  const paymentNotices = createPaymentNotices(logger);
  const adminNotices = createAdminNotices(logger);
  let closed = false;
  const readyListeners = new Set<(ready: boolean) => void>();
  let ready = true;
  function showReadiness() {
    const now = !closed && engine.aborted === null && !space.full;
    if (now === ready) return;
    ready = now;
    for (const listener of readyListeners) listener(now);
  }
  const space: SpaceWatch = createSpaceWatch({
    logger,
    probe: () => probeSpace(dataDir),
    onFullChange: showReadiness,
  });
  engine.abortListeners.add(showReadiness);

  /** What a failed call into the engine becomes: a full disk and an abort are the store's unavailability. */
  function storageError(error: unknown): unknown {
    const kind = storageFaultOf(error);
    if (kind === "panic") {
      engine.abort(error instanceof Error ? error.message : String(error));
      return new StoreUnavailableError(`PGlite aborted (${engine.aborted})`, { cause: error });
    }
    if (kind) faults.onWriteFailure?.(kind);
    if (kind === "disk_full") {
      space.ranOut(error);
      return new StorageFullError(`PGlite could not write for lack of space (${(error as Error).message})`, {
        cause: error,
      });
    }
    return error;
  }

  /** Calls into the engine unless it aborted: after an abort the next call would never return. */
  async function intoEngine<T>(work: () => Promise<T>): Promise<T> {
    if (closed) throw new StoreUnavailableError("The auction store is closed.");
    if (engine.aborted !== null) throw new StoreUnavailableError(`PGlite aborted (${engine.aborted})`);
    try {
      return await work();
    } catch (error) {
      throw storageError(error);
    }
  }

  const unlisten = await db.listen(NOTIFY_CHANNEL, notices.deliver);
  const unlistenPayments = await Promise.all(
    [PAYMENT_OUTCOMES_CHANNEL, PAYMENT_WATCHER_CHANNEL].map((channel) =>
      db.listen(channel, (payload) => paymentNotices.deliver(channel, payload)),
    ),
  );
  const unlistenAdmin = await db.listen(ADMIN_SESSIONS_CHANNEL, adminNotices.deliver);

  function rows(text: string, params: unknown[]) {
    return intoEngine(async () => (await db.query<Record<string, unknown>>(text, params)).rows);
  }

  const analyzer = createAnalyzer(db, logger, () => closed || engine.aborted !== null || space.full, intoEngine);
  await analyzer.analyze();
  const queries = storeQueries(rows, rounds);

  // One process holds the directory, so it is the deployment's one watcher; the lease only keeps a
  // second watcher in this process from running beside the first.
  let lease: { lost: boolean; listeners: Set<(reason: string) => void> } | null = null;
  function claimLease(): Promise<LeaseConnection | null> {
    if (closed || lease) return Promise.resolve(null);
    const held = { lost: false, listeners: new Set<(reason: string) => void>() };
    lease = held;
    return Promise.resolve({
      async transaction(work) {
        if (closed || held.lost) throw new StoreUnavailableError("The payment watcher's lease is gone.");
        return intoEngine(() =>
          db.transaction((tx) =>
            work(async (text, params) => (await tx.query<Record<string, unknown>>(text, params)).rows),
          ),
        );
      },
      isHeld: () => !held.lost && !closed,
      onLost(listener) {
        if (held.lost) listener("lost before it was watched");
        else held.listeners.add(listener);
      },
      async release() {
        held.lost = true;
        if (lease === held) lease = null;
      },
    });
  }
  const payments = createPaymentStore({ query: rows, claimLease }, paymentNotices);
  const admin = createAdminStore(rows, adminNotices);

  return {
    backend: "pglite",
    ...queries,
    payments,
    admin,
    async placeBid(bidderName, amountCents) {
      const outcome = await space.placing(1, () => queries.placeBid(bidderName, amountCents));
      if (outcome.accepted) analyzer.placed(1);
      return outcome;
    },
    async placeBids(bids) {
      const outcomes = await space.placing(bids.length, () => queries.placeBids(bids));
      analyzer.placed(outcomes.filter((outcome) => outcome.accepted).length);
      return outcomes;
    },
    async placeEntries(entries) {
      const outcomes = await space.placing(entries.length, () => queries.placeEntries(entries));
      analyzer.placed(outcomes.filter((outcome) => outcome.accepted).length);
      return outcomes;
    },
    onBid: notices.onBid,
    onModeration: notices.onModeration,
    onRoundClosed: notices.onRoundClosed,
    // In-process: reachable while open, unless its disk is full or its engine aborted.
    onReadyChange(listener) {
      readyListeners.add(listener);
      return () => readyListeners.delete(listener);
    },
    isReady() {
      return ready;
    },
    dumpDataDir() {
      return intoEngine(() => dumpPglite(db));
    },
    async close() {
      if (closed) return;
      closed = true;
      const full = space.full;
      space.close();
      readyListeners.clear();
      showReadiness();
      notices.clear();
      paymentNotices.clear();
      adminNotices.clear();
      if (lease) {
        lease.lost = true;
        for (const listener of lease.listeners) listener("the store closed");
      }
      try {
        // An aborted engine is never called again: its close would spin like any other call.
        if (engine.aborted !== null) return;
        // Closing checkpoints, and a checkpoint on a full disk PANICs. Every committed bid is in
        // the write-ahead log already: the next start replays it, as after a crash.
        if (full) {
          logger.warn(
            "closing PGlite without a checkpoint: its disk is full; the next start replays the write-ahead log",
          );
          return;
        }
        await analyzer.settled();
        await unlisten();
        for (const stop of unlistenPayments) await stop();
        await unlistenAdmin();
        await db.close();
      } finally {
        // What PGlite wrote since it opened, its last checkpoint included.
        await makePrivate(dataDir).catch((error: unknown) =>
          logger.warn({ err: error }, "could not make the data directory's files private on closing"),
        );
        await lock.release();
      }
    },
  };
}
