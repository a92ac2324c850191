/**
 * Opens the auction's store: PostgreSQL when a DATABASE_URL is given, otherwise embedded PGlite in
 * dataDir. Either way the migrations in sql/ and the functions of sql/functions/ are in place when
 * the returned promise resolves.
 */
import type { Logger } from "../logger.ts";
import { openPgliteStore } from "./pglite.ts";
import { openPostgresStore } from "./postgres.ts";
import type { BidStore, RoundSettings, StorageFaultHooks, StoreWithPayments } from "./types.ts";

export type { BidStore } from "./types.ts";

export interface OpenBidStoreOptions {
  /** postgres://… of a PostgreSQL server; empty or absent: PGlite in dataDir. */
  databaseUrl?: string;
  /** PGlite's data directory (created if missing, locked while open); unused with databaseUrl. */
  dataDir: string;
  /** What a new PGlite data directory is copied from (default: the build's template, pgliteTemplate.ts). */
  pgliteTemplateDir?: string;
  logger: Logger;
  /** PostgreSQL pool size, the LISTEN connection not counted (default 10). */
  poolSize?: number;
  /** Round lengths (default: one endless round, as before rounds). */
  rounds?: RoundSettings;
  /** What the service hears of storage faults: a full disk, PGlite's abort (storageFaults.ts). */
  faults?: StorageFaultHooks;
}

/**
 * Throws StoreUnavailableError when PostgreSQL cannot be reached, DataDirLockedError when another
 * process (or this one) holds the PGlite data directory. The payments' store comes with it, on the
 * same database (StoreWithPayments).
 */
export async function openBidStore(options: OpenBidStoreOptions): Promise<BidStore & StoreWithPayments> {
  const databaseUrl = options.databaseUrl?.trim();
  const logger = options.logger.child({ component: "storage" });
  if (databaseUrl) {
    const store = await openPostgresStore({
      databaseUrl,
      logger,
      poolSize: options.poolSize,
      rounds: options.rounds,
      faults: options.faults,
    });
    logger.info("auction store open on PostgreSQL");
    return store;
  }
  const store = await openPgliteStore({
    dataDir: options.dataDir,
    logger,
    rounds: options.rounds,
    templateDir: options.pgliteTemplateDir,
    faults: options.faults,
  });
  logger.info({ dataDir: options.dataDir }, "auction store open on PGlite");
  return store;
}
