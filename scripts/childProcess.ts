/** Small process helpers shared by the benchmark scripts. */
import type { ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

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
