/**
 * The database's own ceiling (docs/design.md#6c): plain INSERTs with a NOTIFY trigger at a fixed
 * concurrency, on the same cluster as the service's phases, in a child process of its own
 * (insertLoad.ts) so this process measures nothing it also runs. The bar for bids decided per second.
 */
import type { InsertLoadResult } from "../insertLoad.ts";
import { INSERT_LOAD_FILE } from "../plan.ts";
import { runMeasurement } from "../processes.ts";

export interface InsertCeilingReport extends InsertLoadResult {
  concurrency: number;
  /** "postgres" on the benchmark's durable cluster; "pglite" in a data directory of its own, one query at a time. */
  on: "postgres" | "pglite";
}

export async function measureInsertCeiling(
  target: { databaseUrl: string } | { dataDir: string },
  concurrency: number,
  durationMs: number,
): Promise<InsertCeilingReport> {
  const result = await runMeasurement<InsertLoadResult>(
    INSERT_LOAD_FILE,
    { ...target, concurrency, durationMs },
    durationMs + 120_000,
    "the plain-insert run",
  );
  return { concurrency, on: "databaseUrl" in target ? "postgres" : "pglite", ...result };
}
