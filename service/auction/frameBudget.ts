/**
 * How many frames one socket may send (docs/design.md#11): every frame counts, answered or
 * refused, bid or ping, since each costs the instance a parse and an answer whatever its verdict
 * (one socket once sent 100,000 refused bids, all answered in 2.7 s, /healthz slowed to 1.5 s
 * meanwhile). A token bucket: `capacity` frames at once, refilled at `capacity` per `windowMs`, one
 * number per socket whatever the rate.
 */
export interface FrameBudget {
  /** Counts one frame; false once the socket is over its budget. */
  take(): boolean;
}

export function createFrameBudget(capacity: number, windowMs: number, now: () => number): FrameBudget {
  const perMs = capacity / windowMs;
  let tokens = capacity;
  let filledAt = now();
  return {
    take() {
      const at = now();
      tokens = Math.min(capacity, tokens + Math.max(0, at - filledAt) * perMs);
      filledAt = at;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}
