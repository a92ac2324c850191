/**
 * The auction service as a real process (`node service/main.ts`), as it runs in production: for
 * tests that kill it, signal it or run two of them on one database.
 *
 *   const service = await startServiceProcess({ databaseUrl, env: { HEARTBEAT_INTERVAL_MS: "500" } });
 *   // service.socketUrl → ws://127.0.0.1:<port>/realtime, service.metricsUrl → its metrics listener
 *   service.signal("SIGTERM"); const { code } = await service.exited;
 *   await service.stop(); // SIGKILL if still running, then remove its data directory (afterEach)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { exitStatus, killChild } from "../../../scripts/harness/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "../../../scripts/harness/liftedLimits.ts";
import { isOpenLine } from "../../../service/startLine.ts";
import { cleanUpAfter } from "./stores.ts";

const START_TIMEOUT_MS = 60_000;

export interface ServiceProcess {
  readonly port: number;
  readonly socketUrl: string;
  readonly httpUrl: string;
  /** /metrics on the process's metrics listener (a free port it picked, METRICS_PORT=0). */
  readonly metricsUrl: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited, however. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The JSON log lines so far. */
  readonly logs: Record<string, unknown>[];
  /** Stderr so far (a crash shows here). */
  stderr(): string;
  /** True when it exited without the test having signalled it: a crash. */
  crashed(): boolean;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL if still running, then remove the data directory; safe to call twice. */
  stop(): Promise<void>;
}

export interface ServiceProcessOptions {
  databaseUrl: string;
  /** 0 (default) picks a free port; a restart passes the port it had. */
  port?: number;
  env?: Record<string, string>;
  /** The process's limit on open files (`ulimit -n`); unset, this process's. */
  fileLimit?: number;
  /** PGlite's directory, the test's to remove (default: a new temp directory, removed by stop()). */
  dataDir?: string;
}

/**
 * The environment of `node service/main.ts` in a test: loopback, free ports (the public one and
 * the metrics listener's, so processes side by side never collide), no pages, lifted limits, info logs.
 */
export function serviceProcessEnv(options: {
  dataDir: string;
  databaseUrl?: string;
  port?: number;
  env?: Record<string, string>;
}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(options.port ?? 0),
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    STATIC_DIR: "",
    DATA_DIR: options.dataDir,
    DATABASE_URL: options.databaseUrl ?? "",
    LOG_LEVEL: "info",
    ...LIFTED_LIMITS_ENV,
    ...options.env,
  };
}

/** Where a service on loopback answers: its socket and routes on `port`, /metrics on `metricsPort`. */
export function serviceUrls(port: number, metricsPort: number) {
  return {
    socketUrl: `ws://127.0.0.1:${port}/realtime`,
    httpUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
  };
}

export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  // Unused with DATABASE_URL, but never the repository's ./data.
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "nothing-service-")));
  const removeDataDir = () => (ownDataDir ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve());
  const [command, args] =
    options.fileLimit === undefined
      ? [process.execPath, ["service/main.ts"]]
      : // exec: the pid stays the service's, for the signals tests send it.
        ["/bin/sh", ["-c", `ulimit -n ${options.fileLimit} && exec "$0" service/main.ts`, process.execPath]];
  const child = spawn(command, args, {
    env: serviceProcessEnv({ ...options, dataDir }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = "";
  let signalled = false;
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  // "close", not "exit": after it the output is all read, so `logs` and `stderr` are complete.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let metricsPort = 0;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the service did not start listening in time")), START_TIMEOUT_MS);
    lines.on("line", (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = { msg: line };
      }
      logs.push(entry);
      if (isOpenLine(entry)) {
        clearTimeout(timer);
        metricsPort = Number(entry.metricsPort);
        resolve(Number(entry.port));
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before listening: ${stderr}`));
    });
  }).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await exited;
    await removeDataDir();
    throw error;
  });
  let stopped = false;
  return {
    port,
    ...serviceUrls(port, metricsPort),
    child,
    exited,
    logs,
    stderr: () => stderr,
    crashed: () => !signalled && (child.exitCode !== null || child.signalCode !== null),
    signal(signal) {
      signalled = true;
      child.kill(signal);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null && child.signalCode === null) {
        signalled = true;
        child.kill("SIGKILL");
      }
      await exited;
      await removeDataDir();
    },
  };
}

export interface CollectedProcess {
  child: ChildProcess;
  /** The exit code (null when a signal ended it), once its output is all read. */
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Both, in the order they came. */
  output(): string;
}

/**
 * `command` with the test environment `env`, its output collected until it exits; killed when the
 * current test ends. `group`: the process leads a process group of its own, and the whole group
 * is killed then (npm and the service it starts).
 */
export function spawnCollected(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  { group = false }: { group?: boolean } = {},
): CollectedProcess {
  const child: ChildProcess = spawn(command, args, {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: group,
  });
  cleanUpAfter(async () => {
    if (group && child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    }
    await killChild(child);
  });
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
    output += chunk;
  });
  // "close": once its output is all read.
  const exited = once(child, "close").then(([code]) => code as number | null);
  return { child, exited, stdout: () => stdout, stderr: () => stderr, output: () => output };
}

/**
 * `node service/main.ts` with the test environment `env`, its output collected until it exits.
 * `fileModesBind`: as root, the service runs without the capabilities that let root write or read
 * past a file's mode (setpriv), so a read-only directory stops it as it stops any user. Root keeps
 * its uid, so a checkout under a directory only root may enter (mktemp -d, /root) still runs.
 */
export function spawnService(env: NodeJS.ProcessEnv, { fileModesBind = false } = {}): CollectedProcess {
  if (fileModesBind && process.getuid?.() === 0) {
    const dropped = "--bounding-set=-dac_override,-dac_read_search";
    return spawnCollected("setpriv", [dropped, process.execPath, "service/main.ts"], env);
  }
  return spawnCollected(process.execPath, ["service/main.ts"], env);
}

/** Whether a TCP connection to the port on loopback is accepted. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The JSON log lines in `text`; anything else (npm's banner) is left out. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      // A line cut where the output read so far ends: the next look reads it whole.
    }
  }
  return lines;
}

/**
 * The open line (service/startLine.ts) once the process logs it, looked for as each piece of its
 * output arrives; fails if it exits first or takes too long.
 */
export async function waitForOpenLine(started: CollectedProcess, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const stdout = started.child.stdout as NodeJS.ReadableStream;
  const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
  // Registered after spawnCollected's own listener, so stdout() already holds each new piece.
  const look = () => {
    const open = jsonLines(started.stdout()).find(isOpenLine);
    if (open) resolve(open);
  };
  const timer = setTimeout(
    () => reject(new Error(`not open within ${timeoutMs / 1000} s: ${started.output()}`)),
    timeoutMs,
  );
  stdout.on("data", look);
  void started.exited.then(() => {
    look();
    reject(new Error(`exited (${exitStatus(started.child)}) before it was open: ${started.output()}`));
  });
  look();
  try {
    return await promise;
  } finally {
    clearTimeout(timer);
    stdout.off("data", look);
  }
}
