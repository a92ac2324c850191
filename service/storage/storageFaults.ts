/**
 * Storage faults on either backend (docs/decisions/2026-11-27-storage-faults-end-cleanly.md). A full
 * disk used to leave /readyz at 200 while every bid failed and logged a stack: now the first write
 * that fails for lack of space makes the store not ready at once (a load balancer stops sending
 * bids), the failed bids are counted in one line per interval instead of one line each, and a probe
 * brings readiness back once space is free, since no bid arrives to find out while the balancer
 * sends none. An engine that aborted (PGlite's PANIC or WebAssembly abort) is not a full disk:
 * nothing can be asked of it any more, so its store ends the process (pglite.ts).
 */
import type { Logger } from "../logger.ts";
import { type StorageFaultKind, StorageFullError } from "./types.ts";

export const STORAGE_FAULT_KINDS: readonly StorageFaultKind[] = ["disk_full", "io_error", "panic"];

/** PostgreSQL's disk_full and io_error SQLSTATEs, and what PGlite and Node say of the same. */
const DISK_FULL_CODES = new Set(["53100", "ENOSPC"]);
const DISK_FULL_TEXT = /No space left on device|could not extend file|ENOSPC/i;
const IO_ERROR_CODES = new Set(["58030", "EIO"]);
/**
 * What PGlite says when its engine is gone for good: a PANIC (PostgreSQL would restart its
 * processes; PGlite is one process, ours), a WebAssembly abort, or the state a failed write
 * leaves its WAL insertion in.
 */
const ENGINE_ABORT_TEXT = /\bPANIC\b|Aborted\(|XLogBeginInsert was already called/;

function fieldOf(error: unknown, name: string): string | undefined {
  const value = (error as Record<string, unknown> | null)?.[name];
  return typeof value === "string" ? value : undefined;
}

/** Whether PGlite's engine aborted: a RuntimeError of its WebAssembly, or a message that says so. */
export function isEngineAbort(error: unknown): boolean {
  if (error instanceof WebAssembly.RuntimeError || fieldOf(error, "name") === "RuntimeError") return true;
  if (fieldOf(error, "severity") === "PANIC") return true;
  return ENGINE_ABORT_TEXT.test(fieldOf(error, "message") ?? "");
}

/** Whether a line PGlite's engine wrote to its stderr says that it aborted (checked as it is written). */
export function isEngineAbortLine(line: string): boolean {
  return ENGINE_ABORT_TEXT.test(line);
}

/** The storage fault behind a failed query, or null for any other failure. */
export function storageFaultOf(error: unknown): StorageFaultKind | null {
  if (isEngineAbort(error)) return "panic";
  const code = fieldOf(error, "code");
  if ((code && DISK_FULL_CODES.has(code)) || DISK_FULL_TEXT.test(fieldOf(error, "message") ?? "")) {
    return "disk_full";
  }
  if (code && IO_ERROR_CODES.has(code)) return "io_error";
  return null;
}

/** How often the failed bids are counted in the log, and how often space is looked for. */
export const SPACE_LOG_INTERVAL_MS = 10_000;
export const SPACE_PROBE_INTERVAL_MS = 1_000;

export interface SpaceWatchOptions {
  logger: Logger;
  /** Resolves when a write that needs new space would succeed now; rejects while it would not. */
  probe: () => Promise<void>;
  /** Called with true when space ran out, false when it is back. */
  onFullChange: (full: boolean) => void;
  logIntervalMs?: number;
  probeIntervalMs?: number;
}

export interface SpaceWatch {
  /** A write failed for lack of space: the store is not ready until a write or the probe succeeds. */
  ranOut(error: unknown): void;
  /** Bids refused because their write failed for lack of space: counted in the next interval's line. */
  failedBids(count: number): void;
  /** A write succeeded: space is back if it had run out. */
  wrote(): void;
  /** A placement of `count` bids: its failure for lack of space counts them; its success shows there is space. */
  placing<T>(count: number, work: () => Promise<T>): Promise<T>;
  readonly full: boolean;
  close(): void;
}

function describe(error: unknown): string {
  return fieldOf(error, "message") ?? String(error);
}

export function createSpaceWatch(options: SpaceWatchOptions): SpaceWatch {
  const { logger, probe, onFullChange } = options;
  const logIntervalMs = options.logIntervalMs ?? SPACE_LOG_INTERVAL_MS;
  const probeIntervalMs = options.probeIntervalMs ?? SPACE_PROBE_INTERVAL_MS;
  let full = false;
  let since = 0;
  let unlogged = 0;
  let logTimer: NodeJS.Timeout | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  let closed = false;

  function flushCount() {
    logTimer = undefined;
    if (unlogged === 0) return;
    const count = unlogged;
    unlogged = 0;
    logger.warn(
      { kind: "disk_full", failedBids: count, intervalMs: logIntervalMs },
      `${count} ${count === 1 ? "bid" : "bids"} failed for lack of space`,
    );
    // Counting goes on while bids keep failing: one line per interval at most.
    logTimer = setTimeout(flushCount, logIntervalMs);
    logTimer.unref();
  }

  function scheduleProbe() {
    if (closed || !full || probeTimer) return;
    probeTimer = setTimeout(async () => {
      try {
        await probe();
        probeTimer = undefined;
        if (full) spaceBack("a write probe succeeded");
      } catch {
        probeTimer = undefined;
        scheduleProbe();
      }
    }, probeIntervalMs);
    probeTimer.unref();
  }

  function spaceBack(how: string) {
    full = false;
    clearTimeout(logTimer);
    clearTimeout(probeTimer);
    probeTimer = undefined;
    const pending = unlogged;
    unlogged = 0;
    logTimer = undefined;
    logger.info(
      { kind: "disk_full", fullForMs: Date.now() - since, failedBids: pending },
      `storage has space again (${how}): ready for bids`,
    );
    onFullChange(false);
  }

  function failedBids(count: number) {
    if (closed || count <= 0) return;
    unlogged += count;
    if (!logTimer) {
      logTimer = setTimeout(flushCount, logIntervalMs);
      logTimer.unref();
    }
  }

  function wrote() {
    if (full && !closed) spaceBack("a write succeeded");
  }

  return {
    ranOut(error) {
      if (closed || full) return;
      full = true;
      since = Date.now();
      logger.error(
        { kind: "disk_full", reason: describe(error), probeIntervalMs },
        "storage is full: a write failed for lack of space; not ready (/readyz 503) until space is freed",
      );
      onFullChange(true);
      scheduleProbe();
    },
    failedBids,
    wrote,
    async placing(count, work) {
      try {
        const placed = await work();
        wrote();
        return placed;
      } catch (error) {
        if (error instanceof StorageFullError) failedBids(count);
        throw error;
      }
    },
    get full() {
      return full;
    },
    close() {
      closed = true;
      clearTimeout(logTimer);
      clearTimeout(probeTimer);
    },
  };
}
