/**
 * A frenzy on another instance (docs/design.md#10): two service processes on the durable
 * PostgreSQL cluster; bidders on A as fast as the database decides them (closed loop, no window),
 * and before that at 10 bids a second; watchers on B, each keeping what its page would show from
 * every bid frame. Once with the frame budget (MAX_FRAMES_PER_SECOND, the service's default 20)
 * and once without it (0), each on a fresh pair of instances. Measured per run: watchers the
 * service dropped, each watcher's final state against a fresh snapshot from A (the database's
 * state), latency from each bid's acceptance to each watcher reading a frame that shows it or a
 * later state, bid frames per watcher per second, and B's CPU.
 */
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { parseServerMessage } from "../../../src/lib/auction/protocol.ts";
import { errorMessage } from "../../harness/childProcess.ts";
import type { PostgresCluster } from "../../harness/postgresCluster.ts";
import { Fleet } from "../fleet.ts";
import { latencyText, thousands } from "../format.ts";
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.ts";
import type { BidResult, StateComparison, WatchedState, WatchResult } from "../loadGenerator.ts";
import { DRAIN_TIMEOUT_MS, type Plan } from "../plan.ts";
import { cpuSeconds, postgresPids, postmasterPid, startCpuSampling } from "../processes.ts";
import { openRawSocket } from "../rawSocket.ts";
import { type Service, startService } from "../service.ts";

/** The service's default budget, and off. */
const CONFLATION_BUDGETS = [20, 0] as const;
/** Bar (docs/design.md#10): B's CPU at full bid rate at most this times its CPU at 10 bids a second. */
const CPU_RATIO_BAR = 1.5;
/** Bar: p99 from a bid's acceptance to a watcher showing it or a later state, in ms. */
const P99_BAR_MS = 250;

interface ConflationRun {
  /** MAX_FRAMES_PER_SECOND on both instances; 0: off. */
  maxFramesPerSecond: number;
  load: "10/s" | "full";
  bidders: number;
  acceptedBids: number;
  bidsPerSecond: number;
  /** Watchers open when the run began, and how many the service closed during it. */
  watchersAtStart: number;
  watchersDropped: number;
  /** Every open watcher had the last accepted bid within DRAIN_TIMEOUT_MS of the bidding's end. */
  caughtUp: boolean;
  caughtUpAfterMs: number;
  /** Open watchers whose page equals a fresh snapshot from A, and the others. */
  finalState: StateComparison;
  /** Over the frames of a sample of the watchers (latencySample), spread over the order they connected. */
  latencyFromAcceptance: LatencySummary;
  latencyFromSend: LatencySummary;
  latencySample: number;
  /** Bid frames per watcher per second over the window (after a warm-up): the highest and the mean. */
  framesPerSocketPerSecond: { max: number; mean: number };
  mostFramesInOneSecond: number;
  /** B's, A's, PostgreSQL's and the generators' CPU while the bidders bid, in cores. */
  cpu: { serviceB: number; serviceA: number; postgres: number | null; generators: number; machineBusy: number };
  /** B's CPU per bid frame it wrote (the mean rate times the watchers that stayed), in µs: what a frame costs. */
  cpuPerFrameMicroseconds: number;
  duplicatesOrOutOfOrder: number;
  framesNotRecorded: number;
  unreadableFrames: number;
}

interface ConflationBars {
  maxFramesPerSecond: number;
  noWatcherDropped: boolean;
  everyFinalStateEqual: boolean;
  p99FromAcceptanceMs: number;
  p99Under250Ms: boolean;
  framesPerSocketPerSecondMax: number;
  framesWithinBudget: boolean;
  cpuFullOver10PerSecond: number;
  cpuRatioAtMost15: boolean;
  passed: boolean;
}

export interface ConflationReport {
  watchers: number;
  bidders: number;
  phaseMs: number;
  runs: ConflationRun[];
  /** Judged on the runs with the budget; the runs without it are reported beside. */
  bars: ConflationBars;
  serviceLogs: string;
}

/** The auction as the database holds it: a fresh snapshot, read through instance A. */
async function databaseState(socketUrl: string): Promise<WatchedState> {
  const opened = await openRawSocket(socketUrl, {}, 30_000);
  try {
    const parsed = parseServerMessage(opened.first);
    if (!parsed.ok || parsed.message.type !== "snapshot") throw new Error("no snapshot from instance A");
    const { bids, bidders } = parsed.message;
    return { lastId: bids[0]?.id ?? 0, bidders, ids: bids.map((bid) => bid.id) };
  } finally {
    await opened.socket.close();
  }
}

