/**
 * `npm run fuzz:http`: the HTTP hostile-input property of tests/service/http/httpFuzz.test.ts for
 * minutes instead of seconds, on both backends, with a new seed each run (printed, with the
 * request and status counts, so a finding can be replayed with FC_SEED).
 *
 *   FUZZ_HTTP_SECONDS   time budget for the whole run, split between the backends (default 180)
 *   FUZZ_HTTP_RUNS      or a number of batches per backend instead
 *   FC_SEED             replay a seed
 *
 * Usage: node scripts/fuzz-http.ts [extra vitest arguments, e.g. -t pglite]
 */
import { randomInt } from "node:crypto";
import { runBoundedVitest } from "./harness/boundedVitest.ts";

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

// fast-check stops itself at the budget; the limit only catches a run that hangs. With a number of
// batches and no budget, the run is as long as those take.
await runBoundedVitest({
  label: "fuzz:http",
  args: ["tests/service/http/httpFuzz.test.ts", ...process.argv.slice(2)],
  env: {
    FC_SEED: seed,
    ...(seconds ? { FUZZ_HTTP_SECONDS: String(seconds) } : {}),
    ...(runs ? { FUZZ_HTTP_RUNS: String(runs) } : {}),
  },
  limit: seconds
    ? {
        ms: seconds * 1_000 + OVERHEAD_MS,
        message: `stopped ${OVERHEAD_MS / 60_000} min past the ${seconds} s budget`,
      }
    : undefined,
  summary: `seed ${seed}`,
});
