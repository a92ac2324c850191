/**
 * Realtime benchmark of the auction service (issue 5, docs/design.md#5). Starts the real
 * service (service/main.ts, as `npm run serve` does) once on a throwaway PostgreSQL 15 cluster with
 * durable settings and once on PGlite, drives it from load-generator processes of its own (so the
 * service's event loop is what is measured), and measures:
 *
 *  1. sockets held: a ramp to 10,000 sockets; the service's RSS and heap per socket;
 *  2. fan-out: 5,000 and 1,000 sockets, bids at 10/s and at saturation; latency to every socket
 *     (p50, p99, max) and broadcasts delivered per second;
 *  3. throughput (docs/design.md#6c): first the database's own ceiling, plain INSERTs with a NOTIFY
 *     trigger at concurrency 16 into a table of their own (no service); then bids with 1, 10 and 100
 *     concurrent bidders through the service: bids decided by the database per second (the
 *     service's auction_bids_decided_total), accepted per second, bid to answer (p50, p99), the
 *     group-commit batches (auction_bid_batch_size), the CPU used by the service, PostgreSQL and
 *     the generators and what PostgreSQL's backends waited on; and place_auction_bid alone (the
 *     same SQL with no service) as the evidence for where a one-bid-per-commit ceiling is;
 *  4. the ceiling: the same saturated fan-out through a bare `ws` broadcast server (no database,
 *     no validation, one prebuilt frame written to every socket), measured right after each of the
 *     service's saturated phases at the same size, and the service as a ratio of it, in delivered
 *     msgs/s and in CPU per delivered message (bar: at least 0.8 on both); then, for information,
 *     a bare server that also writes a turn's frames as one write per socket, as the service does;
 *  5. a slow consumer: one socket that never reads among 1,000: the others' latency meanwhile
 *     (against the same phase without it), and when the service dropped it. The service runs with
 *     a small MAX_BUFFERED_BYTES here, and the slow socket also sends pings it never reads the
 *     answers to: the kernel buffers ~4 MB on loopback before ws's bufferedAmount counts at all,
 *     which broadcasts alone (~50 bids/s at 1,000 sockets on 2 cores) take minutes to fill;
 *  6. a reconnect storm: every socket cut and reopened at once, with `?after=` and with a snapshot;
 *  7. conflation (docs/design.md#10, PostgreSQL only): two instances on the durable cluster, bidders
 *     on A at 10 bids/s and then as fast as the database decides, watchers on B that keep what
 *     their page would show; with the frame budget (MAX_FRAMES_PER_SECOND 20) and without it (0):
 *     watchers dropped, final states against the database's, latency from acceptance to a watcher
 *     showing the bid or a later state, frames per watcher per second, B's CPU. Phases 1 to 6 run
 *     with the budget off (one frame per bid), as they were measured before it.
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
 *    by its length. The receiving sockets only count broadcasts (rawSocket.ts), so that the
 *    generators are not what saturates first.
 *  - bids decided by the database: accepted, or refused there as too low (refusals by the
 *    instance's own pre-check are not counted); bid to answer: from the bidder sending a bid to
 *    reading its answer.
 *
 * Usage: npm run bench:realtime [-- --quick] [--backend postgres|pglite] [--only slow|conflation]
 *          [--watchers N] [--bidders N] [--seconds S] [--baseline REV] [--current REV]
 *          [--without-index NAME] [--plain-too] [--rounds N]
 * The phases live one to a module in scripts/bench-realtime/phases/; this file runs them and writes the results.
 *   --only slow: the slow-consumer phase alone (results in realtime-<date>[-quick]-slow.json).
 *   --only conflation: the conflation phase alone (realtime-<date>[-quick]-conflation.json);
 *   --watchers, --bidders, --seconds: its size (2,000 watchers, 100 bidders, 10 s per load; --quick
 *   200, 20, 2 s).
 *   --baseline REV: the throughput phase alone (bench-realtime/againstBaseline.ts), this tree's
 *   service against REV's (a copy from git archive), alternating, on one database kind (postgres
 *   unless --backend), --rounds times (5; --quick 2), with the plain-insert ceiling; results in
 *   realtime-<date>[-quick]-baseline.json. --current REV measures REV's files instead of the
 *   working tree's (others' uncommitted work stays out); --without-index NAME adds this tree with
 *   that index dropped (postgres only). Against a service that knows secret maximums, one bidder
 *   in 10 keeps one (plain bids only for one that does not); --plain-too adds this tree with plain
 *   bids only, the mix an earlier release gets.
 * Prints one line per measurement; writes everything to bench/results/realtime-<date>.json
 * (realtime-<date>-quick.json with --quick, small counts for a smoke test of about a minute).
 * All traffic goes to 127.0.0.1. Every wait is bounded; every child process is killed on exit.
 */
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { baselineTable, type Contender, runAgainstBaseline } from "./bench-realtime/againstBaseline.ts";
import { thousands } from "./bench-realtime/format.ts";
import {
  BARE_SERVER_DESCRIPTION,
  type Ceiling,
  COALESCED_BARE_SERVER_DESCRIPTION,
  startCeiling,
} from "./bench-realtime/phases/ceiling.ts";
import { type ConflationReport, runConflation } from "./bench-realtime/phases/conflation.ts";
import type { FanOutReport } from "./bench-realtime/phases/fanOut.ts";
import { runSlowConsumer, type SlowConsumerReport } from "./bench-realtime/phases/slowConsumer.ts";
import type { ThroughputReport } from "./bench-realtime/phases/throughput.ts";
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
import { errorMessage } from "./harness/childProcess.ts";
import { codeState, packageVersion } from "./harness/codeState.ts";
import { readCommandLine } from "./harness/commandLine.ts";
import { checkoutRevision, describeRevision } from "./harness/gitRevision.ts";
import { describeMachine } from "./harness/machine.ts";
import type { PostgresCluster } from "./harness/postgresCluster.ts";