/** Waits (bounded) until every open watcher read the bid `lastId`; how long that took, or null. */
async function catchUp(fleet: Fleet, lastId: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < DRAIN_TIMEOUT_MS) {
    const statuses = await Promise.all(
      fleet.receivers.map((generator) => generator.run<{ lowestLastId: number | null }>({ type: "status" }, 10_000)),
    );
    // A generator left with no watcher reports Infinity, null through IPC: nothing of it to wait for.
    if (statuses.every((status) => status.lowestLastId === null || status.lowestLastId >= lastId)) {
      return Date.now() - started;
    }
    await sleep(50);
  }
  return null;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

async function measureRun(
  fleet: Fleet,
  instances: { a: Service; b: Service },
  pgPids: number[] | null,
  maxFramesPerSecond: number,
  load: "10/s" | "full",
  plan: Plan,
): Promise<ConflationRun> {
  const { a, b } = instances;
  const watchersAtStart = (
    await Promise.all(
      fleet.receivers.map((generator) => generator.run<{ receivers: number }>({ type: "status" }, 10_000)),
    )
  ).reduce((sum, status) => sum + status.receivers, 0);
  await Promise.all(fleet.receivers.map((generator) => generator.run({ type: "startRecording" }, 10_000)));
  const durationMs = plan.conflationMs;
  const paced = load === "10/s";
  const endCpu = await startCpuSampling(b.pid, fleet.pids, pgPids);
  const aCpuBefore = await cpuSeconds(a.pid);
  const aCpuFrom = performance.now();
  const bids = await fleet.bidder.run<BidResult>(
    {
      type: "bid",
      url: a.socketUrl,
      bidders: paced ? 1 : plan.conflationBidders,
      durationMs,
      mode: paced ? "paced" : "closed",
      ratePerSecond: 10,
      returnAccepts: true,
    },
    durationMs + 60_000,
  );
  const cpu = await endCpu();
  const serviceA = ((await cpuSeconds(a.pid)) - aCpuBefore) / ((performance.now() - aCpuFrom) / 1000);
  const lastId = Math.max(0, ...bids.accepts.map(([id]) => id));
  const caughtUpAfterMs = await catchUp(fleet, lastId);
  const warmupMs = Math.min(1_000, durationMs / 5);
  const watched = await Promise.all(
    fleet.receivers.map((generator) =>
      generator.run<WatchResult>(
        {
          type: "collectWatch",
          accepts: bids.accepts,
          windowStartMs: bids.startedAtMs + warmupMs,
          windowEndMs: bids.endedAtMs,
        },
        120_000,
      ),
    ),
  );
  const expected = await databaseState(a.socketUrl);
  const comparisons = await Promise.all(
    fleet.receivers.map((generator) => generator.run<StateComparison>({ type: "compareState", expected }, 30_000)),
  );
  const latency = (key: "fromAck" | "fromSend") => {
    const histogram = new LatencyHistogram();
    for (const part of watched) histogram.add(part[key]);
    return histogram.summary();
  };
  // Each generator's mean is over its own watchers, dropped ones with frames included: weigh by those counted.
  const sum = (value: (part: WatchResult) => number) => watched.reduce((total, part) => total + value(part), 0);
  const framesMean =
    sum((part) => part.framesPerSecond.mean * part.framesPerSecond.watchers) /
    Math.max(
      1,
      sum((part) => part.framesPerSecond.watchers),
    );
  const framesWrittenPerSecond = framesMean * (watchersAtStart - sum((part) => part.dropped));
  return {
    maxFramesPerSecond,
    load,
    bidders: paced ? 1 : plan.conflationBidders,
    acceptedBids: bids.accepted,
    bidsPerSecond: Math.round(bids.accepted / ((bids.endedAtMs - bids.startedAtMs) / 1000)),
    watchersAtStart,
    watchersDropped: sum((part) => part.dropped),
    caughtUp: caughtUpAfterMs !== null,
    caughtUpAfterMs: caughtUpAfterMs ?? DRAIN_TIMEOUT_MS,
    finalState: {
      equal: comparisons.reduce((total, part) => total + part.equal, 0),
      different: comparisons.reduce((total, part) => total + part.different, 0),
      examples: comparisons.flatMap((part) => part.examples).slice(0, 5),
    },
    latencyFromAcceptance: latency("fromAck"),
    latencyFromSend: latency("fromSend"),
    latencySample: sum((part) => part.latencySample),
    framesPerSocketPerSecond: {
      max: round2(Math.max(0, ...watched.map((part) => part.framesPerSecond.max))),
      mean: round2(framesMean),
    },
    mostFramesInOneSecond: Math.max(0, ...watched.map((part) => part.mostFramesInOneSecond)),
    cpu: {
      serviceB: cpu.service,
      serviceA: round2(serviceA),
      postgres: cpu.postgres,
      generators: cpu.generators,
      machineBusy: cpu.machineBusy,
    },
    cpuPerFrameMicroseconds: framesWrittenPerSecond > 0 ? round2((cpu.service * 1e6) / framesWrittenPerSecond) : 0,
    duplicatesOrOutOfOrder: sum((part) => part.duplicatesOrOutOfOrder),
    framesNotRecorded: sum((part) => part.framesNotRecorded),
    unreadableFrames: sum((part) => part.unreadable),
  };
}

