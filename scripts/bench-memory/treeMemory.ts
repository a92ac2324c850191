/**
 * The resident memory of a process and every process it started, read from /proc while it runs.
 *
 * A process's own peak is exact: the kernel keeps it (VmHWM). A tree's peak is not kept anywhere,
 * so it is sampled: the sum of VmRSS over the live processes every SAMPLE_INTERVAL_MS. The peak
 * reported is the larger of that sampled sum and the root's VmHWM, so a spike of the root shorter
 * than the interval is still counted; a child's spike shorter than the interval may be missed.
 * Watching resets the root's VmHWM first (clear_refs 5), so a phase's peak is its own, not the
 * process's since it started.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

const SAMPLE_INTERVAL_MS = 10;

/** What /proc/<pid>/status says of one process's memory (its kB as bytes). */
type ProcessStatus = { pid: number; command: string; rssBytes: number; highWaterBytes: number };

async function statusOf(pid: number): Promise<ProcessStatus | null> {
  const text = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN);
  const rss = field("VmRSS");
  // A process that has exited (or a zombie, which has no memory left) is not counted.
  if (!Number.isFinite(rss)) return null;
  return {
    pid,
    command: /^Name:\s+(.*)$/m.exec(text)?.[1] ?? "?",
    rssBytes: rss * 1024,
    highWaterBytes: field("VmHWM") * 1024,
  };
}

/** The pids of every process below `pid`, children first, through each thread's children list. */
async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  const pending = [pid];
  // A process tree is finite; the bound only guards against a pid reused into a cycle mid-read.
  for (let step = 0; step < 10_000 && pending.length > 0; step += 1) {
    const parent = pending.pop() as number;
    const threads = await readdir(`/proc/${parent}/task`).catch(() => [] as string[]);
    for (const thread of threads) {
      const text = await readFile(`/proc/${parent}/task/${thread}/children`, "utf8").catch(() => "");
      for (const child of text.split(" ").filter(Boolean).map(Number)) {
        if (!found.includes(child)) {
          found.push(child);
          pending.push(child);
        }
      }
    }
  }
  return found;
}

export interface TreeReading {
  /** The sum of VmRSS over the root and its live descendants. */
  rssBytes: number;
  processes: number;
}

export interface TreePeak {
  /** max(sampled sum of VmRSS over the tree, the root's VmHWM). */
  peakBytes: number;
  /** The root's VmHWM alone (exact). */
  rootHighWaterBytes: number;
  /** Every descendant seen while watching, with the highest VmHWM read for it. */
  children: { pid: number; command: string; highWaterBytes: number }[];
}

/** Reads the tree's resident memory now. */
export async function readTree(rootPid: number): Promise<TreeReading> {
  const statuses = await Promise.all([rootPid, ...(await descendants(rootPid))].map(statusOf));
  const live = statuses.filter((status) => status !== null);
  return { rssBytes: live.reduce((sum, status) => sum + status.rssBytes, 0), processes: live.length };
}

/**
 * Samples the tree below rootPid until stop() (or the root exits); stop() gives the peak seen.
 * Peaks are of the watching only: watch a new phase with a new watcher.
 */
export function watchTree(rootPid: number): { stop(): Promise<TreePeak> } {
  let sampledPeak = 0;
  let rootHighWater = 0;
  const children = new Map<number, { pid: number; command: string; highWaterBytes: number }>();
  let watching = true;
  const loop = (async () => {
    // "5" resets the peak resident size (proc(5), clear_refs); a process not ours refuses, and then
    // its peak is the process's whole life's.
    await writeFile(`/proc/${rootPid}/clear_refs`, "5").catch(() => {});
    // Bounded by stop(), and by the root's exit.
    while (watching) {
      const root = await statusOf(rootPid);
      if (!root) return;
      rootHighWater = Math.max(rootHighWater, root.highWaterBytes);
      const others = (await Promise.all((await descendants(rootPid)).map(statusOf))).filter(
        (status) => status !== null,
      );
      for (const child of others) {
        const known = children.get(child.pid);
        children.set(child.pid, {
          pid: child.pid,
          command: child.command,
          highWaterBytes: Math.max(known?.highWaterBytes ?? 0, child.highWaterBytes),
        });
      }
      sampledPeak = Math.max(
        sampledPeak,
        others.reduce((sum, child) => sum + child.rssBytes, root.rssBytes),
      );
      await sleep(SAMPLE_INTERVAL_MS);
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return {
        peakBytes: Math.max(sampledPeak, rootHighWater),
        rootHighWaterBytes: rootHighWater,
        children: [...children.values()],
      };
    },
  };
}
