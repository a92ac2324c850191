/**
 * What keeps sign-in attempts from guessing the password or stalling the process
 * (docs/design.md#11):
 *
 * - The failure log: at most 5 failures per client address (IPv6: per /64) in any 15 minutes. An
 *   attempt is counted before its password is checked and forgotten only if the password was
 *   right, so attempts sent at once cannot outrun the count. Only failures make entries, the
 *   least recently used address goes first past a fixed number, and an address is dropped once
 *   its failures have all left the window: the memory it holds has a bound whatever the addresses.
 * - The check slots: scrypt runs on libuv's thread pool (4 threads), which file reads need too;
 *   at most 2 checks at once (1 on 2 cores) leave the rest to the pages, and an attempt beyond
 *   them is refused at once, never queued.
 */
import { availableParallelism } from "node:os";
import { LRUCache } from "lru-cache";

export const MAX_FAILURES = 5;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** 6.6 MB of heap when full (measured: 10,000 IPv6 keys with 5 failures each). */
export const DEFAULT_MAX_TRACKED_ADDRESSES = 10_000;
/**
 * 2, or 1 on a machine of 2 cores: there two checks take both cores, and the main thread's pages
 * waited (bench:sign-in, many addresses: GET / p99 86 ms with 2, 31 ms with 1).
 */
const DEFAULT_MAX_CONCURRENT_CHECKS = Math.min(2, Math.max(1, availableParallelism() - 1));

type Reservation =
  | {
      ok: true;
      /** The password was right, or never checked: the attempt is no failure after all. */
      forget(): void;
    }
  | { ok: false; waitMs: number };

export interface FailureLog {
  /** Milliseconds until the address may try again, 0 when it may now. Records nothing. */
  waitMs(key: string): number;
  /** Counts an attempt as a failure now, unless the address has none left in the window. */
  reserve(key: string): Reservation;
  /** Addresses held (those whose failures have all lapsed are dropped first). */
  readonly size: number;
}

export interface FailureLogOptions {
  maxTrackedAddresses?: number;
  /** A monotonic clock in milliseconds: a wall clock stepped back would lengthen the window. */
  now?: () => number;
}

export function createFailureLog({
  maxTrackedAddresses = DEFAULT_MAX_TRACKED_ADDRESSES,
  now = () => performance.now(),
}: FailureLogOptions = {}): FailureLog {
  // The cache bounds the entries; the window is kept here, on the same clock as the times.
  const failures = new LRUCache<string, number[]>({ max: maxTrackedAddresses });

  /** The address's failures still in the window, oldest first; an address with none is dropped. */
  function recent(key: string): number[] {
    const since = now() - FAILURE_WINDOW_MS;
    const times = (failures.get(key) ?? []).filter((at) => at > since);
    if (times.length === 0) failures.delete(key);
    return times;
  }

  function waitFor(times: number[]): number {
    if (times.length < MAX_FAILURES) return 0;
    return (times[times.length - MAX_FAILURES] as number) + FAILURE_WINDOW_MS - now();
  }

  return {
    waitMs: (key) => waitFor(recent(key)),

    reserve(key) {
      const times = recent(key);
      const waitMs = waitFor(times);
      if (waitMs > 0) return { ok: false, waitMs };
      const at = now();
      times.push(at);
      failures.set(key, times);
      let forgotten = false;
      return {
        ok: true,
        forget() {
          if (forgotten) return;
          forgotten = true;
          const left = recent(key);
          const index = left.indexOf(at);
          if (index >= 0) left.splice(index, 1);
          if (left.length === 0) failures.delete(key);
          else failures.set(key, left);
        },
      };
    },

    get size() {
      // Read on a metrics scrape: drops the addresses whose failures have all lapsed first, by
      // peek, which leaves the order of use as it was.
      const since = now() - FAILURE_WINDOW_MS;
      for (const key of [...failures.keys()]) {
        if (!failures.peek(key)?.some((at) => at > since)) failures.delete(key);
      }
      return failures.size;
    },
  };
}

export interface CheckSlots {
  /** A slot for one password check, with the function that frees it; null when all are taken. */
  tryTake(): (() => void) | null;
  readonly inUse: number;
}

export function createCheckSlots(max = DEFAULT_MAX_CONCURRENT_CHECKS): CheckSlots {
  let inUse = 0;
  return {
    tryTake() {
      if (inUse >= max) return null;
      inUse += 1;
      let freed = false;
      return () => {
        if (freed) return;
        freed = true;
        inUse -= 1;
      };
    },
    get inUse() {
      return inUse;
    },
  };
}
