/**
 * Runs one long vitest run from a script (`npm run soak`, `npm run fuzz:http`) so that nothing it
 * starts outlives it: vitest in its own process group (stopped whole at the limit, and sent the
 * SIGINT or SIGTERM the script gets), every temp directory of the run below one of its own, and
 * the PostgreSQL clusters found there stopped before that directory is removed. The script exits
 * with vitest's code, or 1 when the limit stopped the run.
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stopClusterAt } from "./postgresCluster.ts";

/** What is left running after SIGTERM at the limit gets SIGKILL this much later. */
const KILL_GRACE_MS = 10_000;

export interface BoundedVitestRun {
  /** Starts every line the run prints ("soak", "fuzz:http"). */
  label: string;
  /** vitest's arguments after `run`: the test file and whatever the script was given. */
  args: string[];
  /** Added to this process's environment. */
  env: Record<string, string>;
  /** The run is stopped after `ms` and fails, printing `message`; none: as long as the tests take. */
  limit?: { ms: number; message: string };
  /** Put before "finished in" on the last line (a seed to replay). */
  summary?: string;
}

export async function runBoundedVitest({ label, args, env, limit, summary }: BoundedVitestRun): Promise<void> {
  // vitest's own command-line entry (its package "bin"), run with this Node.
  const vitest = fileURLToPath(new URL("vitest.mjs", import.meta.resolve("vitest/package.json")));
  // Every temp directory of the run (clusters, service data) goes below this one, so whatever a
  // stopped run leaves behind is found and removed, and nothing of anyone else's.
  const runTemp = await mkdtemp(join(tmpdir(), `nothing-${label.replaceAll(":", "-")}-`));
  await chmod(runTemp, 0o755);
  const started = Date.now();
  const run = spawn(process.execPath, [vitest, "run", ...args], {
    env: { ...process.env, ...env, TMPDIR: runTemp },
    stdio: "inherit",
    detached: true,
  });
  const signalGroup = (signal: NodeJS.Signals) => process.kill(-(run.pid as number), signal);

  let timedOut = false;
  const timer =
    limit &&
    setTimeout(() => {
      timedOut = true;
      console.error(`${label}: ${limit.message}`);
      signalGroup("SIGTERM");
      setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS).unref();
    }, limit.ms);

  process.once("SIGINT", signalGroup);
  process.once("SIGTERM", signalGroup);

  run.once("exit", async (code, signal) => {
    clearTimeout(timer);
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    const status = signal ?? `exit code ${code}`;
    console.log(`${label}: ${summary ? `${summary}, ` : ""}finished in ${minutes} min (${status})`);
    await removeRunTemp(runTemp);
    process.exit(timedOut ? 1 : (code ?? 1));
  });
}

/** PostgreSQL clusters daemonise out of the process group: stop any the run left running. */
async function removeRunTemp(runTemp: string): Promise<void> {
  const entries = await readdir(runTemp, { recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.endsWith("postmaster.pid")) await stopClusterAt(join(runTemp, entry, ".."));
  }
  await rm(runTemp, { recursive: true, force: true });
}
