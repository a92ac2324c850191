/**
 * The database's own ceiling (DESIGN.md 6c): plain INSERTs with a NOTIFY trigger at a fixed
 * concurrency, on the same cluster as the service's phases, in a child process of its own
 * (insertLoad.ts) so this process measures nothing it also runs. The bar for bids decided per second.
 */
import { once } from "node:events";
import type { InsertLoadResult } from "../insertLoad.ts";
import { INSERT_LOAD_FILE, ROOT } from "../plan.ts";
import { spawnNode, withTimeout } from "../processes.ts";

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
  const child = spawnNode(INSERT_LOAD_FILE, [JSON.stringify({ ...target, concurrency, durationMs })], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  const [code] = (await withTimeout(once(child, "exit"), durationMs + 120_000, "the plain-insert run")) as [number];
  if (code !== 0) throw new Error(`the plain-insert run exited with code ${code}`);
  const result = JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as InsertLoadResult;
  return { concurrency, on: "databaseUrl" in target ? "postgres" : "pglite", ...result };
}
