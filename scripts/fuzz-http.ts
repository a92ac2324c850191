/**
 * `npm run fuzz:http`: the HTTP hostile-input property of tests/realtime/httpFuzz.test.ts for
 * minutes instead of seconds, on both backends, with a new seed each run (printed, with the
 * request and status counts, so a finding can be replayed with FC_SEED).
 *
 *   FUZZ_HTTP_SECONDS   time budget for the whole run, split between the backends (default 180)
 *   FUZZ_HTTP_RUNS      or a number of batches per backend instead
 *   FC_SEED             replay a seed
 *
 * Usage: node scripts/fuzz-http.ts [extra vitest arguments, e.g. -t pglite]
 */
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopClusterAt } from "./support/postgresCluster.ts";

const DEFAULT_SECONDS = 180;
/** Setup (a PostgreSQL cluster, a PGlite template, the site) and teardown on top of the budget. */
const OVERHEAD_MS = 5 * 60_000;

function positiveInteger(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    console.error(`${name} must be a positive integer, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

const runs = positiveInteger("FUZZ_HTTP_RUNS");
const seconds = positiveInteger("FUZZ_HTTP_SECONDS") ?? (runs === undefined ? DEFAULT_SECONDS : undefined);
const seed = process.env.FC_SEED ?? String(randomInt(2 ** 31));
console.log(
  `fuzz:http: seed ${seed} (FC_SEED=${seed} to replay), ` +
    [seconds && `${seconds} s budget`, runs && `${runs} batches per backend`].filter(Boolean).join(", "),
);

const vitest = fileURLToPath(new URL("vitest.mjs", import.meta.resolve("vitest/package.json")));
// Every temp directory of the run goes below this one, so whatever a stopped run leaves is removed.
const runTemp = await mkdtemp(join(tmpdir(), "nothing-fuzz-http-"));
await chmod(runTemp, 0o755);
const started = Date.now();
const run = spawn(process.execPath, [vitest, "run", "tests/realtime/httpFuzz.test.ts", ...process.argv.slice(2)], {
  env: {
    ...process.env,
    FC_SEED: seed,
    ...(seconds ? { FUZZ_HTTP_SECONDS: String(seconds) } : {}),
    ...(runs ? { FUZZ_HTTP_RUNS: String(runs) } : {}),
    TMPDIR: runTemp,
  },
  stdio: "inherit",
  detached: true,
});

// fast-check stops itself at the budget; this only catches a run that hangs. With a number of
// batches and no budget, the run is as long as those take.
let timedOut = false;
const limit = seconds
  ? setTimeout(
      () => {
        timedOut = true;
        console.error(`fuzz:http: stopped ${OVERHEAD_MS / 60_000} min past the ${seconds} s budget`);
        process.kill(-(run.pid as number), "SIGTERM");
        setTimeout(() => process.kill(-(run.pid as number), "SIGKILL"), 10_000).unref();
      },
      seconds * 1_000 + OVERHEAD_MS,
    )
  : undefined;

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
  console.log(`fuzz:http: seed ${seed}, finished in ${minutes} min (${signal ?? `exit code ${code}`})`);
  await removeRunTemp();
  process.exit(timedOut ? 1 : (code ?? 1));
});
