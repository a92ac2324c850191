/**
 * Per-key sliding-window limit: at most `limit` events in any `windowMs`. Holds one timestamp per
 * counted event, so memory is bounded by limit x active keys; sweep() forgets idle keys.
 */
export interface RateLimiter {
  /** Counts one event for the key and says whether it is within the limit; refused events are not counted. */
  take(key: string): boolean;
  sweep(): void;
  readonly size: number;
}

export function createRateLimiter(
  limit: number,
  windowMs: number,
  now: () => number = performance.now.bind(performance),
): RateLimiter {
  const recent = new Map<string, number[]>();

  function prune(times: number[], at: number) {
    let expired = 0;
    while (expired < times.length && (times[expired] as number) <= at - windowMs) expired += 1;
    if (expired > 0) times.splice(0, expired);
  }

  return {
    take(key) {
      const at = now();
      let times = recent.get(key);
      if (!times) {
        times = [];
        recent.set(key, times);
      }
      prune(times, at);
      if (times.length >= limit) return false;
      times.push(at);
      return true;
    },
    sweep() {
      const at = now();
      for (const [key, times] of recent) {
        prune(times, at);
        if (times.length === 0) recent.delete(key);
      }
    },
    get size() {
      return recent.size;
    },
  };
}
