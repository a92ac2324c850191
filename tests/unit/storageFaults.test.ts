/**
 * Storage faults told apart (service/storage/storageFaults.ts), and the full-disk watch on fake
 * timers: not ready at the first write refused for lack of space, one line with a count per
 * interval however many bids fail, and ready again by its probe or the next write that succeeds.
 */
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../service/logger.ts";
import { createMetrics } from "../../service/metrics.ts";
import {
  createSpaceWatch,
  isEngineAbort,
  isEngineAbortLine,
  SPACE_LOG_INTERVAL_MS,
  SPACE_PROBE_INTERVAL_MS,
  storageFaultOf,
} from "../../service/storage/storageFaults.ts";

function collectingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger("debug", sink), lines };
}

const ENOSPC_PGLITE = Object.assign(new Error('could not extend file "base/5/16396": No space left on device'), {
  code: "53100",
  severity: "ERROR",
});

describe("storage faults told apart", () => {
  it("a full disk as PostgreSQL, PGlite and Node say it", () => {
    expect(storageFaultOf(Object.assign(new Error("could not extend file"), { code: "53100" }))).toBe("disk_full");
    expect(storageFaultOf(ENOSPC_PGLITE)).toBe("disk_full");
    expect(storageFaultOf(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }))).toBe(
      "disk_full",
    );
    expect(storageFaultOf(new Error('could not extend file "base/5/2619_fsm"'))).toBe("disk_full");
  });

  it("an engine that aborted, before the disk that made it", () => {
    const panic = Object.assign(
      new Error('could not write to log file "000000010000000000000001": No space left on device'),
      {
        code: "53100",
        severity: "PANIC",
      },
    );
    expect(storageFaultOf(panic)).toBe("panic");
    expect(isEngineAbort(new WebAssembly.RuntimeError("unreachable"))).toBe(true);
    expect(isEngineAbort(new Error("XLogBeginInsert was already called"))).toBe(true);
    expect(isEngineAbortLine("Aborted()")).toBe(true);
    expect(isEngineAbortLine("2026-11-27 08:22:59.940 UTC [42] PANIC:  could not write to log file")).toBe(true);
    expect(isEngineAbortLine("2026-11-27 08:22:59.940 UTC [42] ERROR:  could not extend file")).toBe(false);
  });

  it("anything else is no storage fault", () => {
    expect(storageFaultOf(Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" }))).toBeNull();
    expect(storageFaultOf(Object.assign(new Error("canceling statement"), { code: "57014" }))).toBeNull();
    expect(storageFaultOf(Object.assign(new Error("I/O error"), { code: "58030" }))).toBe("io_error");
    expect(storageFaultOf(null)).toBeNull();
  });

  it("the metric shows every kind from zero", async () => {
    const text = await createMetrics().registry.metrics();
    for (const kind of ["disk_full", "io_error", "panic"]) {
      expect(text).toContain(`storage_write_failures_total{kind="${kind}"} 0`);
    }
  });
});

describe("the full-disk watch", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function watch(probe: () => Promise<void>) {
    const { logger, lines } = collectingLogger();
    const changes: boolean[] = [];
    const space = createSpaceWatch({ logger, probe, onFullChange: (full) => changes.push(full) });
    return { space, lines, changes };
  }

  it("is full at the first refused write, and counts a burst of failed bids in one line per interval", async () => {
    const { space, lines, changes } = watch(() => Promise.reject(new Error("still full")));
    space.ranOut(ENOSPC_PGLITE);
    for (let bid = 0; bid < 10_000; bid++) {
      space.ranOut(ENOSPC_PGLITE);
      space.failedBids(1);
    }
    expect(space.full).toBe(true);
    expect(changes).toEqual([true]);
    expect(lines.map((line) => line.msg)).toEqual([
      "storage is full: a write failed for lack of space; not ready (/readyz 503) until space is freed",
    ]);
    await vi.advanceTimersByTimeAsync(SPACE_LOG_INTERVAL_MS);
    expect(lines.slice(1)).toMatchObject([{ failedBids: 10_000, msg: "10000 bids failed for lack of space" }]);
    // A quiet interval says nothing; the next burst, one line again.
    await vi.advanceTimersByTimeAsync(SPACE_LOG_INTERVAL_MS);
    expect(lines).toHaveLength(2);
    space.failedBids(3);
    await vi.advanceTimersByTimeAsync(SPACE_LOG_INTERVAL_MS * 2);
    expect(lines.slice(2)).toMatchObject([{ failedBids: 3 }]);
    space.close();
  });

  it("is ready again when its probe finds space, with no bid arriving", async () => {
    let free = false;
    const probe = vi.fn(() => (free ? Promise.resolve() : Promise.reject(new Error("still full"))));
    const { space, lines, changes } = watch(probe);
    space.ranOut(ENOSPC_PGLITE);
    await vi.advanceTimersByTimeAsync(SPACE_PROBE_INTERVAL_MS * 5);
    expect(probe).toHaveBeenCalledTimes(5);
    expect(space.full).toBe(true);
    free = true;
    await vi.advanceTimersByTimeAsync(SPACE_PROBE_INTERVAL_MS);
    expect(space.full).toBe(false);
    expect(changes).toEqual([true, false]);
    expect(lines.at(-1)?.msg).toBe("storage has space again (a write probe succeeded): ready for bids");
    // No probing once there is space.
    await vi.advanceTimersByTimeAsync(SPACE_PROBE_INTERVAL_MS * 5);
    expect(probe).toHaveBeenCalledTimes(6);
    space.close();
  });

  it("is ready again at the next write that succeeds", () => {
    const { space, changes } = watch(() => Promise.reject(new Error("still full")));
    space.ranOut(ENOSPC_PGLITE);
    space.wrote();
    expect(space.full).toBe(false);
    expect(changes).toEqual([true, false]);
    space.close();
  });
});
