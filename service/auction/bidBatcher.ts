/**
 * Group commit for one instance (docs/design.md#6c). Accepted bids are serialised by the auction's row
 * lock whatever we do; commits need not be. A bid that arrives while no placement is in flight
 * goes to the database on the next turn of the event loop, with the others read in the same
 * turn (no timer, no added wait: as coalescedReads.ts does for openings). Bids that arrive while
 * one is in flight wait for it, then go together, in arrival order, as one transaction and one
 * commit (place_auction_bids): each is judged as if placed alone at that point, and each gets its
 * own answer. So the commit rate stops capping the bid rate: under load a batch carries as many
 * bids as arrived during the previous round trip, up to maxBatchSize. The turn matters most on
 * PGlite, which runs a query on this thread: without it each bid would be placed before the next
 * socket is even read.
 */
import type { BidStore, MaximumOutcome, OutcomeOf, PlaceBidOutcome, Placement } from "../storage/types.ts";

/** Most bids in one transaction: bounds a batch's lock hold, its answer's size and what one failure touches. */
const DEFAULT_MAX_BATCH_SIZE = 100;

export interface BidBatcher {
  /**
   * Resolves with the bid's (or maximum's) outcome as if placed alone; rejects as a lone placement
   * would have.
   */
  place<T extends Placement>(entry: T): Promise<OutcomeOf<T>>;
}

interface Waiting {
  bid: Placement;
  resolve(outcome: PlaceBidOutcome | MaximumOutcome): void;
  reject(error: unknown): void;
}

export interface BidBatcherOptions {
  store: Pick<BidStore, "placeEntries">;
  maxBatchSize?: number;
  /** Told the size of every batch sent (for the batch-size metric). */
  onBatch?(size: number): void;
}

/**
 * A data exception or a constraint violation (SQLSTATE classes 22, 23): one bid the table refuses
 * fails its whole batch's statement, so each bid is placed again alone and fails alone.
 */
function isRefusedData(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

export function createBidBatcher({
  store,
  maxBatchSize = DEFAULT_MAX_BATCH_SIZE,
  onBatch,
}: BidBatcherOptions): BidBatcher {
  const waiting: Waiting[] = [];
  /** A placement is in flight, or one is scheduled for the next turn. */
  let inFlight = false;

  async function placeAlone(batch: Waiting[]): Promise<void> {
    for (const entry of batch) {
      onBatch?.(1);
      await store.placeEntries([entry.bid]).then(([outcome]) => {
        if (outcome) entry.resolve(outcome);
        else entry.reject(new Error("the placement returned no answer"));
      }, entry.reject);
    }
  }

  async function place(batch: Waiting[]): Promise<void> {
    onBatch?.(batch.length);
    try {
      const outcomes = await store.placeEntries(batch.map((entry) => entry.bid));
      for (const [index, entry] of batch.entries()) {
        const outcome = outcomes[index];
        if (outcome) entry.resolve(outcome);
        else entry.reject(new Error("the batch returned no answer for this bid"));
      }
    } catch (error) {
      if (batch.length > 1 && isRefusedData(error)) return placeAlone(batch);
      // One statement, one transaction: every bid fails as it would alone. Nothing of the batch
      // is stored, or (a connection lost during the commit) all of it, to arrive as broadcasts.
      for (const entry of batch) entry.reject(error);
    }
  }

  async function sendWaiting(): Promise<void> {
    try {
      while (waiting.length > 0) await place(waiting.splice(0, maxBatchSize));
    } finally {
      inFlight = false;
    }
  }

  return {
    place<T extends Placement>(bid: T) {
      return new Promise<OutcomeOf<T>>((resolve, reject) => {
        // The store answers each entry by its kind.
        waiting.push({ bid, resolve: (outcome) => resolve(outcome as OutcomeOf<T>), reject });
        if (inFlight) return;
        inFlight = true;
        setImmediate(() => void sendWaiting());
      });
    },
  };
}