function judge(runs: ConflationRun[]): ConflationBars {
  const budgeted = runs.filter((run) => run.maxFramesPerSecond > 0);
  const at = (load: ConflationRun["load"]) => budgeted.find((run) => run.load === load);
  const full = at("full");
  const paced = at("10/s");
  const maxFramesPerSecond = budgeted[0]?.maxFramesPerSecond ?? Number.NaN;
  const framesMax = Math.max(...budgeted.map((run) => run.framesPerSocketPerSecond.max));
  const cpuRatio = full && paced ? round2(full.cpu.serviceB / paced.cpu.serviceB) : Number.NaN;
  const p99 = full?.latencyFromAcceptance.p99Ms ?? Number.NaN;
  const bars = {
    maxFramesPerSecond,
    noWatcherDropped: budgeted.every((run) => run.watchersDropped === 0),
    everyFinalStateEqual: budgeted.every((run) => run.finalState.different === 0 && run.finalState.equal > 0),
    p99FromAcceptanceMs: p99,
    p99Under250Ms: budgeted.every((run) => run.latencyFromAcceptance.p99Ms < P99_BAR_MS),
    framesPerSocketPerSecondMax: framesMax,
    framesWithinBudget: framesMax <= maxFramesPerSecond,
    cpuFullOver10PerSecond: cpuRatio,
    cpuRatioAtMost15: cpuRatio <= CPU_RATIO_BAR,
  };
  return {
    ...bars,
    passed:
      bars.noWatcherDropped &&
      bars.everyFinalStateEqual &&
      bars.p99Under250Ms &&
      bars.framesWithinBudget &&
      bars.cpuRatioAtMost15,
  };
}

function conflationLine(run: ConflationRun): string {
  const budget = run.maxFramesPerSecond > 0 ? `MAX_FRAMES_PER_SECOND ${run.maxFramesPerSecond}` : "no frame budget";
  return (
    `conflation, ${budget}, bids on A @ ${run.load} (${thousands(run.bidsPerSecond)} bids/s, ${run.bidders} bidders), ` +
    `${thousands(run.watchersAtStart)} watchers on B: ${run.watchersDropped} dropped; final state equal ${run.finalState.equal}, ` +
    `different ${run.finalState.different}` +
    (run.finalState.equal + run.finalState.different === 0
      ? " (no watcher left)"
      : run.caughtUp
        ? ` (caught up ${run.caughtUpAfterMs} ms after)`
        : " (not all caught up)") +
    "; " +
    `acceptance→watcher ${latencyText(run.latencyFromAcceptance)} (${run.latencySample} watchers sampled); ` +
    `frames per watcher per second max ${run.framesPerSocketPerSecond.max}, ` +
    `mean ${run.framesPerSocketPerSecond.mean} (most in one second ${run.mostFramesInOneSecond}); ` +
    `cpu B ${run.cpu.serviceB}, A ${run.cpu.serviceA}, postgres ${run.cpu.postgres}, generators ${run.cpu.generators}, machine busy ${Math.round(run.cpu.machineBusy * 100)}%; ` +
    `B ${run.cpuPerFrameMicroseconds} µs a frame a watcher` +
    (run.framesNotRecorded > 0 ? `; ${thousands(run.framesNotRecorded)} frames not recorded` : "") +
    (run.duplicatesOrOutOfOrder + run.unreadableFrames > 0
      ? `; ${run.duplicatesOrOutOfOrder} out of order, ${run.unreadableFrames} unreadable`
      : "")
  );
}

