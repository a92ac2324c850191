/**
 * The instance's budget of Solana RPC calls (docs/decisions/2026-11-28-the-rpc-is-a-budget.md): a
 * token bucket of PAYMENT_RPC_CALLS_PER_SECOND, one second deep, in which the watcher comes first
 * and transaction requests keep a floor.
 *
 * - The watcher asks how many lookups it may make this poll and makes no more (`grantWatcher`), so
 *   a thousand open requests cost the budget, not a call each per poll. The transactions it must
 *   fetch to credit a payment are spent whatever the level (`spendWatcher`), into a debt of at most
 *   one bucket, which the next polls' lookups repay.
 * - Transaction requests, which any web page may make a visitor send (CORS `*` by the spec), take
 *   a call while the bucket holds more than the watcher's reserve; else they are told when to ask
 *   again (503 with Retry-After). So a flood of them never delays a confirmation.
 * - The floor: while requests wait (one asked lately), a third of the rate is set aside for them,
 *   which the watcher cannot take. A watcher catching up after a long outage takes every whole
 *   call each poll, and the bucket never rose above its reserve: requests starved (all 503) for
 *   as long as it caught up. Set aside, they are answered at a third of the rate meanwhile.
 */
export interface RpcBudget {
  /** The watcher's lookups this poll: up to `wanted`, as many whole calls as the bucket holds now. */
  grantWatcher(wanted: number): number;
  /** Calls the watcher must make whatever the level (a listed payment's transaction). */
  spendWatcher(calls: number): void;
  /** Takes `calls` for a transaction request from its floor, or if the watcher's reserve stays whole; false otherwise. */
  tryRequest(calls: number): boolean;
  /** How long until `calls` for a transaction request would be taken (ms, at least 1). */
  requestRetryAfterMs(calls: number): number;
}

/** The part of the bucket transaction requests may never spend: the watcher's next poll. */
const WATCHER_RESERVE = 0.5;
/** The part of the rate set aside for transaction requests while they wait. */
export const REQUEST_FLOOR = 1 / 3;
/** Tenths of a call added up in floating point fall a hair short of a whole one. */
const ROUNDING = 1e-9;

export function createRpcBudget(callsPerSecond: number, now: () => number): RpcBudget {
  const capacity = Math.max(1, callsPerSecond);
  const reserve = capacity * WATCHER_RESERVE;
  const floorPerSecond = callsPerSecond * REQUEST_FLOOR;
  /**
   * Requests wait for as long as it takes the floor to set aside a call, twice over (2 s at 3
   * calls a second), from the last one that asked: a refused request's retry falls within it.
   */
  const waitingMs = Math.max(1_000, (2 * 1_000) / floorPerSecond);
  let level = capacity;
  /** Set aside for requests: never more than the floor's share of a bucket; level + floor ≤ capacity. */
  let floor = 0;
  let refilledAt = now();
  let requestsWaitUntil = Number.NEGATIVE_INFINITY;

  function refill() {
    const at = now();
    const waitedMs = Math.max(0, Math.min(at, requestsWaitUntil) - refilledAt);
    const setAside = Math.min(capacity * REQUEST_FLOOR - floor, (waitedMs / 1000) * floorPerSecond);
    floor += Math.max(0, setAside);
    level = Math.min(capacity - floor, level + ((at - refilledAt) / 1000) * callsPerSecond - Math.max(0, setAside));
    refilledAt = at;
  }

  function requestAsked() {
    refill();
    requestsWaitUntil = Math.max(requestsWaitUntil, refilledAt + waitingMs);
  }

  return {
    grantWatcher(wanted) {
      refill();
      const granted = Math.max(0, Math.min(wanted, Math.floor(level + ROUNDING)));
      level -= granted;
      return granted;
    },
    spendWatcher(calls) {
      refill();
      level = Math.max(-capacity, level - calls);
    },
    tryRequest(calls) {
      requestAsked();
      if (floor + ROUNDING >= calls) {
        floor = Math.max(0, floor - calls);
        return true;
      }
      if (level - calls + ROUNDING < reserve) return false;
      level -= calls;
      return true;
    },
    requestRetryAfterMs(calls) {
      requestAsked();
      const fromFloorMs = ((calls - floor) / floorPerSecond) * 1000;
      const fromLevelMs = ((reserve + calls - level) / (callsPerSecond - floorPerSecond)) * 1000;
      return Math.max(1, Math.ceil(Math.min(fromFloorMs, fromLevelMs) - ROUNDING));
    },
  };
}
