/**
 * What keeps sign-in attempts from guessing the password or stalling the process
 * (docs/design.md#9, docs/design.md#11):
 *
 * - The failures, in the database so that every instance counts them together (storage/admin.ts,
 *   admin_reserve_sign_in): at most 5 per client address (IPv6: per /64) in any 15 minutes, and,
 *   once the console has 20 in 15 minutes from any addresses, every further attempt held back
 *   before its check: 1 s, doubling with every failure to at most 60 s, one attempt at a time.
 *   An attempt is reserved (counted) before its password is checked, atomically, and forgotten
 *   only if the password was right or never checked, so attempts sent at once cannot outrun the
 *   counts.
 * - The refusals this instance heard from the database, remembered until the Retry-After it gave:
 *   an address or a console that is refused is refused again without a query. Only refusals are
 *   remembered, never a permission, so no instance can let through what the database would refuse.
 * - The devices (device.ts): an attempt carrying a device cookie that holds is limited by that
 *   device's own failures alone, never by its address's or the console's, so that strangers, who
 *   have no such cookie, cannot keep the operator out (OWASP's "device cookies",
 *   docs/decisions/2026-11-27-device-cookies-for-sign-in.md). After 5 of them in any 15 minutes
 *   the cookie is ignored: the attempt is a stranger's, under the limits above (never refused for
 *   the device), so a stolen cookie gives no more than 5 guesses past them and a device that
 *   failed is never worse off than a stranger.
 * - The check slots: scrypt runs on libuv's thread pool (4 threads), which file reads need too;
 *   at most 2 checks at once (1 on 2 cores) leave the rest to the pages, and an attempt beyond
 *   them is refused at once, never queued. One more slot is kept for devices: strangers filling the
 *   others cannot make the operator's check wait, and devices are few and each limited. Per
 *   process by nature.
 */
import { availableParallelism } from "node:os";
import { LRUCache } from "lru-cache";
import type { DevicePolicy, SignInPolicy } from "../storage/admin.ts";

export const MAX_FAILURES = 5;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failures from any addresses in the window before every attempt is held back. */
const CONSOLE_FAILURES_BEFORE_DELAY = 20;
const FIRST_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 60_000;

export const SIGN_IN_POLICY: SignInPolicy = {
  windowMs: FAILURE_WINDOW_MS,
  maxFailures: MAX_FAILURES,
  consoleFailures: CONSOLE_FAILURES_BEFORE_DELAY,
  firstDelayMs: FIRST_DELAY_MS,
  maxDelayMs: MAX_DELAY_MS,
};

/** A device is locked after as many failures of its own as an address, in the same window. */
export const DEVICE_POLICY: DevicePolicy = { windowMs: FAILURE_WINDOW_MS, maxFailures: MAX_FAILURES };

/** Keys whose refusal is remembered; past it the least recently used goes first. */
export const DEFAULT_MAX_REMEMBERED_KEYS = 10_000;
/**
 * 2, or 1 on a machine of 2 cores: there two checks take both cores, and the main thread's pages
 * waited (bench:sign-in, many addresses: GET / p99 86 ms with 2, 31 ms with 1).
 */
const DEFAULT_MAX_CONCURRENT_CHECKS = Math.min(2, Math.max(1, availableParallelism() - 1));

interface Refusal {
  /** limited: this key's failures; throttled: the console's. */
  reason: "limited" | "throttled";
  waitMs: number;
}

export interface RefusalMemo {
  /** The refusal still running for this key, or for the whole console; null when none is. */
  refusal(key: string): Refusal | null;
  /** A refusal the database gave, remembered for its waitMs. */
  remember(key: string, refusal: Refusal): void;
  /** This instance forgot a reservation of the key: the database may count one failure fewer. */
  forgetKey(key: string): void;
}

export interface RefusalMemoOptions {
  maxKeys?: number;
  /** A monotonic clock in milliseconds: a wall clock stepped back would lengthen a refusal. */
  now?: () => number;
}

export function createRefusalMemo({
  maxKeys = DEFAULT_MAX_REMEMBERED_KEYS,
  now = () => performance.now(),
}: RefusalMemoOptions = {}): RefusalMemo {
  const limitedUntil = new LRUCache<string, number>({ max: maxKeys });
  let throttledUntil = Number.NEGATIVE_INFINITY;

  return {
    refusal(key) {
      const at = now();
      const until = limitedUntil.get(key);
      if (until !== undefined && until > at) return { reason: "limited", waitMs: until - at };
      if (until !== undefined) limitedUntil.delete(key);
      return throttledUntil > at ? { reason: "throttled", waitMs: throttledUntil - at } : null;
    },
    remember(key, { reason, waitMs }) {
      const until = now() + waitMs;
      if (reason === "limited") limitedUntil.set(key, until);
      else throttledUntil = Math.max(throttledUntil, until);
    },
    forgetKey(key) {
      limitedUntil.delete(key);
    },
  };
}

/** Checks kept for attempts through a trusted device, beyond the others. */
const DEVICE_CHECKS = 1;

export interface CheckSlots {
  /**
   * A slot for one password check, with the function that frees it; null when all are taken.
   * `device`: the attempt carries a device cookie that holds, and may take the slot kept for devices.
   */
  tryTake(device?: boolean): (() => void) | null;
  readonly inUse: number;
}

export function createCheckSlots(max = DEFAULT_MAX_CONCURRENT_CHECKS, forDevices = DEVICE_CHECKS): CheckSlots {
  let shared = 0;
  let kept = 0;
  const taken = (free: () => void) => {
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      free();
    };
  };
  return {
    tryTake(device = false) {
      if (device && kept < forDevices) {
        kept += 1;
        return taken(() => {
          kept -= 1;
        });
      }
      if (shared >= max) return null;
      shared += 1;
      return taken(() => {
        shared -= 1;
      });
    },
    get inUse() {
      return shared + kept;
    },
  };
}
