/**
 * Realtime benchmark of the auction service (issue 5, DESIGN.md section 5). Starts the real
 * service (realtime/main.ts, as `npm run serve` does) once on a throwaway PostgreSQL 15 cluster with
 * durable settings and once on PGlite, drives it from load-generator processes of its own (so the
 * service's event loop is what is measured), and measures:
 *
 *  1. sockets held: a ramp to 10,000 sockets; the service's RSS and heap per socket;
 *  2. fan-out: 5,000 and 1,000 sockets, bids at 10/s and at saturation; latency to every socket
 *     (p50, p99, max) and broadcasts delivered per second;
 *  3. throughput: accepted bids/s with 1, 10 and 100 concurrent bidders, with the CPU used by the
 *     service, PostgreSQL and the generators, and the database alone (the same SQL with no service)
 *     as the evidence for where the ceiling is;
 *  4. the ceiling: the same saturated fan-out through a bare `ws` broadcast server (no database,
 *     no validation), and the service's delivered msgs/s as a ratio of it (bar: at least 0.8);
 *  5. a slow consumer: one socket that never reads among 1,000: the others' latency meanwhile
 *     (against the same phase without it), and when the service dropped it. The service runs with
 *     a small MAX_BUFFERED_BYTES here, and the slow socket also sends pings it never reads the
 *     answers to: the kernel buffers ~4 MB on loopback before ws's bufferedAmount counts at all,
 *     which broadcasts alone (~50 bids/s at 1,000 sockets on 2 cores) take minutes to fill;
 *  6. a reconnect storm: every socket cut and reopened at once, with `?after=` and with a snapshot.
 *
 * Definitions (also written into the results):
 *  - acceptance: the moment the bidder's process reads the service's `accepted` answer to its bid.
 *    The broadcast travels another path (NOTIFY, LISTEN, fan-out), so a socket can read it before
 *    the bidder reads its answer: such latencies are negative. Latencies are also given from the
 *    moment the bid was sent, which includes the insert and is never negative; the bar is judged on
 *    that stricter figure.
 *  - latency: from that moment to the moment a receiving socket's process reads the broadcast.
 *    Every process runs on this machine, so all use the same wall clock, read with sub-millisecond
 *    resolution (performance.timeOrigin + performance.now()).
 *  - saturation: bidders in a closed loop (the next bid once the answer came), with at most
 *    SATURATION_WINDOW accepted bids not yet read by every receiving socket, so the service is kept
 *    busy without the receivers falling behind without bound.
 *  - delivered msgs/s: broadcasts read by all receiving sockets within the bidding window, divided
 *    by its length.
 *
 * Usage: npm run bench:realtime [-- --quick] [--backend postgres|pglite] [--only slow]
 * The phases live one to a module in scripts/bench-realtime/phases/; this file runs them and writes the results.
 *   --only slow: the slow-consumer phase alone (results in realtime-<date>[-quick]-slow.json).
 *   (before the npm script exists: npx node scripts/bench-realtime.ts --quick)
 * Prints one line per measurement; writes everything to bench/results/realtime-<date>.json
 * (realtime-<date>-quick.json with --quick, small counts for a smoke test of about a minute).
 * All traffic goes to 127.0.0.1. Every wait is bounded; every child process is killed on exit.
 */
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { thousands } from "./bench-realtime/format.ts";
import { type CeilingReport, runBare } from "./bench-realtime/phases/ceiling.ts";
import { runSlowConsumer, type SlowConsumerReport } from "./bench-realtime/phases/slowConsumer.ts";
import {
  type Backend,
  FULL,
  LONG_BROADCAST_FRAME_BYTES,
  type Plan,
  PONG_FRAME_BYTES,
  QUICK,
  RESULTS_DIR,
  ROOT,
  SATURATION_BIDDERS,
  SATURATION_WINDOW,
  SLOW_CONSUMER_MAX_BUFFERED_BYTES,
} from "./bench-realtime/plan.ts";
import { type BackendReport, runBackend } from "./bench-realtime/runBackend.ts";
import { startDurableCluster } from "./bench-realtime/service.ts";
import { errorMessage } from "./support/childProcess.ts";
import type { PostgresCluster } from "./support/postgresCluster.ts";

