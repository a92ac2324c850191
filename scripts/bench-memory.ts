/**
 * The service's memory (docs/design.md#9, "the embedded default fits a small machine"): the real
 * service (service/main.ts, as `npm run serve` runs it; no pages, no console) started as a child
 * process, on embedded PGlite in a new data directory and on a throwaway PostgreSQL cluster:
 *
 *  - template (PGlite): `npm run build`'s last step, scripts/pglite-template.ts, a process of its own;
 *  - first start: a new data directory (PGlite: a copy of that template) or database, the
 *    migrations applied;
 *  - restart: the same directory or database again, after a clean stop;
 *  - bids: that restarted service takes 10,000 accepted bids over real sockets through the auction
 *    protocol (10 bidders in closed loops), then sits idle;
 *  - first start, no template (PGlite): a new directory when the template is missing (PGlite
 *    upgraded since the last build): initdb in a child process of the service.
 *
 * Each gives the resident memory (VmRSS) idle, IDLE_MS after the service answered /readyz (or
 * after the last bid), and the peak of the phase: the root's VmHWM (reset when the phase begins)
 * or, when the service has child processes, the larger sampled sum over all of them
 * (scripts/bench-memory/treeMemory.ts). On PostgreSQL the database server is not the service's:
 * its processes' proportional share (PSS) is shown beside, for information.
 * The bars, on PGlite as `npm start` runs it (first start, restart, bids): idle at most 400 MB
 * after a first start and after a restart, peak at most 600 MB. The exit code is 1 when one is missed.
 *
 * Usage: npm run bench:memory [-- --backend pglite|postgres] [--bids 10000]
 * Prints a table; writes bench/results/memory-<date>.json. Every wait is bounded; the service and
 * the cluster are stopped on exit. Memory figures barely move with the machine's load; times do
 * (the machine's other work shares its cores).
 */
import { once } from "node:events";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { type BidRun, placeBids } from "./bench-memory/bidders.ts";
import { readTree, type TreePeak, watchTree } from "./bench-memory/treeMemory.ts";
import { RESULTS_DIR, ROOT } from "./bench-realtime/plan.ts";
import { cpuSeconds, postgresPids, postmasterPid, spawnNode, withTimeout } from "./bench-realtime/processes.ts";
import { type Service, startDurableCluster, startService } from "./bench-realtime/service.ts";
import { codeState, packageVersion } from "./harness/codeState.ts";
import { readCommandLine, wholeNumber } from "./harness/commandLine.ts";
import { describeMachine } from "./harness/machine.ts";
import type { PostgresCluster } from "./harness/postgresCluster.ts";

const USAGE = "usage: npm run bench:memory -- [--backend pglite|postgres] [--bids <count>]";
/** How long the service sits with nothing to do before its idle memory is read. */
const IDLE_MS = 5_000;
const BIDDERS = 10;
const BIDS_TIMEOUT_MS = 10 * 60_000;
const MB = 1024 * 1024;
const BARS = { idleBytes: 400 * MB, peakBytes: 600 * MB };
const TEMPLATE_TIMEOUT_MS = 180_000;

type Backend = "pglite" | "postgres";
type PhaseName = "template" | "first start" | "restart" | "bids" | "first start, no template";

/** The phases the bars judge; the template's making and a first start without one are reported beside. */
const BARRED_PHASES: PhaseName[] = ["first start", "restart", "bids"];

interface Phase {
  phase: PhaseName;
  /** From spawning the service to its first 200 at /readyz (the starts), or the template's making. */
  readyMs: number | null;
  /** The tree's VmRSS once idle (null for the template, made by a process that exits). */
  idleRssBytes: number | null;
  peak: TreePeak;
  /** The bids phase. */
  bids: (BidRun & { serviceCpuSeconds: number }) | null;
  /** PostgreSQL's server processes, summed PSS, at the idle reading (PostgreSQL only). */
  databasePssBytes: number | null;
}

function readOptions(args: string[]): { backends: Backend[]; bids: number } {
  const { values } = parseArgs({
    args,
    options: { backend: { type: "string" }, bids: { type: "string", default: "10000" } },
    strict: true,
    allowPositionals: false,
  });
  if (values.backend !== undefined && values.backend !== "postgres" && values.backend !== "pglite") {
    throw new Error(`--backend takes postgres or pglite, got "${values.backend}"`);
  }
  const bids = wholeNumber("bids", values.bids, 1, 1_000_000);
  return { backends: values.backend ? [values.backend] : ["pglite", "postgres"], bids };
}

