/** The service under test (service/main.ts as `npm run serve` runs it), the bare ws ceiling server and the durable cluster. */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, openSync } from "node:fs";
import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import postgres from "postgres";
import WebSocket from "ws";
import { waitForOk } from "../harness/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "../harness/liftedLimits.ts";
import { freePort } from "../harness/ports.ts";
import { type PostgresCluster, startPostgresCluster } from "../harness/postgresCluster.ts";
import { BARE_SERVER_FILE, DURABLE_SETTINGS, REPORTED_SETTINGS, ROOT, SERVICE_START_TIMEOUT_MS } from "./plan.ts";
import { residentBytes, spawnNode, stopChild, withTimeout } from "./processes.ts";

export interface Service {
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

async function readMetrics(metricsUrl: string): Promise<Map<string, number>> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
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

export interface ServiceOptions {
  /** Names the log file and the PGlite directory: the same label opens the same directory again. */
  label?: string;
  extraEnv?: Record<string, string>;
  /** false: no inspector (collectGarbage() then fails), so memory is the service's alone. */
  inspector?: boolean;
  /** Called with the process as soon as it is spawned, before it is ready (to watch it start). */
  onSpawn?: (child: ChildProcess) => void;
  /** The checkout whose service runs: this tree, or an earlier revision's copy (--baseline). */
  root?: string;
}

/** The service's entry point in a checkout: service/ since the layout's renaming, realtime/ before. */
function serviceEntry(root: string): string {
  const current = join(root, "service", "main.ts");
  return existsSync(current) ? current : join(root, "realtime", "main.ts");
}

export async function startService(
  tempDir: string,
  databaseUrl: string | null,
  { label = "", extraEnv = {}, inspector = true, onSpawn, root = ROOT }: ServiceOptions = {},
): Promise<Service> {
  const port = await freePort();
  // /metrics has a listener of its own (docs/design.md#9): two services side by side need two.
  const metricsPort = await freePort();
  const inspectorPort = await freePort();
  const logFile = join(tempDir, `service-${databaseUrl ? "postgres" : "pglite"}${label}.log`);
  const log = openSync(logFile, "a");
  const child = spawnNode(serviceEntry(root), [], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      METRICS_PORT: String(metricsPort),
      STATIC_DIR: "",
      LOG_LEVEL: "warn",
      DATA_DIR: join(tempDir, `pglite-service${label}`),
      DATABASE_URL: databaseUrl ?? "",
      ...LIFTED_LIMITS_ENV,
      BID_RATE_WINDOW_MS: "1000",
      // One endless auction, as every phase assumes: no round ends in the middle of a phase.
      AUCTION_ROUND_SECONDS: "0",
      // One frame per bid, as these phases were measured before the frame budget (their receivers
      // count each bid's frame); the conflation phase sets its own (docs/design.md#10).
      MAX_FRAMES_PER_SECOND: "0",
      // Only so the benchmark can ask for a full GC before reading memory; loopback only.
      ...(inspector ? { NODE_OPTIONS: `--inspect=127.0.0.1:${inspectorPort}` } : {}),
      ...extraEnv,
    },
    stdio: ["ignore", log, log],
  });
  onSpawn?.(child);
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
    metrics: () => readMetrics(`http://127.0.0.1:${metricsPort}/metrics`),
    stop: () => stopChild(child, 15_000),
  };
}

/** `coalesced`: the frames of one turn as one write per socket (bareServer.ts). */
export async function startBareServer(coalesced = false): Promise<Service> {
  const port = await freePort();
  const child = spawnNode(BARE_SERVER_FILE, [String(port), ...(coalesced ? ["coalesced"] : [])], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
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

export async function memoryOf(service: Service): Promise<{ rssBytes: number; heapUsedBytes: number }> {
  await service.collectGarbage();
  const metrics = await service.metrics();
  return { rssBytes: await residentBytes(service.pid), heapUsedBytes: metrics.get("nodejs_heap_size_used_bytes") ?? 0 };
}

export async function startDurableCluster(
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
