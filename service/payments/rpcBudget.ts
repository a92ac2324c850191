/**
 * The instance's budget of Solana RPC calls (docs/decisions/2026-11-28-the-rpc-is-a-budget.md): a
 * token bucket of PAYMENT_RPC_CALLS_PER_SECOND, one second deep, in which the watcher comes first.
 *
 * - The watcher asks how many lookups it may make this poll and makes no more (`grantWatcher`), so
 *   a thousand open requests cost the budget, not a call each per poll. The transactions it must
 *   fetch to credit a payment are spent whatever the level (`spendWatcher`), into a debt of at most
 *   one bucket, which the next polls' lookups repay.
 * - Transaction requests, which any web page may make a visitor send (CORS `*` by the spec), take
 *   a call only while the bucket holds more than the watcher's reserve; else they are told when to
 *   ask again (503 with Retry-After). So a flood of them never delays a confirmation.
 */
export interface RpcBudget {
  /** The watcher's lookups this poll: up to `wanted`, as many whole calls as the bucket holds now. */
  grantWatcher(wanted: number): number;
  /** Calls the watcher must make whatever the level (a listed payment's transaction). */
  spendWatcher(calls: number): void;
  /** Takes `calls` for a transaction request if the watcher's reserve stays whole; false otherwise. */
  tryRequest(calls: number): boolean;
  /** How long until `calls` for a transaction request would be taken (ms, at least 1). */
  requestRetryAfterMs(calls: number): number;
}

/** The part of the bucket transaction requests may never spend: the watcher's next poll. */
const WATCHER_RESERVE = 0.5;

export function createRpcBudget(callsPerSecond: number, now: () => number): RpcBudget {
  const capacity = Math.max(1, callsPerSecond);
  const reserve = capacity * WATCHER_RESERVE;
  let level = capacity;
  let refilledAt = now();

  function refill() {
    const at = now();
    level = Math.min(capacity, level + ((at - refilledAt) / 1000) * callsPerSecond);
    refilledAt = at;
  }

  return {
    grantWatcher(wanted) {
      refill();
      const granted = Math.max(0, Math.min(wanted, Math.floor(level)));
      level -= granted;
      return granted;
    },
    spendWatcher(calls) {
      refill();
      level = Math.max(-capacity, level - calls);
    },
    tryRequest(calls) {
      refill();
      if (level - calls < reserve) return false;
      level -= calls;
      return true;
    },
    requestRetryAfterMs(calls) {
      refill();
      const missing = reserve + calls - level;
      return Math.max(1, Math.ceil((missing / callsPerSecond) * 1000));
    },
  };
}