const USAGE =
  "usage: npm run bench:realtime -- [--quick] [--backend postgres|pglite] [--only slow|conflation] " +
  "[--watchers N] [--bidders N] [--seconds S] [--baseline REV] [--current REV] [--without-index NAME] " +
  "[--plain-too] [--rounds N]";

type Only = "slow" | "conflation" | null;

/** --baseline / --without-index: the throughput phase alone, this tree against other contenders. */
interface Comparison {
  baseline: string | null;
  /** The revision measured as "this tree" instead of the working tree (others' uncommitted work stays out). */
  current: string | null;
  withoutIndex: string | null;
  /** Adds this tree with plain bids only, beside its run with maximums in the mix. */
  plainToo: boolean;
  rounds: number;
}

/** A whole number of at least 1 from the command line, or the plan's own when not given. */
function positiveOption(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`--${name} takes a whole number of at least 1, got "${value}"`);
  return parsed;
}

/** The command line, through node:util's parseArgs: an unknown or malformed option is an error. */
function readOptions(args: string[]): {
  plan: Plan;
  backends: Backend[];
  only: Only;
  comparison: Comparison | null;
} {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: "boolean", default: false },
      backend: { type: "string" },
      only: { type: "string" },
      watchers: { type: "string" },
      bidders: { type: "string" },
      seconds: { type: "string" },
      baseline: { type: "string" },
      current: { type: "string" },
      "without-index": { type: "string" },
      "plain-too": { type: "boolean", default: false },
      rounds: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.only !== undefined && values.only !== "slow" && values.only !== "conflation") {
    throw new Error(`--only takes slow or conflation, got "${values.only}"`);
  }
  if (values.backend !== undefined && values.backend !== "postgres" && values.backend !== "pglite") {
    throw new Error(`--backend takes postgres or pglite, got "${values.backend}"`);
  }
  const only = values.only ?? null;
  // Two instances share one database: only PostgreSQL can hold them.
  if (only === "conflation" && values.backend === "pglite") throw new Error("--only conflation runs on postgres only");
  const base = values.quick ? QUICK : FULL;
  const plan: Plan = {
    ...base,
    conflationWatchers: positiveOption("watchers", values.watchers, base.conflationWatchers),
    conflationBidders: positiveOption("bidders", values.bidders, base.conflationBidders),
    conflationMs: positiveOption("seconds", values.seconds, base.conflationMs / 1000) * 1000,
  };
  const comparing = values.baseline !== undefined || values["without-index"] !== undefined || values["plain-too"];
  if (comparing && only)
    throw new Error("--baseline, --without-index and --plain-too run the throughput phase alone, not --only");
  if ((values.rounds !== undefined || values.current !== undefined) && !comparing) {
    throw new Error("--rounds and --current go with --baseline, --without-index or --plain-too");
  }
  if (values["without-index"] !== undefined && values.backend === "pglite") {
    throw new Error("--without-index runs on postgres only");
  }
  const comparison: Comparison | null = comparing
    ? {
        baseline: values.baseline ?? null,
        current: values.current ?? null,
        withoutIndex: values["without-index"] ?? null,
        plainToo: values["plain-too"] ?? false,
        rounds: positiveOption("rounds", values.rounds, plan.quick ? 2 : 5),
      }
    : null;
  return {
    plan,
    // A comparison runs every contender on the same database kind: PostgreSQL unless told.
    backends: values.backend
      ? [values.backend]
      : only === "conflation" || comparing
        ? ["postgres"]
        : ["postgres", "pglite"],
    only,
    comparison,
  };
}