/** Summed PSS of the cluster's processes: shared buffers counted once, not once per backend. */
async function clusterPss(cluster: PostgresCluster): Promise<number> {
  let total = 0;
  for (const pid of await postgresPids(await postmasterPid(cluster.dataDir))) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => "");
    total += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
  }
  return total;
}

async function idleReading(service: Service, cluster: PostgresCluster | null) {
  await sleep(IDLE_MS);
  const { rssBytes } = await readTree(service.pid);
  return { rssBytes, databasePssBytes: cluster ? await clusterPss(cluster) : null };
}

/** `npm run build`'s template step (scripts/pglite-template.ts) into `dir`, as a process of its own. */
async function measureTemplate(dir: string): Promise<Phase> {
  const startedAt = performance.now();
  const child = spawnNode(join(ROOT, "scripts", "pglite-template.ts"), [dir], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const watcher = watchTree(child.pid ?? 0);
  const [code] = (await withTimeout(once(child, "exit"), TEMPLATE_TIMEOUT_MS, "making the PGlite template")) as [
    number | null,
  ];
  const peak = await watcher.stop();
  if (code !== 0) throw new Error(`scripts/pglite-template.ts exited with code ${code}`);
  return {
    phase: "template",
    readyMs: performance.now() - startedAt,
    idleRssBytes: null,
    peak,
    bids: null,
    databasePssBytes: null,
  };
}

async function measureStart(
  phase: PhaseName,
  tempDir: string,
  cluster: PostgresCluster | null,
  options: { label?: string; templateDir?: string } = {},
): Promise<{ service: Service; figures: Phase }> {
  let watcher: ReturnType<typeof watchTree> | undefined;
  const spawnedAt = performance.now();
  const service = await startService(tempDir, cluster?.url ?? null, {
    label: options.label,
    extraEnv: options.templateDir ? { PGLITE_TEMPLATE_DIR: options.templateDir } : {},
    inspector: false,
    onSpawn: (child) => {
      watcher = watchTree(child.pid ?? 0);
    },
  });
  const readyMs = performance.now() - spawnedAt;
  try {
    const idle = await idleReading(service, cluster);
    const peak = await (watcher as ReturnType<typeof watchTree>).stop();
    return {
      service,
      figures: {
        phase,
        readyMs,
        idleRssBytes: idle.rssBytes,
        peak,
        bids: null,
        databasePssBytes: idle.databasePssBytes,
      },
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

async function measureBids(service: Service, cluster: PostgresCluster | null, count: number): Promise<Phase> {
  const watcher = watchTree(service.pid);
  // CPU time rather than the elapsed time alone: other work on the machine stretches the latter.
  const cpuBefore = await cpuSeconds(service.pid);
  const run = await placeBids(service.socketUrl, { count, bidderCount: BIDDERS, timeoutMs: BIDS_TIMEOUT_MS });
  const bids = { ...run, serviceCpuSeconds: (await cpuSeconds(service.pid)) - cpuBefore };
  const idle = await idleReading(service, cluster);
  return {
    phase: "bids",
    readyMs: null,
    idleRssBytes: idle.rssBytes,
    peak: await watcher.stop(),
    bids,
    databasePssBytes: idle.databasePssBytes,
  };
}

async function runBackend(backend: Backend, tempDir: string, bids: number, onCluster: (c: PostgresCluster) => void) {
  let cluster: PostgresCluster | null = null;
  let settings: Record<string, string> | null = null;
  if (backend === "postgres") {
    const started = await startDurableCluster(tempDir);
    cluster = started.cluster;
    settings = { version: started.version, ...started.settings };
    onCluster(cluster);
  }
  const phases: Phase[] = [];
  // PGlite as `npm start` runs it: the build made the template, the first start copies it.
  const templateDir = backend === "pglite" ? join(tempDir, "pglite-template") : undefined;
  try {
    if (templateDir) phases.push(await measureTemplate(templateDir));
    const first = await measureStart("first start", tempDir, cluster, { templateDir });
    await first.service.stop();
    phases.push(first.figures);
    const restart = await measureStart("restart", tempDir, cluster, { templateDir });
    phases.push(restart.figures);
    try {
      phases.push(await measureBids(restart.service, cluster, bids));
    } finally {
      await restart.service.stop();
    }
    if (backend === "pglite") {
      // With no template (PGlite upgraded since the last build): initdb in a child process.
      const untemplated = await measureStart("first start, no template", tempDir, cluster, {
        label: "-untemplated",
        templateDir: join(tempDir, "no-template"),
      });
      await untemplated.service.stop();
      phases.push(untemplated.figures);
    }
  } finally {
    await cluster?.destroy();
  }
  return { backend, postgres: settings, phases };
}

const megabytes = (bytes: number) => String(Math.round(bytes / MB));

function printTable(reports: Awaited<ReturnType<typeof runBackend>>[], bids: number): string[] {
  const header = ["backend", "phase", "time", "idle MB", "peak MB", "child processes", "bids", "database PSS MB"];
  const rows = reports.flatMap((report) =>
    report.phases.map((phase) => [
      report.backend,
      phase.phase === "bids" ? `after ${bids.toLocaleString("en-US")} bids` : phase.phase,
      phase.readyMs === null ? "" : `${(phase.readyMs / 1000).toFixed(1)} s`,
      phase.idleRssBytes === null ? "" : megabytes(phase.idleRssBytes),
      megabytes(phase.peak.peakBytes),
      // Not the subshell spawnNode's `sh -c` forks for `ulimit -Hn` before it execs the service.
      String(phase.peak.children.filter((child) => child.command !== "sh").length),
      phase.bids
        ? `${(phase.bids.elapsedMs / 1000).toFixed(1)} s, ${Math.round(phase.bids.accepted / (phase.bids.elapsedMs / 1000))}/s, ` +
          `${Math.round((phase.bids.serviceCpuSeconds * 1e6) / phase.bids.accepted)} µs CPU/bid`
        : "",
      phase.databasePssBytes === null ? "" : megabytes(phase.databasePssBytes),
    ]),
  );
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));

  const missed: string[] = [];
  for (const report of reports.filter((entry) => entry.backend === "pglite")) {
    // The bars are the service's as `npm start` runs it: after the build's template step.
    for (const phase of report.phases.filter((entry) => BARRED_PHASES.includes(entry.phase))) {
      if (phase.phase !== "bids" && (phase.idleRssBytes ?? 0) > BARS.idleBytes) {
        missed.push(`${phase.phase}: idle ${megabytes(phase.idleRssBytes ?? 0)} MB > 400 MB`);
      }
      if (phase.peak.peakBytes > BARS.peakBytes) {
        missed.push(`${phase.phase}: peak ${megabytes(phase.peak.peakBytes)} MB > 600 MB`);
      }
    }
  }
  if (reports.some((report) => report.backend === "pglite")) {
    console.log(
      missed.length === 0
        ? "PGlite bars (idle ≤ 400 MB after a first start and a restart, peak ≤ 600 MB): pass"
        : `PGlite bars: FAIL (${missed.join("; ")})`,
    );
  }
  return missed;
}

async function main(): Promise<void> {
  const options = readCommandLine("bench:memory", USAGE, readOptions);
  const code = await codeState(["service", "sql", "scripts/bench-memory*"]);
  console.log(
    `code at ${code.commit}${code.modified.length ? `, uncommitted changes to ${code.modified.join(", ")}` : ""}`,
  );
  const tempDir = await mkdtemp(join(os.tmpdir(), "bench-memory-"));
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
    const loadAverageAtStart = os.loadavg();
    const reports = [];
    for (const backend of options.backends) {
      console.log(`${backend}: first start, restart, ${options.bids.toLocaleString("en-US")} bids…`);
      reports.push(
        await runBackend(backend, tempDir, options.bids, (started) => {
          cluster = started;
        }),
      );
      cluster = null;
    }
    const missed = printTable(reports, options.bids);
    const date = new Date().toISOString();
    const results = {
      date,
      machine: {
        ...describeMachine(),
        pglite: await packageVersion("@electric-sql/pglite"),
        loadAverageAtStart,
        loadAverageAtEnd: os.loadavg(),
      },
      code,
      method: {
        idleMs: IDLE_MS,
        bidders: BIDDERS,
        peak: "max(root VmHWM since the phase began, sampled sum of VmRSS over the process tree every 10 ms)",
        bars: { idleMB: 400, peakMB: 600 },
      },
      reports,
      barsMissed: missed,
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `memory-${date.slice(0, 10)}.json`);
    await writeFile(`${file}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
    console.log(`results: ${relative(ROOT, file)}`);
    if (missed.length > 0) process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

await main();
