/**
 * `npm run soak`: the fault tests of tests/service/faults.test.ts at soak scale (SOAK=1: 16 pages
 * and a troll, eight of each fault, thousands of bids, the operator hiding, restoring, blocking and
 * unblocking at the console during every other fault, 3 s rounds ending throughout), each printing
 * its accounting line. Bounded: the run is stopped after SOAK_LIMIT_MS (default 10 minutes) and
 * then fails.
 * Usage: node scripts/soak.ts [extra vitest arguments, e.g. -t "SIGKILL"]
 */
import { runBoundedVitest } from "./harness/boundedVitest.ts";

const DEFAULT_LIMIT_MS = 10 * 60_000;
const limitMs = Number(process.env.SOAK_LIMIT_MS ?? DEFAULT_LIMIT_MS);
if (!Number.isInteger(limitMs) || limitMs <= 0) {
  console.error(`SOAK_LIMIT_MS must be a positive integer, got "${process.env.SOAK_LIMIT_MS}"`);
  process.exit(2);
}

await runBoundedVitest({
  label: "soak",
  args: ["tests/service/faults.test.ts", ...process.argv.slice(2)],
  env: { SOAK: "1" },
  limit: { ms: limitMs, message: `stopped after the ${limitMs} ms limit` },
});
