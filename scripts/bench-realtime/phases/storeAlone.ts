/**
 * The database alone: place_auction_bid with no service in front (lone bids at a concurrency, or
 * the service's batches one transaction at a time), the evidence for where the ceiling is.
 */
import { once } from "node:events";
import { ROOT, STORE_LOAD_FILE } from "../plan.ts";
import { spawnNode, withTimeout } from "../processes.ts";

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
  const child = spawnNode(STORE_LOAD_FILE, [JSON.stringify({ ...options, durationMs })], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  const [code] = (await withTimeout(once(child, "exit"), durationMs + 120_000, "the store-alone run")) as [number];
  if (code !== 0) throw new Error(`the store-alone run exited with code ${code}`);
  const result = JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as StoreAloneReport;
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
