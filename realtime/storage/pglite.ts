/**
 * The embedded backend: PGlite in this process with its data in a directory that this process
 * locks. PGlite runs one query at a time and queues concurrent calls itself; the one-statement
 * place_auction_bid() keeps bids atomic all the same.
 */
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger.ts";
import { type DataDirLock, lockDataDir } from "./dataDirLock.ts";
import { applyMigrations, type Migration, readMigrations } from "./migrations.ts";
import { createNoticeListeners, fillBidderKeys, NOTIFY_CHANNEL, storeQueries } from "./queries.ts";
import { type BidStore, ENDLESS_ROUNDS, type RoundSettings, StoreUnavailableError } from "./types.ts";

export interface PgliteStoreOptions {
  dataDir: string;
  logger: Logger;
  migrations?: Migration[];
  /** Round lengths (default: one endless round). */
  rounds?: RoundSettings;
}

export async function openPgliteStore(options: PgliteStoreOptions): Promise<BidStore> {
  const { dataDir, logger } = options;
  const lock = await lockDataDir(dataDir);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create({ dataDir });
    const opened = db;
    await applyMigrations(
      (work) =>
        opened.transaction((tx) =>
          work({
            query: async (text, params) => (await tx.query<Record<string, unknown>>(text, params)).rows,
            exec: async (script) => {
              await tx.exec(script);
            },
          }),
        ),
      options.migrations ?? (await readMigrations()),
      logger,
    );
    await fillBidderKeys(async (text, params) => (await opened.query<Record<string, unknown>>(text, params)).rows);
    return await createPgliteStore(opened, lock, logger, options.rounds ?? ENDLESS_ROUNDS);
  } catch (error) {
    await db?.close().catch(() => {});
    await lock.release();
    throw error;
  }
}

async function createPgliteStore(
  db: PGlite,
  lock: DataDirLock,
  logger: Logger,
  rounds: RoundSettings,
): Promise<BidStore> {
  const notices = createNoticeListeners(logger);
  let closed = false;

  const unlisten = await db.listen(NOTIFY_CHANNEL, notices.deliver);

  async function rows(text: string, params: unknown[]) {
    if (closed) throw new StoreUnavailableError("The auction store is closed.");
    return (await db.query<Record<string, unknown>>(text, params)).rows;
  }

  return {
    backend: "pglite",
    ...storeQueries(rows, rounds),
    onBid: notices.onBid,
    onModeration: notices.onModeration,
    onRoundClosed: notices.onRoundClosed,
    // In-process: reachable for as long as it is open, so readiness never changes.
    onReadyChange() {
      return () => {};
    },
    isReady() {
      return !closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      notices.clear();
      try {
        await unlisten();
        await db.close();
      } finally {
        await lock.release();
      }
    },
  };
}