/** `part`: a run of one part (--only's phase, or "baseline"), kept beside the full run's file. */
async function writeResults(results: object, isoDate: string, quick: boolean, part: string | null): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  // A smoke test or a single phase never overwrites the figures of a full run.
  const file = join(
    RESULTS_DIR,
    `realtime-${isoDate.slice(0, 10)}${quick ? "-quick" : ""}${part ? `-${part}` : ""}.json`,
  );
  await writeFile(`${file}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
  return file;
}

const ratio = (value: number) => Math.round(value * 100) / 100;
const verdict = (passed: boolean) => (passed ? "pass" : "FAIL");

/**
 * The service against bare ws at one saturated fan-out size: delivered msgs/s and CPU per delivered
 * message. Against the bare server that writes one frame at a time (the bar), or with `coalesced`
 * the one that coalesces a turn's writes as the service does (for information).
 */
function againstBare(entry: FanOutReport, report: BackendReport, coalesced = false) {
  // Paired in order: the n-th saturated phase of the service with the n-th of bare ws, at the same planned size.
  const bares = coalesced ? report.coalescedBareFanOut : report.bareFanOut;
  const bare = bares[report.fanOut.filter((fanOut) => fanOut.load === "saturation").indexOf(entry)];
  if (!bare) return null;
  const delivered = ratio(entry.deliveredPerSecond / bare.deliveredPerSecond);
  const cpuPerMessage = ratio(bare.serviceCpuMicrosecondsPerMessage / entry.serviceCpuMicrosecondsPerMessage);
  return { bare, delivered, cpuPerMessage, passed: delivered >= 0.8 && cpuPerMessage >= 0.8 };
}

/** Each saturated fan-out of the service with its ratios to one of the bare servers (see againstBare). */
function ratiosToBare(report: BackendReport, coalesced: boolean) {
  return report.fanOut
    .filter((entry) => entry.load === "saturation")
    .map((entry) => {
      const against = againstBare(entry, report, coalesced);
      const ratios = {
        sockets: entry.sockets,
        ratio: against?.delivered ?? null,
        cpuPerMessageRatio: against?.cpuPerMessage ?? null,
        bareCpuMicrosecondsPerMessage: against?.bare.serviceCpuMicrosecondsPerMessage ?? null,
      };
      return { entry, against, ratios };
    });
}

/** The bars (docs/design.md#5 and 6c) per backend, for the JSON; printBars prints the same. */
function bars(backends: BackendReport[]): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const report of backends) {
    const bar1000 = report.fanOut.find((entry) => entry.sockets <= 1_000 && entry.load === "10/s");
    const insertRate = report.insertCeiling.rowsPerSecond;
    const decided = (bidders: number) =>
      report.throughput.find((entry) => entry.bidders === bidders)?.decidedPerSecond ?? Number.NaN;
    const perBidders = (value: (entry: ThroughputReport) => number) =>
      Object.fromEntries(report.throughput.map((entry) => [entry.bidders, value(entry)]));
    lines.push({
      backend: report.backend,
      socketsHeld: report.held.held,
      rssBytesPerSocket: report.held.rssBytesPerSocket,
      p99SendToSocketMsAt10PerSecond: bar1000?.latencyFromSend.p99Ms,
      p50SendToSocketMsAt10PerSecond: bar1000?.latencyFromSend.p50Ms,
      p99Under50Ms: bar1000 ? bar1000.latencyFromSend.p99Ms < 50 : null,
      saturationRatioToBareWs: ratiosToBare(report, false).map(({ entry, against, ratios }) => ({
        ...ratios,
        serviceCpuMicrosecondsPerMessage: entry.serviceCpuMicrosecondsPerMessage,
        atLeast08: against?.passed ?? null,
      })),
      saturationRatioToCoalescedBareWs: ratiosToBare(report, true).map(({ ratios }) => ratios),
      plainInsertRowsPerSecond: insertRate,
      decidedBidsPerSecond: perBidders((entry) => entry.decidedPerSecond),
      acceptedBidsPerSecond: perBidders((entry) => entry.acceptedPerSecond),
      p99BidToAnswerMs: perBidders((entry) => entry.bidToAnswer.p99Ms),
      decidedAt10AtLeastPlainInsert: decided(10) >= insertRate,
      decidedAt100AtLeastPlainInsert: decided(100) >= insertRate,
      decidedAt100AtLeastAt1: decided(100) >= decided(1),
    });
  }
  return lines;
}

/** "delivered r (service / bare msgs/s), CPU per delivered msg r (bare µs / service µs)". */
function ratioText(entry: FanOutReport, against: NonNullable<ReturnType<typeof againstBare>>): string {
  return (
    `delivered ${against.delivered} (${thousands(entry.deliveredPerSecond)} / ${thousands(against.bare.deliveredPerSecond)} msgs/s), ` +
    `CPU per delivered msg ${against.cpuPerMessage} (bare ${against.bare.serviceCpuMicrosecondsPerMessage} µs / ` +
    `service ${entry.serviceCpuMicrosecondsPerMessage} µs)`
  );
}

/** One line per bar, with the figures it is judged on. */
function printBars(backends: BackendReport[]): void {
  for (const report of backends) {
    const name = report.backend === "postgres" ? "PostgreSQL" : "PGlite";
    // docs/design.md#6c judges durable PostgreSQL; PGlite's figures are the same measurements, for information.
    const judged = report.backend === "postgres" ? "" : " (for information: 6c judges PostgreSQL)";
    const insertRate = report.insertCeiling.rowsPerSecond;
    const at = (bidders: number) => report.throughput.find((entry) => entry.bidders === bidders);
    for (const bidders of [10, 100]) {
      const entry = at(bidders);
      if (!entry) continue;
      console.log(
        `bar 6c ${name}: bids decided by the database/s at ${bidders} bidders ≥ the plain INSERT rate: ` +
          `${thousands(entry.decidedPerSecond)} vs ${thousands(insertRate)} rows/s (${ratio(entry.decidedPerSecond / insertRate)}×): ` +
          `${verdict(entry.decidedPerSecond >= insertRate)}${judged}`,
      );
    }
    const one = at(1);
    const hundred = at(100);
    if (one && hundred) {
      console.log(
        `bar 6c ${name}: decided/s at 100 bidders ≥ at 1: ${thousands(hundred.decidedPerSecond)} vs ${thousands(one.decidedPerSecond)}: ` +
          `${verdict(hundred.decidedPerSecond >= one.decidedPerSecond)}${judged}`,
      );
    }
    console.log(
      `6c ${name}: bid→answer p99 (p50) at ${report.throughput.map((entry) => entry.bidders).join(" / ")} bidders: ` +
        `${report.throughput.map((entry) => `${entry.bidToAnswer.p99Ms} (${entry.bidToAnswer.p50Ms})`).join(" / ")} ms; ` +
        `accepted/s ${report.throughput.map((entry) => thousands(entry.acceptedPerSecond)).join(" / ")}`,
    );
    for (const entry of report.fanOut.filter((fanOut) => fanOut.load === "saturation")) {
      const against = againstBare(entry, report);
      if (!against) continue;
      const sockets = `${thousands(entry.sockets)} sockets saturated`;
      console.log(
        `bar 5/6c ${name} vs bare ws, ${sockets}, both ≥ 0.8: ${ratioText(entry, against)}: ${verdict(against.passed)}`,
      );
      const coalesced = againstBare(entry, report, true);
      if (!coalesced) continue;
      console.log(
        `6c ${name} vs bare ws with coalesced writes, ${sockets} (for information): ${ratioText(entry, coalesced)}`,
      );
    }
  }
}

async function main(): Promise<void> {
  const options = readCommandLine("bench:realtime", USAGE, readOptions);
  const { plan, backends, only, comparison } = options;
  const onlySlow = only === "slow";
  const startedAt = Date.now();
  const loadAverageAtStart = os.loadavg();
  const code = await codeState(["service", "sql", "src/lib/auction", "scripts/bench-realtime*"]);
  const served = code.modified.filter((file) => !file.startsWith("scripts/bench-realtime"));
  const bench = code.modified.length - served.length;
  console.log(
    `code at ${code.commit}` +
      (code.modified.length === 0
        ? ", no uncommitted changes"
        : `, uncommitted changes to ${[...served, ...(bench > 0 ? [`${bench} benchmark files`] : [])].join(", ")}`),
  );
  const tempDir = await mkdtemp(join(os.tmpdir(), "bench-realtime-"));
  // The postgres user must traverse it to reach its cluster.
  await chmod(tempDir, 0o755);
  let cluster: PostgresCluster | null = null;
  let ceiling: Ceiling | null = null;
  /** Revisions' copies (--baseline, --current), removed at the end. */
  const checkouts: string[] = [];
  const cleanUp = async () => {
    await ceiling?.stop();
    await cluster?.destroy();
    await rm(tempDir, { recursive: true, force: true });
    for (const checkout of checkouts) await rm(checkout, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void cleanUp().finally(() => process.exit(130));
  });
  try {
    if (comparison) {
      const backend = backends[0] ?? "postgres";
      const current: Contender = comparison.current
        ? {
            label: `current ${comparison.current}`,
            commit: await describeRevision(comparison.current),
            root: await checkoutRevision(comparison.current, "bench-realtime-current-"),
          }
        : { label: "this tree", commit: `${code.commit}${code.modified.length > 0 ? "+changes" : ""}`, root: ROOT };
      if (comparison.current) checkouts.push(current.root);
      const contenders: Contender[] = [current];
      if (comparison.plainToo) contenders.push({ ...current, label: `${current.label}, plain`, plainBids: true });
      if (comparison.withoutIndex) {
        contenders.push({
          ...current,
          label: `without ${comparison.withoutIndex}`,
          withoutIndex: comparison.withoutIndex,
        });
      }
      if (comparison.baseline) {
        const root = await checkoutRevision(comparison.baseline, "bench-realtime-baseline-");
        checkouts.push(root);
        contenders.push({
          label: `baseline ${comparison.baseline}`,
          commit: await describeRevision(comparison.baseline),
          root,
        });
      }
      let postgresInfo: { version: string; settings: Record<string, string> } | null = null;
      if (backend === "postgres") {
        const started = await startDurableCluster(tempDir);
        cluster = started.cluster;
        postgresInfo = { version: started.version, settings: started.settings };
        console.log(`PostgreSQL ${started.version} cluster: ${JSON.stringify(started.settings)}`);
      }
      const report = await runAgainstBaseline(backend, plan, comparison.rounds, contenders, tempDir, cluster);
      for (const line of baselineTable(report)) console.log(line);
      const date = new Date().toISOString();
      const results = {
        date,
        quick: plan.quick,
        durationSeconds: Math.round((Date.now() - startedAt) / 1000),
        machine: {
          ...describeMachine(),
          postgres: postgresInfo?.version ?? null,
          postgresSettings: postgresInfo?.settings ?? null,
          loadAverageAtStart,
          loadAverageAtEnd: os.loadavg(),
        },
        code,
        plan,
        comparison,
        ...report,
      };
      const file = await writeResults(results, date, plan.quick, "baseline");
      console.log(`results written to ${relative(ROOT, file)} (${results.durationSeconds} s)`);
      return;
    }
    let postgresInfo: { version: string; settings: Record<string, string> } | null = null;
    const reports: BackendReport[] = [];
    const slowOnly: (SlowConsumerReport & { backend: Backend })[] = [];
    let conflation: ConflationReport | null = null;
    // Beside the fan-out phases, which --only skips.
    ceiling = only ? null : await startCeiling(plan);
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
      } else if (only === "conflation") {
        if (backendCluster) conflation = await runConflation(plan, tempDir, backendCluster);
      } else {
        const report = await runBackend(backend, plan, tempDir, backendCluster, ceiling);
        // On the first backend only, as before: it does not depend on the database.
        if (reports.length === 0) report.slowConsumer = await runSlowConsumer(backend, plan, tempDir, backendCluster);
        reports.push(report);
        if (backendCluster) conflation = await runConflation(plan, tempDir, backendCluster);
      }
      if (backend === "postgres") {
        await cluster?.destroy();
        cluster = null;
      }
    }
    await ceiling?.stop();
    ceiling = null;
    if (!only) printBars(reports);

    const date = new Date().toISOString();
    const machine = {
      ...describeMachine(),
      postgres: postgresInfo?.version ?? null,
      postgresSettings: postgresInfo?.settings ?? null,
      pglite: await packageVersion("@electric-sql/pglite"),
      ws: await packageVersion("ws"),
      loadAverageAtStart,
      loadAverageAtEnd: os.loadavg(),
    };
    const results = {
      date,
      quick: plan.quick,
      durationSeconds: Math.round((Date.now() - startedAt) / 1000),
      machine,
      code,
      plan,
      definitions: {
        acceptance:
          "the bidder's process reads the service's `accepted` answer (a socket may read the broadcast first: negative latency)",
        latencyFromSend: "from the bidder sending the bid (includes the insert); the bar is judged on this",
        saturation: `closed-loop bidders (${SATURATION_BIDDERS}), at most ${SATURATION_WINDOW} accepted bids not yet read by every receiving socket`,
        deliveredPerSecond:
          "broadcasts read by all receiving sockets within the bidding window (after a warm-up) per second; the sockets only count broadcasts (a frame header and the id read at a fixed offset), reading the clock once per TCP read",
        serviceCpuMicrosecondsPerMessage:
          "the server's CPU time over the whole fan-out phase (accepting bids and delivering them) divided by the broadcasts delivered to the receiving sockets; the ratio to bare ws is bare's figure over the service's",
        decidedPerSecond:
          "bids the database decided (auction_bids_decided_total accepted + too_low, from the service's /metrics over the phase) per second; refusals by the instance's own pre-check are not counted",
        bidToAnswer: "from a bidder sending a bid to reading its answer (accepted or refused), closed loop",
        batchSizes:
          "the change of the service's auction_bid_batch_size histogram over the phase: bids per placement transaction (group commit)",
        plainInsert:
          "INSERT of one row per statement (autocommit) into a table of its own with an AFTER INSERT trigger calling pg_notify on a channel of its own, one connection LISTENing, at insertConcurrency for throughputMs, on the same cluster between the service's phases; dropped afterwards",
        waits:
          "pg_stat_activity sampled every 50 ms: mean active client backends per wait event ('running': active, no wait)",
        clock: "performance.timeOrigin + performance.now() in every process, one machine",
        slowConsumer: `one paused socket (never reads) on top of the reading ones, on a service with MAX_BUFFERED_BYTES=${SLOW_CONSUMER_MAX_BUFFERED_BYTES}; it receives every broadcast (saturation, ${LONG_BROADCAST_FRAME_BYTES}-byte frames) and sends pings at pingsPerSecond (${PONG_FRAME_BYTES}-byte pongs); bytes sent = broadcasts accepted and pings sent before the drop times those frame sizes (an estimate: the service does not count per-socket bytes); bufferedBytesAtDrop is the service's own figure`,
        frameBudget:
          "phases 1 to 6 run with MAX_FRAMES_PER_SECOND=0 (one frame per bid, as measured before the budget); the conflation phase runs each budget on a fresh pair of instances",
        conflation:
          "two instances on the durable cluster; bidders on A (10/s paced, then closed-loop with no window: as fast as the database decides); watchers on B read every bid frame (one bid or several) at fixed offsets and keep the newest id, the bidder count and the newest 50 ids; latency from each accepted bid's acceptance (or sending) to each sampled watcher's first frame whose newest id is at or above it (40 watchers per generator, spread over the order they connected); frames per watcher per second within the window after the warm-up, in whole 100 ms buckets, every watcher (those dropped until then); final state: each open watcher against a fresh snapshot read through A after every watcher caught up (bounded); dropped: watchers the service closed; cpu: each process's CPU over the bidding, in cores",
      },
      ...(only === "slow"
        ? { only: "slow", slowConsumer: slowOnly }
        : only === "conflation"
          ? { only: "conflation", conflation }
          : {
              bars: bars(reports),
              backends: reports,
              conflation,
              ceiling: { server: BARE_SERVER_DESCRIPTION, coalescedServer: COALESCED_BARE_SERVER_DESCRIPTION },
            }),
    };
    const file = await writeResults(results, date, plan.quick, only);
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
