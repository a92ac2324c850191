/**
 * Child processes of the realtime benchmark and what /proc says about them. Every child starts
 * through `sh -c 'ulimit -n <hard limit>; exec node …'` (Node cannot raise its own descriptor
 * limit) and is killed when the benchmark exits, however it exits.
 */
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { stopChild, withTimeout } from "../harness/childProcess.ts";
import type { Command, CoordinatorMessage, GeneratorEvent } from "./loadGenerator.ts";
import { ROOT } from "./plan.ts";

export { stopChild, withTimeout };

const children = new Set<ChildProcess>();

function killAll(): void {
  for (const child of children) child.kill("SIGKILL");
}
process.once("exit", killAll);

/** Runs a TypeScript file on this Node (process.execPath) with the descriptor limit raised to the hard limit. */
export function spawnNode(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdio: StdioOptions; cwd: string },
): ChildProcess {
  const child = spawn(
    "sh",
    ["-c", 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', process.execPath, file, ...args],
    { cwd: options.cwd, env: options.env ?? process.env, stdio: options.stdio },
  );
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/**
 * Runs a measuring script (insertLoad.ts, storeLoad.ts) on its one JSON argument and returns the
 * JSON of the last line it prints, failing with `what` if it runs past `timeoutMs` or exits non-zero.
 */
export async function runMeasurement<T>(file: string, input: unknown, timeoutMs: number, what: string): Promise<T> {
  const child = spawnNode(file, [JSON.stringify(input)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  const [code] = (await withTimeout(once(child, "exit"), timeoutMs, what)) as [number];
  if (code !== 0) throw new Error(`${what} exited with code ${code}`);
  return JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as T;
}

// ---------------------------------------------------------------------------------------------
// Load generators

export class Generator {
  readonly child: ChildProcess;
  /** The lowest bid id every live receiving socket of this generator has read. */
  lowestLastId = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly onProgress: () => void;

  constructor(file: string, cwd: string, onProgress: () => void) {
    this.onProgress = onProgress;
    this.child = spawnNode(file, [], { cwd, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child.on("message", (event: GeneratorEvent) => {
      if (event.type === "progress") {
        this.lowestLastId = event.lowestLastId;
        this.onProgress();
        return;
      }
      const waiter = this.pending.get(event.id);
      this.pending.delete(event.id);
      if (event.error !== undefined) waiter?.reject(new Error(`load generator: ${event.error}`));
      else waiter?.resolve(event.result);
    });
    this.child.once("exit", (code, signal) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  run<T>(command: Command, timeoutMs: number): Promise<T> {
    const id = this.nextId;
    this.nextId += 1;
    const answer = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    });
    this.post({ type: "command", id, command });
    return withTimeout(answer, timeoutMs, `load generator command ${command.type}`);
  }

  post(message: CoordinatorMessage): void {
    if (this.child.connected) this.child.send(message);
  }

  async stop(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await stopChild(this.child, 2_000);
  }
}

// ---------------------------------------------------------------------------------------------
// /proc

const CLOCK_TICKS_PER_SECOND = 100;

/** User plus system CPU seconds a process has used, or 0 once it is gone. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / CLOCK_TICKS_PER_SECOND;
}

export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** The PID of the cluster's postmaster: the first line of postmaster.pid in its data directory. */
export async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
}

/** The postmaster and every process it started (backends, walwriter, checkpointer…). */
export async function postgresPids(postmasterPid: number): Promise<number[]> {
  const pids = [postmasterPid];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (parent === postmasterPid) pids.push(Number(entry));
  }
  return pids;
}

/** Busy fraction of the whole machine (all cores) between two readings of /proc/stat. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0] ?? "";
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  const total = values.reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

export interface CpuShares {
  /** CPU time as a share of one core over the interval (1 = one core fully busy). */
  service: number;
  postgres: number | null;
  generators: number;
  /** Busy share of the whole machine, every process included (others' tests too). */
  machineBusy: number;
}

/** Starts measuring CPU; the returned function ends it and gives each party's share. */
export async function startCpuSampling(
  servicePid: number,
  generatorPids: number[],
  postgresPidList: number[] | null,
): Promise<() => Promise<CpuShares>> {
  const sum = async (pids: number[]) => (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
  const startedAt = performance.now();
  const service = await cpuSeconds(servicePid);
  const generators = await sum(generatorPids);
  const postgres = postgresPidList ? await sum(postgresPidList) : 0;
  const machine = await machineTicks();
  return async () => {
    const seconds = (performance.now() - startedAt) / 1000;
    const machineAfter = await machineTicks();
    const share = (value: number) => Math.round((value / seconds) * 100) / 100;
    return {
      service: share((await cpuSeconds(servicePid)) - service),
      postgres: postgresPidList ? share((await sum(postgresPidList)) - postgres) : null,
      generators: share((await sum(generatorPids)) - generators),
      machineBusy:
        Math.round(((machineAfter.busy - machine.busy) / Math.max(1, machineAfter.total - machine.total)) * 100) / 100,
    };
  };
}
