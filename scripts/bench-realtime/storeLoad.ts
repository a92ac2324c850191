/**
 * The database alone, for the realtime benchmark's "why": bids placed straight through the
 * store's SQL (place_auction_bid, the statement the service sends), with no sockets, no JSON and
 * no fan-out. What this reaches is the ceiling the database sets; what the service reaches below
 * it is the service's own cost.
 *
 * With `batchSize`, bids go as the service's group commit sends them under load (bidBatcher.ts):
 * batches of that many through place_auction_bids, one transaction in flight at a time, so what the
 * database alone reaches per batch size is beside what the service reaches.
 *
 * Usage (by scripts/bench-realtime.ts): node storeLoad.ts '<json options>'; prints one JSON line.
 *   { "databaseUrl": "postgres://…", "synchronousCommit": "on"|"off", "concurrency": 10, "durationMs": 5000 }
 *   { "databaseUrl": "postgres://…", "batchSize": 50, "durationMs": 5000 }
 *   { "dataDir": "/tmp/…", "concurrency": 10 | "batchSize": 50, "durationMs": 5000 }   (PGlite in a directory of its own)
 */
import postgres from "postgres";
import { createLogger } from "../../service/logger.ts";
import { openPgliteStore } from "../../service/storage/pglite.ts";
import { openPostgresStore } from "../../service/storage/postgres.ts";
import { PLACE_BID_SQL, placeBidParameters, toPlaceBidOutcome } from "../../service/storage/queries.ts";
import { type BidToPlace, ENDLESS_ROUNDS, type PlaceBidOutcome } from "../../service/storage/types.ts";
import { nextWinningCents } from "../../src/lib/auction/bidRules.ts";

interface Options {
  databaseUrl?: string;
  dataDir?: string;
  synchronousCommit?: "on" | "off";
  concurrency?: number;
  /** Batches of this many bids, one at a time (the service's group commit), instead of `concurrency` lone bids. */
  batchSize?: number;
  durationMs: number;
}

/** As the service's pool (service/storage/postgres.ts). */
const POOL_SIZE = 10;

const options = JSON.parse(process.argv[2] ?? "{}") as Options;

type PlaceBatch = (bids: BidToPlace[]) => Promise<PlaceBidOutcome[]>;

/** The smallest amount that wins over `cents` (0: no bid yet). */
const winningOver = (cents: number) => nextWinningCents(cents === 0 ? null : cents);

/** `highestCents`: where the auction stands (0: no bid yet), so every bid starts above it. */
async function measure(highestCents: number, place: (name: string, cents: number) => Promise<PlaceBidOutcome>) {
  let nextCents = winningOver(highestCents);
  let accepted = 0;
  let tooLow = 0;
  const startedAt = performance.now();
  const endAt = startedAt + options.durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency ?? 1 }, async (_, index) => {
      while (performance.now() < endAt) {
        const cents = nextCents;
        nextCents = nextWinningCents(cents);
        const outcome = await place(`Store Bidder ${index}`, cents);
        if (outcome.accepted) accepted += 1;
        else {
          tooLow += 1;
          nextCents = Math.max(nextCents, winningOver(outcome.highestCents ?? 0));
        }
      }
    }),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  return { accepted, tooLow, seconds, acceptedPerSecond: Math.round(accepted / seconds) };
}

/** Batches of options.batchSize rising bids, each sent once the previous one is answered. */
async function measureBatches(highestCents: number, placeBatch: PlaceBatch) {
  const size = options.batchSize ?? 1;
  let highest = highestCents;
  let accepted = 0;
  let tooLow = 0;
  let batches = 0;
  const startedAt = performance.now();
  const endAt = startedAt + options.durationMs;
  while (performance.now() < endAt) {
    const bids = Array.from({ length: size }, (_, index) => {
      highest = winningOver(highest);
      return { bidderName: `Store Bidder ${index}`, amountCents: highest };
    });
    for (const outcome of await placeBatch(bids)) {
      if (outcome.accepted) accepted += 1;
      else tooLow += 1;
    }
    batches += 1;
  }
  const seconds = (performance.now() - startedAt) / 1000;
  return {
    accepted,
    tooLow,
    seconds,
    acceptedPerSecond: Math.round(accepted / seconds),
    batches,
    msPerBatch: Math.round(((seconds * 1000) / Math.max(1, batches)) * 100) / 100,
  };
}

/** Batches through the service's own store (its pool, its place_auction_bids call), with no service around it. */
async function batchesThroughStore(databaseUrl: string, highestCents: number) {
  const store = await openPostgresStore({ databaseUrl, logger: createLogger("silent") });
  try {
    return await measureBatches(highestCents, (bids) => store.placeBids(bids));
  } finally {
    await store.close();
  }
}

async function main() {
  if (options.databaseUrl) {
    const sql = postgres(options.databaseUrl, {
      max: POOL_SIZE,
      connection: { synchronous_commit: options.synchronousCommit ?? "on" },
    });
    try {
      // Start above whatever the service's phases left.
      const [state] = await sql`SELECT (high_amount * 100)::bigint AS cents FROM auction_state`;
      const highestCents = Number(state?.cents ?? 0);
      const result = options.batchSize
        ? await batchesThroughStore(options.databaseUrl, highestCents)
        : await measure(highestCents, async (name, cents) =>
            toPlaceBidOutcome((await sql.unsafe(PLACE_BID_SQL, placeBidParameters(name, cents, ENDLESS_ROUNDS)))[0]),
          );
      console.log(JSON.stringify(result));
    } finally {
      await sql.end({ timeout: 5 });
    }
    return;
  }
  if (!options.dataDir) throw new Error("storeLoad needs databaseUrl or dataDir");
  const store = await openPgliteStore({ dataDir: options.dataDir, logger: createLogger("silent") });
  try {
    console.log(
      JSON.stringify(
        options.batchSize
          ? await measureBatches(0, (bids) => store.placeBids(bids))
          : await measure(0, (name, cents) => store.placeBid(name, cents)),
      ),
    );
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
