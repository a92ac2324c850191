/**
 * `npm run soak`: the fault tests of tests/realtime/faults.test.ts at soak scale (SOAK=1: 16 pages,
 * eight of each fault, thousands of bids), each printing its accounting line. Bounded: the run is
 * stopped after SOAK_LIMIT_MS (default 10 minutes) and then fails.
 * Usage: node scripts/soak.ts [extra vitest arguments, e.g. -t "SIGKILL"]
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopClusterAt } from "./support/postgresCluster.ts";

const DEFAULT_LIMIT_MS = 10 * 60_000;
const limitMs = Number(process.env.SOAK_LIMIT_MS ?? DEFAULT_LIMIT_MS);
if (!Number.isInteger(limitMs) || limitMs <= 0) {
  console.error(`SOAK_LIMIT_MS must be a positive integer, got "${process.env.SOAK_LIMIT_MS}"`);
  process.exit(2);
}

// vitest's own command-line entry (its package "bin"), run with this Node.
const vitest = fileURLToPath(new URL("vitest.mjs", import.meta.resolve("vitest/package.json")));
// Every temp directory of the run (clusters, service data) goes below this one, so whatever a run
// stopped at the limit leaves behind is found and removed, and nothing of anyone else's.
const runTemp = await mkdtemp(join(tmpdir(), "nothing-soak-"));
await chmod(runTemp, 0o755);
const started = Date.now();
// Its own process group, so the limit stops vitest and the services it started.
const run = spawn(process.execPath, [vitest, "run", "tests/realtime/faults.test.ts", ...process.argv.slice(2)], {
  env: { ...process.env, SOAK: "1", TMPDIR: runTemp },
  stdio: "inherit",
  detached: true,
});

let timedOut = false;
const limit = setTimeout(() => {
  timedOut = true;
  console.error(`soak: stopped after the ${limitMs} ms limit`);
  process.kill(-(run.pid as number), "SIGTERM");
  // Whatever ignores SIGTERM goes a little later.
  setTimeout(() => process.kill(-(run.pid as number), "SIGKILL"), 10_000).unref();
}, limitMs);

const forward = (signal: NodeJS.Signals) => process.kill(-(run.pid as number), signal);
process.once("SIGINT", forward);
process.once("SIGTERM", forward);

/** PostgreSQL clusters daemonise out of the process group: stop any the run left running. */
async function removeRunTemp() {
  const entries = await readdir(runTemp, { recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.endsWith("postmaster.pid")) await stopClusterAt(join(runTemp, entry, ".."));
  }
  await rm(runTemp, { recursive: true, force: true });
}

run.once("exit", async (code, signal) => {
  clearTimeout(limit);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  console.log(`soak: finished in ${minutes} min (${signal ?? `exit code ${code}`})`);
  await removeRunTemp();
  process.exit(timedOut ? 1 : (code ?? 1));
});
