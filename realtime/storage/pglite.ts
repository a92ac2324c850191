/**
 * The embedded backend: PGlite in this process with its data in a directory that this process
 * locks. PGlite runs one query at a time and queues concurrent calls itself; the one-statement
 * place_auction_bid() keeps bids atomic all the same.
 */
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger.ts";
import { type DataDirLock, lockDataDir } from "./dataDirLock.ts";
import { applyMigrations, type Migration, readMigrations } from "./migrations.ts";
import {
  BIDS_AFTER_SQL,
  NOTIFY_CHANNEL,
  PLACE_BID_SQL,
  parseBidNotice,
  toAuctionView,
  toBidsAfter,
  toPlaceBidOutcome,
  VIEW_SQL,
} from "./queries.ts";
import { type BidNotice, type BidStore, StoreUnavailableError } from "./types.ts";

export interface PgliteStoreOptions {
  dataDir: string;
  logger: Logger;
  migrations?: Migration[];
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
    return await createPgliteStore(opened, lock, logger);
  } catch (error) {
    await db?.close().catch(() => {});
    await lock.release();
    throw error;
  }
}

async function createPgliteStore(db: PGlite, lock: DataDirLock, logger: Logger): Promise<BidStore> {
  const bidListeners = new Set<(notice: BidNotice) => void>();
  let closed = false;

  const unlisten = await db.listen(NOTIFY_CHANNEL, (payload) => {
    const notice = parseBidNotice(payload);
    if (!notice) {
      logger.error({ payload }, "unreadable auction notification");
      return;
    }
    for (const listener of bidListeners) listener(notice);
  });

  async function rows(text: string, params: unknown[]) {
    if (closed) throw new StoreUnavailableError("The auction store is closed.");
    return (await db.query<Record<string, unknown>>(text, params)).rows;
  }

  return {
    backend: "pglite",
    async placeBid(bidderName, amountCents) {
      return toPlaceBidOutcome((await rows(PLACE_BID_SQL, [bidderName, amountCents]))[0]);
    },
    async view(limit) {
      return toAuctionView((await rows(VIEW_SQL, [limit]))[0]);
    },
    async bidsAfter(afterId, limit) {
      return toBidsAfter((await rows(BIDS_AFTER_SQL, [afterId, limit]))[0]);
    },
    onBid(listener) {
      bidListeners.add(listener);
      return () => bidListeners.delete(listener);
    },
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
      bidListeners.clear();
      try {
        await unlisten();
        await db.close();
      } finally {
        await lock.release();
      }
    },
  };
}
