/** Small process helpers shared by the benchmark scripts and the tests. */
import { type ChildProcess, execFile } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

/** execFile as a promise: resolves with stdout and stderr, rejects with them on a non-zero exit. */
export const run = promisify(execFile);

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

export function exitStatus(child: ChildProcess): string {
  return child.signalCode ? `killed by ${child.signalCode}` : `code ${child.exitCode}`;
}

export async function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `url` until it answers 200; fails early if `child` (the process serving it) exits. */
export async function waitForOk(url: string, child: ChildProcess, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = "no answer yet";
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new Error(`${what} exited (${exitStatus(child)}) before answering 200 at ${url}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
      lastProblem = `status ${response.status}`;
    } catch (error) {
      lastProblem = errorMessage(error);
    }
    await sleep(200);
  }
  throw new Error(`${what} did not answer 200 at ${url} within ${timeoutMs / 1000} s (${lastProblem})`);
}

/** SIGTERM, then SIGKILL if it has not exited within the grace. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const inTime = await Promise.race([exited.then(() => true), sleep(graceMs, false, { ref: false })]);
  if (inTime) return;
  child.kill("SIGKILL");
  await Promise.race([exited, sleep(graceMs, undefined, { ref: false })]);
}

/** SIGKILL now (a cleanup, or a crash on purpose) and wait until the process is gone. */
export async function killChild(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}
