/**
 * The database alone: place_auction_bid with no service in front (lone bids at a concurrency, or
 * the service's batches one transaction at a time), the evidence for where the ceiling is.
 */
import { STORE_LOAD_FILE } from "../plan.ts";
import { runMeasurement } from "../processes.ts";

export interface StoreAloneReport {
  concurrency?: number;
  synchronousCommit?: "on" | "off";
  /** Set for batches: bids per transaction, and the time each took from sending to its answer. */
  batchSize?: number;
  msPerBatch?: number;
  acceptedPerSecond: number;
  accepted: number;
  tooLow: number;
}

export async function measureStoreAlone(
  options: Record<string, unknown>,
  durationMs: number,
): Promise<StoreAloneReport> {
  const result = await runMeasurement<StoreAloneReport>(
    STORE_LOAD_FILE,
    { ...options, durationMs },
    durationMs + 120_000,
    "the store-alone run",
  );
  return {
    ...(options.batchSize
      ? { batchSize: options.batchSize as number, msPerBatch: result.msPerBatch }
      : { concurrency: options.concurrency as number }),
    ...(options.synchronousCommit ? { synchronousCommit: options.synchronousCommit as "on" | "off" } : {}),
    acceptedPerSecond: result.acceptedPerSecond,
    accepted: result.accepted,
    tooLow: result.tooLow,
  };
}
