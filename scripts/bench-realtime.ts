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
 *   --only slow: the slow-consumer phase alone (results in realtime-<date>[-quick]-slow.json).
 *   (before the npm script exists: npx node scripts/bench-realtime.ts --quick)
 * Prints one line per measurement; writes everything to bench/results/realtime-<date>.json
 * (realtime-<date>-quick.json with --quick, small counts for a smoke test of about a minute).
 * All traffic goes to 127.0.0.1. Every wait is bounded; every child process is killed on exit.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { openSync } from "node:fs";
import { appendFile, chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import WebSocket from "ws";
import { LatencyHistogram, type LatencySummary } from "./bench-realtime/latencyHistogram.ts";
import type {
  BidCommand,
  BidResult,
  CollectResult,
  ConnectResult,
  SlowPingsResult,
} from "./bench-realtime/loadGenerator.ts";
import {
  type CpuShares,
  cpuSeconds,
  Generator,
  postgresPids,
  residentBytes,
  spawnNode,
  startCpuSampling,
  stopChild,
  withTimeout,
} from "./bench-realtime/processes.ts";
import { errorMessage, waitForOk } from "./support/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "./support/liftedLimits.ts";
import { freePort } from "./support/ports.ts";
import { type PostgresCluster, startPostgresCluster } from "./support/postgresCluster.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS_DIR = join(ROOT, "bench", "results");
const GENERATOR_FILE = join(ROOT, "scripts", "bench-realtime", "loadGenerator.ts");
const BARE_SERVER_FILE = join(ROOT, "scripts", "bench-realtime", "bareServer.ts");
const STORE_LOAD_FILE = join(ROOT, "scripts", "bench-realtime", "storeLoad.ts");

const SERVICE_START_TIMEOUT_MS = 120_000;
const CONNECT_CONCURRENCY = 64;
const SATURATION_WINDOW = 64;
const SATURATION_BIDDERS = 8;
/** Settling time before memory is read, so the ramp's garbage and buffers are not counted. */
const MEMORY_SETTLE_MS = 3_000;
const DRAIN_TIMEOUT_MS = 15_000;
const METRICS_POLL_MS = 250;
/** Longest bidder name: 40 code points of 4 UTF-8 bytes each, for the slow consumer's big broadcasts. */
const LONG_NAME_CODE_POINTS = 40;
/**
 * The service's bound in the slow-consumer run (MAX_BUFFERED_BYTES; the service's default is 1 MiB).
 * Small, so that the time to the drop is mostly the kernel's buffers filling, which no setting changes.
 */
const SLOW_CONSUMER_MAX_BUFFERED_BYTES = 65_536;
/** `{"type":"bid",…}` with a 40-code-point name: 274 bytes of JSON and a 4-byte frame header (ids and amounts vary a little). */
const LONG_BROADCAST_FRAME_BYTES = 118 + LONG_NAME_CODE_POINTS * 4;
/** `{"type":"pong"}` and a 2-byte frame header. */
const PONG_FRAME_BYTES = 17;
/** The cluster runs with PostgreSQL's durable defaults, not the test suite's fsync=off. */
const DURABLE_SETTINGS = ["fsync = on", "synchronous_commit = on", "full_page_writes = on"];
const REPORTED_SETTINGS = [
  "fsync",
  "synchronous_commit",
  "full_page_writes",
  "wal_level",
  "shared_buffers",
  "max_connections",
  "commit_delay",
];

interface Plan {
  quick: boolean;
  generators: number;
  heldSockets: number;
  fanOutSizes: number[];
  phaseMs: number;
  throughputMs: number;
  throughputBidders: number[];
  storeConcurrency: number[];
  slowConsumerSockets: number;
  /** The slow-consumer run ends here if the socket was not dropped before. */
  slowConsumerMaxMs: number;
  /** The same load without the slow consumer, for the others' latency to compare with. */
  slowConsumerBaselineMs: number;
  /** Pings the slow socket sends (never reading the pongs), on top of the broadcasts it does not read. */
  slowConsumerPingsPerSecond: number;
  stormSockets: number;
}

const FULL: Plan = {
  quick: false,
  generators: 4,
  heldSockets: 10_000,
  fanOutSizes: [5_000, 1_000],
  phaseMs: 10_000,
  throughputMs: 8_000,
  throughputBidders: [1, 10, 100],
  storeConcurrency: [1, 10, 100],
  slowConsumerSockets: 1_000,
  slowConsumerMaxMs: 60_000,
  slowConsumerBaselineMs: 20_000,
  slowConsumerPingsPerSecond: 5_000,
  stormSockets: 1_000,
};

const QUICK: Plan = {
  quick: true,
  generators: 2,
  heldSockets: 400,
  fanOutSizes: [300, 100],
  phaseMs: 1_500,
  throughputMs: 1_500,
  throughputBidders: [1, 10, 100],
  storeConcurrency: [10],
  slowConsumerSockets: 100,
  slowConsumerMaxMs: 45_000,
  slowConsumerBaselineMs: 5_000,
  slowConsumerPingsPerSecond: 5_000,
  stormSockets: 100,
};

type Backend = "postgres" | "pglite";

// ---------------------------------------------------------------------------------------------
// Small helpers

function thousands(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function latencyText(summary: LatencySummary): string {
  return `p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms`;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

// ---------------------------------------------------------------------------------------------
// The service under test

interface Service {
  child: ChildProcess;
  /** Runs a full garbage collection in the service (through its inspector), so memory is read without garbage. */
  collectGarbage(): Promise<void>;
  pid: number;
  socketUrl: string;
  httpUrl: string;
  logFile: string;
  metrics(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

async function readMetrics(httpUrl: string): Promise<Map<string, number>> {
  const response = await fetch(`${httpUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const values = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const space = line.lastIndexOf(" ");
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

/** HeapProfiler.collectGarbage over the Chrome DevTools protocol of a process started with --inspect. */
async function collectGarbageAt(inspectorPort: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${inspectorPort}/json/list`, { signal: AbortSignal.timeout(5_000) });
  const [target] = (await response.json()) as { webSocketDebuggerUrl: string }[];
  if (!target) throw new Error("the service's inspector lists no target");
  const session = new WebSocket(target.webSocketDebuggerUrl);
  try {
    await withTimeout(once(session, "open"), 5_000, "opening the inspector session");
    session.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
    await withTimeout(once(session, "message"), 30_000, "the garbage collection");
  } finally {
    session.close();
  }
}

async function startService(
  tempDir: string,
  databaseUrl: string | null,
  { label = "", extraEnv = {} }: { label?: string; extraEnv?: Record<string, string> } = {},
): Promise<Service> {
  const port = await freePort();
  const inspectorPort = await freePort();
  const logFile = join(tempDir, `service-${databaseUrl ? "postgres" : "pglite"}${label}.log`);
  const log = openSync(logFile, "a");
  const child = spawnNode(join(ROOT, "realtime", "main.ts"), [], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      STATIC_DIR: "",
      LOG_LEVEL: "warn",
      DATA_DIR: join(tempDir, `pglite-service${label}`),
      DATABASE_URL: databaseUrl ?? "",
      ...LIFTED_LIMITS_ENV,
      BID_RATE_WINDOW_MS: "1000",
      // Only so the benchmark can ask for a full GC before reading memory; loopback only.
      NODE_OPTIONS: `--inspect=127.0.0.1:${inspectorPort}`,
      ...extraEnv,
    },
    stdio: ["ignore", log, log],
  });
  const httpUrl = `http://127.0.0.1:${port}`;
  await waitForOk(`${httpUrl}/readyz`, child, "the service", SERVICE_START_TIMEOUT_MS);
  return {
    child,
    // sh exec'd node, so the shell's pid is the service's.
    pid: child.pid ?? 0,
    socketUrl: `ws://127.0.0.1:${port}/realtime`,
    httpUrl,
    logFile,
    collectGarbage: () => collectGarbageAt(inspectorPort),
    metrics: () => readMetrics(httpUrl),
    stop: () => stopChild(child, 15_000),
  };
}

async function startBareServer(): Promise<Service> {
  const port = await freePort();
  const child = spawnNode(BARE_SERVER_FILE, [String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit", "ipc"] });
  const httpUrl = `http://127.0.0.1:${port}`;
  await withTimeout(
    new Promise<void>((resolve) =>
      child.stdout?.on("data", (chunk) => String(chunk).includes("listening") && resolve()),
    ),
    30_000,
    "starting the bare ws server",
  );
  return {
    child,
    pid: child.pid ?? 0,
    socketUrl: `ws://127.0.0.1:${port}/realtime`,
    httpUrl,
    logFile: "",
    collectGarbage: async () => {},
    metrics: async () => new Map(),
    stop: () => stopChild(child, 5_000),
  };
}

// ---------------------------------------------------------------------------------------------
// Generators as one fleet

class Fleet {
  readonly generators: Generator[];
  /** The last generator places the bids; the others hold the receiving sockets. */
  readonly bidder: Generator;
  readonly receivers: Generator[];
  private lastFloor = 0;

  constructor(count: number) {
    this.generators = Array.from(
      { length: count + 1 },
      () => new Generator(GENERATOR_FILE, ROOT, () => this.onProgress()),
    );
    this.bidder = this.generators[count] as Generator;
    this.receivers = this.generators.slice(0, count);
  }

  get pids(): number[] {
    return this.generators.map((generator) => generator.child.pid ?? 0);
  }

  private onProgress(): void {
    const floor = Math.min(...this.receivers.map((generator) => generator.lowestLastId));
    if (floor <= this.lastFloor) return;
    this.lastFloor = floor;
    this.bidder.post({ type: "floor", id: floor });
  }

  /** Spreads `count` new receiving sockets over the receiving generators. */
  async connect(url: string, count: number, pauseFirst = false): Promise<ConnectResult[]> {
    const share = (index: number) =>
      Math.floor(count / this.receivers.length) + (index < count % this.receivers.length ? 1 : 0);
    return Promise.all(
      this.receivers.map((generator, index) =>
        generator.run<ConnectResult>(
          {
            type: "connect",
            url,
            count: share(index),
            concurrency: CONNECT_CONCURRENCY,
            pauseFirst: pauseFirst && index === 0,
          },
          180_000,
        ),
      ),
    );
  }

  /** Closes receiving sockets until `keep` remain (spread evenly). */
  async shrinkTo(keep: number): Promise<void> {
    const statuses = await Promise.all(
      this.receivers.map((generator) => generator.run<{ receivers: number }>({ type: "status" }, 10_000)),
    );
    await Promise.all(
      this.receivers.map((generator, index) => {
        const target = Math.floor(keep / this.receivers.length) + (index < keep % this.receivers.length ? 1 : 0);
        const excess = Math.max(0, (statuses[index]?.receivers ?? 0) - target);
        return generator.run<number>({ type: "closeReceivers", count: excess }, 60_000);
      }),
    );
  }

  /** Bids while every receiving socket records arrivals; returns the bids and what arrived. */
  async bidAndCollect(
    bid: Omit<BidCommand, "type" | "returnAccepts">,
    warmupMs: number,
  ): Promise<{ bids: BidResult; collected: CollectResult[] }> {
    await Promise.all(this.receivers.map((generator) => generator.run({ type: "startRecording" }, 10_000)));
    this.lastFloor = 0;
    const bids = await this.bidder.run<BidResult>(
      { type: "bid", returnAccepts: true, ...bid },
      bid.durationMs + 60_000,
    );
    const lastId = Math.max(0, ...bids.accepts.map(([id]) => id));
    // Let every socket read the last broadcast before collecting.
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (Date.now() < deadline && Math.min(...this.receivers.map((generator) => generator.lowestLastId)) < lastId) {
      await sleep(50);
    }
    const windowStartMs = bids.startedAtMs + warmupMs;
    const collected = await Promise.all(
      this.receivers.map((generator) =>
        generator.run<CollectResult>(
          { type: "collect", accepts: bids.accepts, windowStartMs, windowEndMs: bids.endedAtMs },
          60_000,
        ),
      ),
    );
    return { bids, collected };
  }

  async stop(): Promise<void> {
    await Promise.all(this.generators.map((generator) => generator.stop()));
  }
}

interface FanOutReport {
  sockets: number;
  load: string;
  bidders: number;
  acceptedBids: number;
  bidsPerSecond: number;
  deliveredPerSecond: number;
  latencyFromAcceptance: LatencySummary;
  latencyFromSend: LatencySummary;
  missing: number;
  duplicatesOrOutOfOrder: number;
  refused: Record<string, number>;
  cpu: CpuShares;
}

function mergeLatencies(collected: CollectResult[], key: "fromAck" | "fromSend"): LatencySummary {
  const histogram = new LatencyHistogram();
  for (const part of collected) histogram.add(part[key]);
  return histogram.summary();
}

function refusals(bids: BidResult): Record<string, number> {
  return { too_low: bids.tooLow, timeouts: bids.timeouts, ...bids.otherErrors };
}

async function measureFanOut(
  fleet: Fleet,
  target: Service,
  postgresPidList: number[] | null,
  load: "10/s" | "saturation",
  durationMs: number,
  extra: Partial<BidCommand> = {},
  onBids?: (bids: BidResult) => void,
): Promise<FanOutReport> {
  const paced = load === "10/s";
  const endCpu = await startCpuSampling(target.pid, fleet.pids, postgresPidList);
  const warmupMs = Math.min(1_000, durationMs / 5);
  const { bids, collected } = await fleet.bidAndCollect(
    {
      url: target.socketUrl,
      bidders: paced ? 1 : SATURATION_BIDDERS,
      durationMs,
      mode: paced ? "paced" : "closed",
      ratePerSecond: 10,
      window: SATURATION_WINDOW,
      ...extra,
    },
    warmupMs,
  );
  const cpu = await endCpu();
  onBids?.(bids);
  const windowSeconds = (bids.endedAtMs - bids.startedAtMs - warmupMs) / 1000;
  const delivered = collected.reduce((sum, part) => sum + part.deliveredInWindow, 0);
  return {
    // Held at the end: a socket that closed during the run is not counted.
    sockets: collected.reduce((sum, part) => sum + part.receivers, 0),
    load,
    bidders: paced ? 1 : (extra.bidders ?? SATURATION_BIDDERS),
    acceptedBids: bids.accepted,
    bidsPerSecond: Math.round(bids.accepted / ((bids.endedAtMs - bids.startedAtMs) / 1000)),
    deliveredPerSecond: Math.round(delivered / windowSeconds),
    latencyFromAcceptance: mergeLatencies(collected, "fromAck"),
    latencyFromSend: mergeLatencies(collected, "fromSend"),
    missing: collected.reduce((sum, part) => sum + part.missing, 0),
    duplicatesOrOutOfOrder: collected.reduce((sum, part) => sum + part.duplicatesOrOutOfOrder, 0),
    refused: refusals(bids),
    cpu,
  };
}

function fanOutLine(name: string, report: FanOutReport): string {
  return (
    `${name} fan-out ${thousands(report.sockets)} sockets @ ${report.load}: ${thousands(report.bidsPerSecond)} bids/s, ` +
    `${thousands(report.deliveredPerSecond)} msgs/s delivered; acceptance→socket ${latencyText(report.latencyFromAcceptance)}; ` +
    `send→socket ${latencyText(report.latencyFromSend)}; missing ${report.missing}, dup/out-of-order ${report.duplicatesOrOutOfOrder}; ` +
    `cpu service ${report.cpu.service}, generators ${report.cpu.generators}, machine busy ${Math.round(report.cpu.machineBusy * 100)}%`
  );
}

// ---------------------------------------------------------------------------------------------
// Measurements on the store

interface HeldReport {
  requested: number;
  held: number;
  failed: number;
  errors: string[];
  rampSeconds: number;
  openingLatency: LatencySummary;
  baseline: { rssBytes: number; heapUsedBytes: number };
  loaded: { rssBytes: number; heapUsedBytes: number };
  rssBytesPerSocket: number;
  heapBytesPerSocket: number;
  serviceOpenSockets: number;
}

async function memoryOf(service: Service): Promise<{ rssBytes: number; heapUsedBytes: number }> {
  await service.collectGarbage();
  const metrics = await service.metrics();
  return { rssBytes: await residentBytes(service.pid), heapUsedBytes: metrics.get("nodejs_heap_size_used_bytes") ?? 0 };
}

async function measureHeld(fleet: Fleet, service: Service, count: number): Promise<HeldReport> {
  await sleep(MEMORY_SETTLE_MS);
  const baseline = await memoryOf(service);
  const startedAt = performance.now();
  const results = await fleet.connect(service.socketUrl, count);
  const rampSeconds = (performance.now() - startedAt) / 1000;
  await sleep(MEMORY_SETTLE_MS);
  const loaded = await memoryOf(service);
  const metrics = await service.metrics();
  const held = results.reduce((sum, part) => sum + part.opened, 0);
  const opening = new LatencyHistogram();
  for (const part of results) opening.add(part.firstMessage);
  return {
    requested: count,
    held,
    failed: results.reduce((sum, part) => sum + part.failed, 0),
    errors: results.flatMap((part) => part.errors),
    rampSeconds: Math.round(rampSeconds * 10) / 10,
    openingLatency: opening.summary(),
    baseline,
    loaded,
    rssBytesPerSocket: Math.round((loaded.rssBytes - baseline.rssBytes) / Math.max(1, held)),
    heapBytesPerSocket: Math.round((loaded.heapUsedBytes - baseline.heapUsedBytes) / Math.max(1, held)),
    serviceOpenSockets: metrics.get("auction_open_sockets") ?? Number.NaN,
  };
}

interface ThroughputReport {
  bidders: number;
  acceptedPerSecond: number;
  accepted: number;
  refused: Record<string, number>;
  cpu: CpuShares;
}

async function measureThroughput(
  fleet: Fleet,
  service: Service,
  postgresPidList: number[] | null,
  bidders: number,
  durationMs: number,
): Promise<ThroughputReport> {
  // One process places every bid: its amounts then never collide with another process's, so a
  // refusal means a real race at the row lock. Each bidder's socket still receives every broadcast.
  const endCpu = await startCpuSampling(service.pid, fleet.pids, postgresPidList);
  const result = await fleet.bidder.run<BidResult>(
    { type: "bid", url: service.socketUrl, bidders, durationMs, mode: "closed", returnAccepts: false },
    durationMs + 60_000,
  );
  const cpu = await endCpu();
  const accepted = result.accepted;
  const seconds = (result.endedAtMs - result.startedAtMs) / 1000;
  const refused = refusals(result);
  return { bidders, acceptedPerSecond: Math.round(accepted / seconds), accepted, refused, cpu };
}

interface StoreAloneReport {
  concurrency: number;
  synchronousCommit?: "on" | "off";
  acceptedPerSecond: number;
  accepted: number;
  tooLow: number;
}

async function measureStoreAlone(options: Record<string, unknown>, durationMs: number): Promise<StoreAloneReport> {
  const child = spawnNode(STORE_LOAD_FILE, [JSON.stringify({ ...options, durationMs })], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  const [code] = (await withTimeout(once(child, "exit"), durationMs + 120_000, "the store-alone run")) as [number];
  if (code !== 0) throw new Error(`the store-alone run exited with code ${code}`);
  const result = JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as StoreAloneReport;
  return {
    concurrency: options.concurrency as number,
    ...(options.synchronousCommit ? { synchronousCommit: options.synchronousCommit as "on" | "off" } : {}),
    acceptedPerSecond: result.acceptedPerSecond,
    accepted: result.accepted,
    tooLow: result.tooLow,
  };
}

interface SlowConsumerReport {
  /** Reading sockets; the slow one comes on top. */
  sockets: number;
  /** The service's MAX_BUFFERED_BYTES for this run. */
  maxBufferedBytes: number;
  pingsPerSecond: number;
  dropped: boolean;
  /** From the slow socket's opening to the drop. */
  droppedAfterMs: number | null;
  /** "service log": the time of the service's own warning; "metrics poll": when the counter was seen (up to ~0.3 s late). */
  dropTimeFrom: "service log" | "metrics poll" | null;
  /** ws's bufferedAmount when the service dropped it (its log line): all that is not in the kernel. */
  bufferedBytesAtDrop: number | null;
  /** Sent to the slow socket until the drop (or the end): bids accepted meanwhile and pings sent, times their frame sizes. */
  broadcastsSent: number;
  pingsSent: number;
  estimatedBytesSent: { broadcasts: number; pongs: number; total: number };
  /** The others while the slow socket was there (bidding stops at the drop). */
  others: FanOutReport;
  /** The same load on the same sockets just before, without the slow one. */
  baseline: FanOutReport;
}

/** The service's first "dropping a socket" warning at or after `sinceMs` (pino lines: time in ms, bufferedBytes). */
async function dropInLog(logFile: string, sinceMs: number): Promise<{ atMs: number; bufferedBytes: number } | null> {
  const text = await readFile(logFile, "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    if (!line.includes("dropping a socket")) continue;
    try {
      const entry = JSON.parse(line) as { time?: number; bufferedBytes?: number };
      if (typeof entry.time === "number" && entry.time >= sinceMs) {
        return { atMs: entry.time, bufferedBytes: Number(entry.bufferedBytes ?? Number.NaN) };
      }
    } catch {
      // Not a JSON line (a stack trace's continuation): skip it.
    }
  }
  return null;
}

async function measureSlowConsumer(fleet: Fleet, service: Service, plan: Plan): Promise<SlowConsumerReport> {
  const load = { nameLength: LONG_NAME_CODE_POINTS };
  const baseline = await measureFanOut(fleet, service, null, "saturation", plan.slowConsumerBaselineMs, load);

  const droppedBefore = (await service.metrics()).get("auction_slow_sockets_dropped_total") ?? 0;
  // The first receiving generator holds the paused socket and sends its pings.
  const slowGenerator = fleet.receivers[0] as Generator;
  await fleet.connect(service.socketUrl, 1, true);
  const startedAt = Date.now();
  let polledDropAt: number | null = null;
  let polling = true;
  const poll = (async () => {
    while (polling && Date.now() - startedAt < plan.slowConsumerMaxMs + 10_000) {
      await sleep(METRICS_POLL_MS);
      const dropped = (await service.metrics().catch(() => new Map<string, number>())).get(
        "auction_slow_sockets_dropped_total",
      );
      if (dropped !== undefined && dropped > droppedBefore) {
        polledDropAt = Date.now();
        // The phase is about the time to the drop: end it there.
        fleet.bidder.post({ type: "stopBidding" });
        slowGenerator.post({ type: "stopBidding" });
        return;
      }
    }
  })();
  const pinging = slowGenerator.run<SlowPingsResult>(
    { type: "slowPings", perSecond: plan.slowConsumerPingsPerSecond, durationMs: plan.slowConsumerMaxMs },
    plan.slowConsumerMaxMs + 30_000,
  );
  let bids: BidResult | null = null;
  const others = await measureFanOut(fleet, service, null, "saturation", plan.slowConsumerMaxMs, load, (result) => {
    bids = result;
  });
  polling = false;
  await poll;
  // Ends with the bidding (stopBidding) or its own deadline, whichever first.
  slowGenerator.post({ type: "stopBidding" });
  const pings = await pinging;

  const logged = polledDropAt === null ? null : await dropInLog(service.logFile, startedAt);
  const dropAt: number | null = logged?.atMs ?? polledDropAt;
  const until = dropAt ?? Number.POSITIVE_INFINITY;
  const accepts = (bids as BidResult | null)?.accepts ?? [];
  const broadcastsSent = accepts.filter(([, , ackAtMs]) => ackAtMs <= until).length;
  const pingsSent = pings.ticks.filter(([atMs]) => atMs <= until).at(-1)?.[1] ?? 0;
  const broadcastBytes = broadcastsSent * LONG_BROADCAST_FRAME_BYTES;
  const pongBytes = pingsSent * PONG_FRAME_BYTES;
  return {
    sockets: others.sockets,
    maxBufferedBytes: SLOW_CONSUMER_MAX_BUFFERED_BYTES,
    pingsPerSecond: plan.slowConsumerPingsPerSecond,
    dropped: dropAt !== null,
    droppedAfterMs: dropAt === null ? null : dropAt - startedAt,
    dropTimeFrom: logged ? "service log" : polledDropAt === null ? null : "metrics poll",
    bufferedBytesAtDrop: logged?.bufferedBytes ?? null,
    broadcastsSent,
    pingsSent,
    estimatedBytesSent: { broadcasts: broadcastBytes, pongs: pongBytes, total: broadcastBytes + pongBytes },
    others,
    baseline,
  };
}

function slowConsumerLine(name: string, report: SlowConsumerReport): string {
  const sent = report.estimatedBytesSent;
  const seconds = (Number(report.droppedAfterMs) / 1000).toFixed(1);
  return (
    `${name} slow consumer among ${thousands(report.sockets)} (MAX_BUFFERED_BYTES ${thousands(report.maxBufferedBytes)}, ` +
    `${thousands(report.others.bidsPerSecond)} bids/s of ${LONG_BROADCAST_FRAME_BYTES} B + ${thousands(report.pingsPerSecond)} pings/s): ` +
    (report.dropped
      ? `dropped after ${seconds} s (${report.dropTimeFrom}), bufferedAmount ${thousands(Number(report.bufferedBytesAtDrop))} B at the drop; `
      : `not dropped within ${report.droppedAfterMs === null ? "the limit" : `${seconds} s`}; `) +
    `~${kib(sent.total)} sent to it (${thousands(report.broadcastsSent)} broadcasts ${kib(sent.broadcasts)}, ` +
    `${thousands(report.pingsSent)} pongs ${kib(sent.pongs)}); the others send→socket ${latencyText(report.others.latencyFromSend)} ` +
    `vs ${latencyText(report.baseline.latencyFromSend)} without it (${thousands(report.baseline.bidsPerSecond)} bids/s)`
  );
}

/**
 * Its own service instance, started with the small bound; the slow socket comes on top of
 * plan.slowConsumerSockets reading ones.
 */
async function runSlowConsumer(
  backend: Backend,
  plan: Plan,
  tempDir: string,
  cluster: PostgresCluster | null,
): Promise<SlowConsumerReport> {
  const service = await startService(tempDir, cluster?.url ?? null, {
    label: "-slow",
    extraEnv: { MAX_BUFFERED_BYTES: String(SLOW_CONSUMER_MAX_BUFFERED_BYTES) },
  });
  const fleet = new Fleet(plan.generators);
  const name = backend === "postgres" ? "PostgreSQL" : "PGlite";
  try {
    await fleet.connect(service.socketUrl, plan.slowConsumerSockets);
    const report = await measureSlowConsumer(fleet, service, plan);
    console.log(slowConsumerLine(name, report));
    return report;
  } catch (error) {
    const log = await readFile(service.logFile, "utf8").catch(() => "");
    throw new Error(`${name} slow consumer: ${errorMessage(error)}\nservice log (tail):\n${log.slice(-2_000)}`);
  } finally {
    await fleet.stop();
    await service.stop();
  }
}

interface StormReport {
  sockets: number;
  kind: "resume" | "snapshot";
  seconds: number;
  /** CPU the service spent on the storm: handshakes, opening reads, JSON. */
  serviceCpuSeconds: number;
  resumes: number;
  failed: number;
  openingLatency: LatencySummary;
}

async function measureStorm(fleet: Fleet, service: Service, resume: boolean): Promise<StormReport> {
  const cpuBefore = await cpuSeconds(service.pid);
  const startedAt = performance.now();
  const results = await Promise.all(
    fleet.receivers.map((generator) =>
      generator.run<ConnectResult>(
        { type: "reconnectAll", url: service.socketUrl, resume, concurrency: 100_000 },
        180_000,
      ),
    ),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  const serviceCpuSeconds = (await cpuSeconds(service.pid)) - cpuBefore;
  const opening = new LatencyHistogram();
  for (const part of results) opening.add(part.firstMessage);
  return {
    sockets: results.reduce((sum, part) => sum + part.opened, 0),
    kind: resume ? "resume" : "snapshot",
    seconds: Math.round(seconds * 100) / 100,
    serviceCpuSeconds: Math.round(serviceCpuSeconds * 100) / 100,
    resumes: results.reduce((sum, part) => sum + part.resumes, 0),
    failed: results.reduce((sum, part) => sum + part.failed, 0),
    openingLatency: opening.summary(),
  };
}

// ---------------------------------------------------------------------------------------------
// Runs

interface BackendReport {
  backend: Backend;
  /** Measured on the first backend only: it does not depend on the database, and it is long. */
  held: HeldReport;
  fanOut: FanOutReport[];
  slowConsumer: SlowConsumerReport | null;
  reconnectStorm: StormReport[];
  throughput: ThroughputReport[];
  storeAlone: StoreAloneReport[];
  serviceLog: string;
}

async function runBackend(
  backend: Backend,
  plan: Plan,
  tempDir: string,
  cluster: PostgresCluster | null,
): Promise<BackendReport> {
  const service = await startService(tempDir, cluster?.url ?? null);
  const postmasterPid = cluster
    ? Number((await readFile(join(cluster.dataDir, "postmaster.pid"), "utf8")).split("\n")[0])
    : null;
  const pgPids = postmasterPid ? await postgresPids(postmasterPid) : null;
  const fleet = new Fleet(plan.generators);
  const name = backend === "postgres" ? "PostgreSQL" : "PGlite";
  try {
    const held = await measureHeld(fleet, service, plan.heldSockets);
    console.log(
      `${name} held ${thousands(held.held)} of ${thousands(held.requested)} sockets (${held.failed} failed) in ${held.rampSeconds} s: ` +
        `${kib(held.rssBytesPerSocket)} RSS and ${kib(held.heapBytesPerSocket)} heap per socket ` +
        `(RSS ${Math.round(held.baseline.rssBytes / 2 ** 20)} → ${Math.round(held.loaded.rssBytes / 2 ** 20)} MiB); ` +
        `opening ${latencyText(held.openingLatency)}`,
    );

    const fanOut: FanOutReport[] = [];
    for (const size of plan.fanOutSizes) {
      await fleet.shrinkTo(size);
      for (const load of ["10/s", "saturation"] as const) {
        const pids = pgPids ? await postgresPids(postmasterPid ?? 0) : null;
        const report = await measureFanOut(fleet, service, pids, load, plan.phaseMs);
        console.log(fanOutLine(name, report));
        fanOut.push(report);
      }
    }

    await fleet.shrinkTo(plan.stormSockets);
    const reconnectStorm: StormReport[] = [];
    for (const resume of [false, true, false, true]) {
      const storm = await measureStorm(fleet, service, resume);
      console.log(
        `${name} reconnect storm, ${thousands(storm.sockets)} sockets at once with ${storm.kind}: all open in ${storm.seconds} s, ` +
          `service cpu ${storm.serviceCpuSeconds} s ` +
          `(${storm.failed} failed, ${storm.resumes} resumes); connect→first message ${latencyText(storm.openingLatency)}`,
      );
      reconnectStorm.push(storm);
    }
    await fleet.shrinkTo(0);

    const throughput: ThroughputReport[] = [];
    for (const bidders of plan.throughputBidders) {
      const pids = pgPids ? await postgresPids(postmasterPid ?? 0) : null;
      const report = await measureThroughput(fleet, service, pids, bidders, plan.throughputMs);
      console.log(
        `${name} throughput, ${bidders} concurrent bidder${bidders === 1 ? "" : "s"}: ${thousands(report.acceptedPerSecond)} accepted bids/s ` +
          `(refused ${JSON.stringify(report.refused)}); cpu service ${report.cpu.service}, postgres ${report.cpu.postgres ?? "in-process"}, ` +
          `generators ${report.cpu.generators}, machine busy ${Math.round(report.cpu.machineBusy * 100)}%`,
      );
      throughput.push(report);
    }

    const storeAlone: StoreAloneReport[] = [];
    const storeRuns: Record<string, unknown>[] = cluster
      ? [
          ...plan.storeConcurrency.map((concurrency) => ({
            databaseUrl: cluster.url,
            concurrency,
            synchronousCommit: "on",
          })),
          { databaseUrl: cluster.url, concurrency: 10, synchronousCommit: "off" },
        ]
      : plan.storeConcurrency.map((concurrency, index) => ({
          dataDir: join(tempDir, `pglite-alone-${index}`),
          concurrency,
        }));
    for (const options of storeRuns) {
      const report = await measureStoreAlone(options, plan.throughputMs);
      console.log(
        `${name} alone (place_auction_bid, no service), concurrency ${report.concurrency}` +
          `${report.synchronousCommit ? `, synchronous_commit ${report.synchronousCommit}` : ""}: ` +
          `${thousands(report.acceptedPerSecond)} accepted bids/s`,
      );
      storeAlone.push(report);
    }

    return {
      backend,
      held,
      fanOut,
      // Measured by main() once this service is stopped: it runs its own, with a smaller MAX_BUFFERED_BYTES.
      slowConsumer: null,
      reconnectStorm,
      throughput,
      storeAlone,
      serviceLog: (await readFile(service.logFile, "utf8").catch(() => "")).slice(-4_000),
    };
  } catch (error) {
    const log = await readFile(service.logFile, "utf8").catch(() => "");
    throw new Error(`${name}: ${errorMessage(error)}\nservice log (tail):\n${log.slice(-2_000)}`);
  } finally {
    await fleet.stop();
    await service.stop();
  }
}

interface CeilingReport {
  server: string;
  fanOut: FanOutReport[];
}

async function runBare(plan: Plan): Promise<CeilingReport> {
  const server = await startBareServer();
  const fleet = new Fleet(plan.generators);
  try {
    const fanOut: FanOutReport[] = [];
    await fleet.connect(server.socketUrl, Math.max(...plan.fanOutSizes));
    for (const size of plan.fanOutSizes) {
      await fleet.shrinkTo(size);
      for (const load of ["10/s", "saturation"] as const) {
        const report = await measureFanOut(fleet, server, null, load, plan.phaseMs);
        console.log(fanOutLine("bare ws", report));
        fanOut.push(report);
      }
    }
    return { server: "ws WebSocketServer, JSON serialised once per bid, socket.send to every client", fanOut };
  } finally {
    await fleet.stop();
    await server.stop();
  }
}

async function startDurableCluster(
  tempDir: string,
): Promise<{ cluster: PostgresCluster; settings: Record<string, string>; version: string }> {
  const dir = join(tempDir, "postgres");
  await mkdir(dir);
  const cluster = await startPostgresCluster({ dir });
  try {
    // Later lines win: the test helper's fsync=off and friends are overridden, then the cluster restarts.
    await appendFile(join(cluster.dataDir, "postgresql.conf"), `${DURABLE_SETTINGS.join("\n")}\n`);
    await cluster.stop();
    await cluster.start();
    const sql = postgres(cluster.url, { max: 1 });
    try {
      const rows = await sql`SELECT name, setting, unit FROM pg_settings WHERE name = ANY(${REPORTED_SETTINGS})`;
      const settings: Record<string, string> = {};
      for (const row of rows) settings[String(row.name)] = `${row.setting}${row.unit ? ` ${row.unit}` : ""}`;
      const [{ server_version: version }] = (await sql`SHOW server_version`) as unknown as [{ server_version: string }];
      return { cluster, settings, version };
    } finally {
      await sql.end({ timeout: 5 });
    }
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Main

function parseArgs(args: string[]): { plan: Plan; backends: Backend[]; onlySlow: boolean } {
  const usage = "usage: bench-realtime.ts [--quick] [--backend postgres|pglite] [--only slow]";
  let plan = FULL;
  let backends: Backend[] = ["postgres", "pglite"];
  let onlySlow = false;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (arg === "--quick") plan = QUICK;
    else if (arg === "--only") {
      const value = args[index + 1];
      index += 1;
      if (value !== "slow") throw new Error(`--only takes slow (${usage})`);
      onlySlow = true;
    } else if (arg === "--backend") {
      const value = args[index + 1];
      index += 1;
      if (value !== "postgres" && value !== "pglite") throw new Error(`--backend takes postgres or pglite (${usage})`);
      backends = [value];
    } else throw new Error(`unknown argument ${arg} (${usage})`);
  }
  return { plan, backends, onlySlow };
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
  const { plan, backends, onlySlow } = parseArgs(process.argv.slice(2));
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
