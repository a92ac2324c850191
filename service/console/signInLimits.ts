/**
 * What keeps sign-in attempts from guessing the password or stalling the process
 * (docs/design.md#9, docs/design.md#11):
 *
 * - The failures, in the database so that every instance counts them together (storage/admin.ts,
 *   admin_reserve_sign_in), in the nested groups of the fair shares (http/fairShares.ts,
 *   docs/decisions/2026-11-28-fair-sign-in-turns.md): in any 15 minutes at most 5 per client
 *   address (IPv6: per /64), 10 per IPv6 /56 and 20 per IPv6 /48 or IPv4 /24, so that a
 *   subscriber's 65,536 /64s are 20 guesses, not 327,680. Once the console has 20 in 15 minutes,
 *   each network counting 5 of its own at most (one network alone cannot), every further attempt
 *   is held back before its check: 1 s, doubling with every failure to at most 60 s, one attempt at
 *   a time. An attempt is reserved (counted) before its password is checked, atomically, and
 *   forgotten only if the password was right or never checked, so attempts sent at once cannot
 *   outrun the counts.
 * - The refusals this instance heard from the database, remembered until the Retry-After it gave:
 *   an address, a network or a console that is refused is refused again without a query. Only
 *   refusals are remembered, never a permission, so no instance can let through what the database
 *   would refuse.
 * - The devices (device.ts): an attempt carrying a device cookie that holds is limited by that
 *   device's own failures alone, never by its address's or the console's, so that strangers, who
 *   have no such cookie, cannot keep the operator out (OWASP's "device cookies",
 *   docs/decisions/2026-11-27-device-cookies-for-sign-in.md). After 5 of them in any 15 minutes
 *   the cookie is ignored: the attempt is a stranger's, under the limits above (never refused for
 *   the device), so a stolen cookie gives no more than 5 guesses past them and a device that
 *   failed is never worse off than a stranger.
 * - The check slots: scrypt runs on libuv's thread pool (4 threads), which file reads need too;
 *   at most 2 checks at once (1 on 2 cores) leave the rest to the pages. When they are all taken,
 *   an attempt from a network (IPv6 /48, IPv4 /24) with no check in flight waits for the next free
 *   one (up to 10 s, 4 at most), ahead of every network already checking; any other is refused at
 *   once.
 *   So one network cannot hold the slots against everyone else, and no more checks run than before.
 *   One more slot is kept for devices: strangers filling the others cannot make the operator's
 *   check wait, and devices are few and each limited. Per process by nature.
 */
import { availableParallelism } from "node:os";
import { LRUCache } from "lru-cache";
import type { DevicePolicy, SignInPolicy } from "../storage/admin.ts";

export const MAX_FAILURES = 5;
/** A household's line (256 /64s): two clients' worth. */
export const SUBNET_FAILURES = 10;
/** A subscriber's /48 or a small network's /24: four clients' worth, as many as the console's. */
export const NETWORK_FAILURES = 20;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failures from any addresses in the window before every attempt is held back. */
export const CONSOLE_FAILURES_BEFORE_DELAY = 20;
/** What one network counts toward them, at most: one client's worth, so it takes four networks. */
const CONSOLE_SHARE_OF_A_NETWORK = MAX_FAILURES;
const FIRST_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 60_000;

export const SIGN_IN_POLICY: SignInPolicy = {
  windowMs: FAILURE_WINDOW_MS,
  maxFailures: MAX_FAILURES,
  subnetFailures: SUBNET_FAILURES,
  networkFailures: NETWORK_FAILURES,
  consoleFailures: CONSOLE_FAILURES_BEFORE_DELAY,
  consoleShare: CONSOLE_SHARE_OF_A_NETWORK,
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
/** Attempts waiting for a slot at once, each from a network of its own; beyond them, refused. */
const MAX_WAITING_FOR_A_SLOT = 4;
/**
 * A check takes a quarter of a second on a quiet machine, seconds on a busy one: a waiter has the
 * next slot to free, and this bound only ends a wait behind checks that never end.
 */
const WAIT_FOR_A_SLOT_MS = 10_000;

export interface CheckSlotOptions {
  /** Checks at once, beyond the devices' slot. */
  max?: number;
  /** Slots kept for devices. */
  forDevices?: number;
  maxWaiting?: number;
  maxWaitMs?: number;
}

export interface CheckSlots {
  /**
   * A slot for one password check now, with the function that frees it; null when all are taken.
   * `device`: the attempt carries a device cookie that holds, and may take the slot kept for devices.
   */
  tryTake(device?: boolean): (() => void) | null;
  /**
   * A slot for a stranger's check from `network` (an IPv6 /48 or IPv4 /24, or the client's key when
   * it has none): a free one at once; when all are taken, the next to free, within maxWaitMs and
   * ahead of every network already checking, if `network` has no check in flight or waiting and
   * fewer than maxWaiting attempts wait. Null when refused, timed out, or `signal` aborted.
   */
  take(network: string, signal?: AbortSignal): Promise<(() => void) | null>;
  readonly inUse: number;
}

export function createCheckSlots({
  max = DEFAULT_MAX_CONCURRENT_CHECKS,
  forDevices = DEVICE_CHECKS,
  maxWaiting = MAX_WAITING_FOR_A_SLOT,
  maxWaitMs = WAIT_FOR_A_SLOT_MS,
}: CheckSlotOptions = {}): CheckSlots {
  let shared = 0;
  let kept = 0;
  /** Shared slots each network holds. */
  const checking = new Map<string, number>();
  const waiting: { network: string; hand: (free: () => void) => void }[] = [];
  const once = (free: () => void) => {
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      free();
    };
  };
  const holdShared = (network: string | null): (() => void) => {
    shared += 1;
    if (network !== null) checking.set(network, (checking.get(network) ?? 0) + 1);
    return once(() => {
      shared -= 1;
      if (network !== null) {
        const left = (checking.get(network) ?? 1) - 1;
        if (left === 0) checking.delete(network);
        else checking.set(network, left);
      }
      // Handed over at once: no attempt arriving meanwhile can take it first.
      const next = waiting.shift();
      if (next) next.hand(holdShared(next.network));
    });
  };
  return {
    tryTake(device = false) {
      if (device && kept < forDevices) {
        kept += 1;
        return once(() => {
          kept -= 1;
        });
      }
      return shared < max ? holdShared(null) : null;
    },
    take(network, signal) {
      if (shared < max) return Promise.resolve(holdShared(network));
      const busyAlready = checking.has(network) || waiting.some((waiter) => waiter.network === network);
      if (busyAlready || waiting.length >= maxWaiting || signal?.aborted) return Promise.resolve(null);
      return new Promise((resolve) => {
        const settle = (free: (() => void) | null) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", giveUp);
          resolve(free);
        };
        const waiter = { network, hand: settle };
        const giveUp = () => {
          const index = waiting.indexOf(waiter);
          if (index >= 0) waiting.splice(index, 1);
          settle(null);
        };
        const timer = setTimeout(giveUp, maxWaitMs);
        signal?.addEventListener("abort", giveUp, { once: true });
        waiting.push(waiter);
      });
    },
    get inUse() {
      return shared + kept;
    },
  };
}