function conflationBarLines(bars: ConflationBars, runs: ConflationRun[]): string[] {
  const verdict = (passed: boolean) => (passed ? "pass" : "FAIL");
  const without = runs.filter((run) => run.maxFramesPerSecond === 0);
  const beside = (value: (run: ConflationRun) => string) =>
    without.length === 0
      ? ""
      : ` (without the budget: ${without.map((run) => `${run.load} ${value(run)}`).join(", ")})`;
  return [
    `bar 10: 0 watchers dropped with the budget: ${verdict(bars.noWatcherDropped)}${beside((run) => `${run.watchersDropped} dropped`)}`,
    `bar 10: every watcher's final state equal to the database's: ${verdict(bars.everyFinalStateEqual)}` +
      beside((run) => `${run.finalState.different} different of ${run.finalState.equal + run.finalState.different}`),
    `bar 10: p99 acceptance→watcher under ${P99_BAR_MS} ms: ${bars.p99FromAcceptanceMs} ms at full rate: ${verdict(bars.p99Under250Ms)}` +
      beside((run) => `p99 ${run.latencyFromAcceptance.p99Ms} ms`),
    `bar 10: frames per watcher per second at most ${bars.maxFramesPerSecond}: max ${bars.framesPerSocketPerSecondMax}: ${verdict(bars.framesWithinBudget)}` +
      beside((run) => `${run.framesPerSocketPerSecond.max}`),
    `bar 10: B's CPU at full rate at most ${CPU_RATIO_BAR}× its CPU at 10 bids/s: ${bars.cpuFullOver10PerSecond}×: ${verdict(bars.cpuRatioAtMost15)}` +
      beside((run) => `cpu B ${run.cpu.serviceB}`),
  ];
}

/** The phase: a pair of instances per budget, each with the watchers and both loads. */
export async function runConflation(plan: Plan, tempDir: string, cluster: PostgresCluster): Promise<ConflationReport> {
  const postmaster = await postmasterPid(cluster.dataDir);
  const runs: ConflationRun[] = [];
  let serviceLogs = "";
  for (const budget of CONFLATION_BUDGETS) {
    const extraEnv = { MAX_FRAMES_PER_SECOND: String(budget) };
    const a = await startService(tempDir, cluster.url, { label: `-conflation-a-${budget}`, extraEnv });
    const b = await startService(tempDir, cluster.url, { label: `-conflation-b-${budget}`, extraEnv });
    const fleet = new Fleet(plan.generators);
    try {
      const connected = await fleet.connect(b.socketUrl, plan.conflationWatchers, false, true);
      const failed = connected.reduce((sum, part) => sum + part.failed, 0);
      if (failed > 0)
        throw new Error(`${failed} watchers could not connect: ${connected.flatMap((part) => part.errors)[0]}`);
      const pgPids = await postgresPids(postmaster);
      for (const load of ["10/s", "full"] as const) {
        const run = await measureRun(fleet, { a, b }, pgPids, budget, load, plan);
        console.log(conflationLine(run));
        runs.push(run);
      }
    } catch (error) {
      const log = await readFile(b.logFile, "utf8").catch(() => "");
      throw new Error(
        `conflation (budget ${budget}): ${errorMessage(error)}\ninstance B's log (tail):\n${log.slice(-2_000)}`,
      );
    } finally {
      await fleet.stop();
      for (const service of [a, b]) {
        serviceLogs += (await readFile(service.logFile, "utf8").catch(() => "")).slice(-1_000);
        await service.stop();
      }
    }
  }
  const bars = judge(runs);
  for (const line of conflationBarLines(bars, runs)) console.log(line);
  return {
    watchers: plan.conflationWatchers,
    bidders: plan.conflationBidders,
    phaseMs: plan.conflationMs,
    runs,
    bars,
    serviceLogs: serviceLogs.slice(-4_000),
  };
}
