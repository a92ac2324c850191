/**
 * Refused socket upgrades, logged once per key (an origin, a path and origin) per minute. A
 * misconfigured deployment (a PUBLIC_REALTIME_URL off /realtime, pages on an origin not in
 * ALLOWED_ORIGINS) refuses every visitor's every reconnect; one line a minute says so without
 * flooding the log, and a flood of made-up origins or paths costs at most `maxKeys` entries.
 */
import { LRUCache } from "lru-cache";

export const REFUSAL_LOG_INTERVAL_MS = 60_000;
/** Keys remembered; the least recently refused is forgotten first (and logged again when it returns). */
export const MAX_REMEMBERED_REFUSALS = 1_000;
/** Origins and paths are the client's to choose: kept and logged cut to this length. */
export const MAX_LOGGED_CHARS = 200;

export interface RefusalLog {
  /**
   * One refusal of `key`: calls `log` with the refusals of that key left unlogged since its
   * previous line, unless that line is less than the interval old.
   */
  note(key: string, log: (unlogged: number) => void): void;
  /** Keys remembered now (bounded by maxKeys). */
  readonly size: number;
}

export function createRefusalLog({
  now,
  intervalMs = REFUSAL_LOG_INTERVAL_MS,
  maxKeys = MAX_REMEMBERED_REFUSALS,
}: {
  /** Milliseconds on a clock that only moves forward (the socket server's). */
  now: () => number;
  intervalMs?: number;
  maxKeys?: number;
}): RefusalLog {
  const logged = new LRUCache<string, { at: number; unlogged: number }>({ max: maxKeys });
  return {
    note(key, log) {
      const at = now();
      const previous = logged.get(key);
      if (previous && at - previous.at < intervalMs) {
        previous.unlogged += 1;
        return;
      }
      logged.set(key, { at, unlogged: 0 });
      log(previous?.unlogged ?? 0);
    },
    get size() {
      return logged.size;
    },
  };
}