const USAGE = "usage: npm run bench:realtime -- [--quick] [--backend postgres|pglite] [--only slow]";

/** The command line, through node:util's parseArgs: an unknown or malformed option is an error. */
function readOptions(args: string[]): { plan: Plan; backends: Backend[]; onlySlow: boolean } {
  const { values } = parseArgs({
    args,
    options: { quick: { type: "boolean", default: false }, backend: { type: "string" }, only: { type: "string" } },
    strict: true,
    allowPositionals: false,
  });
  if (values.only !== undefined && values.only !== "slow") {
    throw new Error(`--only takes slow, got "${values.only}"`);
  }
  if (values.backend !== undefined && values.backend !== "postgres" && values.backend !== "pglite") {
    throw new Error(`--backend takes postgres or pglite, got "${values.backend}"`);
  }
  return {
    plan: values.quick ? QUICK : FULL,
    backends: values.backend ? [values.backend] : ["postgres", "pglite"],
    onlySlow: values.only === "slow",
  };
}

async function packageVersion(name: string): Promise<string> {
  const text = await readFile(join(ROOT, "node_modules", name, "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

async function writeResults(results: object, isoDate: string, quick: boolean, onlySlow: boolean): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  // A smoke test or a single phase never overwrites the figures of a full run.
  const file = join(
    RESULTS_DIR,
    `realtime-${isoDate.slice(0, 10)}${quick ? "-quick" : ""}${onlySlow ? "-slow" : ""}.json`,
  );
  await writeFile(`${file}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
  return file;
}

function bars(backends: BackendReport[], ceiling: CeilingReport): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const report of backends) {
    const bar1000 = report.fanOut.find((entry) => entry.sockets <= 1_000 && entry.load === "10/s");
    lines.push({
      backend: report.backend,
      socketsHeld: report.held.held,
      rssBytesPerSocket: report.held.rssBytesPerSocket,
      p99SendToSocketMsAt10PerSecond: bar1000?.latencyFromSend.p99Ms,
      p50SendToSocketMsAt10PerSecond: bar1000?.latencyFromSend.p50Ms,
      p99Under50Ms: bar1000 ? bar1000.latencyFromSend.p99Ms < 50 : null,
      saturationRatioToBareWs: report.fanOut
        .filter((entry) => entry.load === "saturation")
        .map((entry) => {
          const bare = ceiling.fanOut.find((other) => other.load === "saturation" && other.sockets === entry.sockets);
          const ratio = bare ? Math.round((entry.deliveredPerSecond / bare.deliveredPerSecond) * 100) / 100 : null;
          return { sockets: entry.sockets, ratio, atLeast08: ratio === null ? null : ratio >= 0.8 };
        }),
      acceptedBidsPerSecond: Object.fromEntries(
        report.throughput.map((entry) => [entry.bidders, entry.acceptedPerSecond]),
      ),
    });
  }
  return lines;
}

async function main(): Promise<void> {
  let options: ReturnType<typeof readOptions>;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (error) {
    // parseArgs's own errors (an unknown option, a missing value) and ours: both are usage errors.
    console.error(`bench:realtime: ${errorMessage(error)}\n${USAGE}`);
    process.exit(2);
  }
  const { plan, backends, onlySlow } = options;
  const startedAt = Date.now();
  const tempDir = await mkdtemp(join(os.tmpdir(), "bench-realtime-"));
  // The postgres user must traverse it to reach its cluster.
  await chmod(tempDir, 0o755);
  let cluster: PostgresCluster | null = null;
  const cleanUp = async () => {
    await cluster?.destroy();
    await rm(tempDir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void cleanUp().finally(() => process.exit(130));
  });
  try {
    let postgresInfo: { version: string; settings: Record<string, string> } | null = null;
    const reports: BackendReport[] = [];
    const slowOnly: (SlowConsumerReport & { backend: Backend })[] = [];
    for (const backend of backends) {
      if (backend === "postgres") {
        const started = await startDurableCluster(tempDir);
        cluster = started.cluster;
        postgresInfo = { version: started.version, settings: started.settings };
        console.log(`PostgreSQL ${started.version} cluster: ${JSON.stringify(started.settings)}`);
      }
      const backendCluster = backend === "postgres" ? cluster : null;
      if (onlySlow) {
        slowOnly.push({ backend, ...(await runSlowConsumer(backend, plan, tempDir, backendCluster)) });
      } else {
        const report = await runBackend(backend, plan, tempDir, backendCluster);
        // On the first backend only, as before: it does not depend on the database.
        if (reports.length === 0) report.slowConsumer = await runSlowConsumer(backend, plan, tempDir, backendCluster);
        reports.push(report);
      }
      if (backend === "postgres") {
        await cluster?.destroy();
        cluster = null;
      }
    }
    // The ceiling is only compared with the fan-out phases, which --only slow skips.
    const ceiling = onlySlow ? null : await runBare(plan);
    for (const report of ceiling ? reports : []) {
      for (const entry of report.fanOut.filter((fanOut) => fanOut.load === "saturation")) {
        const bare = ceiling?.fanOut.find((other) => other.load === "saturation" && other.sockets === entry.sockets);
        if (!bare) continue;
        console.log(
          `${report.backend} vs bare ws, ${thousands(entry.sockets)} sockets saturated: ` +
            `${(entry.deliveredPerSecond / bare.deliveredPerSecond).toFixed(2)} (${thousands(entry.deliveredPerSecond)} / ${thousands(bare.deliveredPerSecond)} msgs/s)`,
        );
      }
    }

    const date = new Date().toISOString();
    const cpus = os.cpus();
    const machine = {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? "unknown",
      node: process.version,
      postgres: postgresInfo?.version ?? null,
      postgresSettings: postgresInfo?.settings ?? null,
      pglite: await packageVersion("@electric-sql/pglite"),
      ws: await packageVersion("ws"),
      totalMemoryBytes: os.totalmem(),
      loadAverageAtEnd: os.loadavg(),
      platform: `${os.platform()} ${os.release()}`,
    };
    const results = {
      date,
      quick: plan.quick,
      durationSeconds: Math.round((Date.now() - startedAt) / 1000),
      machine,
      plan,
      definitions: {
        acceptance:
          "the bidder's process reads the service's `accepted` answer (a socket may read the broadcast first: negative latency)",
        latencyFromSend: "from the bidder sending the bid (includes the insert); the bar is judged on this",
        saturation: `closed-loop bidders (${SATURATION_BIDDERS}), at most ${SATURATION_WINDOW} accepted bids not yet read by every receiving socket`,
        deliveredPerSecond:
          "broadcasts read by all receiving sockets within the bidding window (after a warm-up) per second",
        clock: "performance.timeOrigin + performance.now() in every process, one machine",
        slowConsumer: `one paused socket (never reads) on top of the reading ones, on a service with MAX_BUFFERED_BYTES=${SLOW_CONSUMER_MAX_BUFFERED_BYTES}; it receives every broadcast (saturation, ${LONG_BROADCAST_FRAME_BYTES}-byte frames) and sends pings at pingsPerSecond (${PONG_FRAME_BYTES}-byte pongs); bytes sent = broadcasts accepted and pings sent before the drop times those frame sizes (an estimate: the service does not count per-socket bytes); bufferedBytesAtDrop is the service's own figure`,
      },
      ...(ceiling
        ? { bars: bars(reports, ceiling), backends: reports, ceiling }
        : { only: "slow", slowConsumer: slowOnly }),
    };
    const file = await writeResults(results, date, plan.quick, onlySlow);
    console.log(`results written to ${relative(ROOT, file)} (${results.durationSeconds} s)`);
  } finally {
    await cleanUp();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench:realtime failed: ${errorMessage(error)}`);
    process.exit(1);
  },
);
