import type { Timers } from "../timers.ts";

/**
 * Requests sent on the auction connection that wait for the service's answer, by request id. Each
 * settles once: with the answer, with `timedOut` after `timeoutMs`, or with the connection's loss.
 * An answer to a request no longer waiting (settled, or from an earlier page) is ignored.
 */
export function createPendingAnswers<Outcome>(timers: Timers, timeoutMs: number, timedOut: Outcome) {
  const pending = new Map<string, { settle: (outcome: Outcome) => void; timer: unknown }>();

  function settle(requestId: string, outcome: Outcome) {
    const waiting = pending.get(requestId);
    if (!waiting) return;
    pending.delete(requestId);
    timers.clearTimeout(waiting.timer);
    waiting.settle(outcome);
  }

  return {
    has: (requestId: string) => pending.has(requestId),
    settle,
    /** Settles every request still waiting (the connection that would carry their answers is gone). */
    settleAll(outcome: Outcome) {
      for (const requestId of [...pending.keys()]) settle(requestId, outcome);
    },
    /** The answer to a request just sent. */
    wait(requestId: string): Promise<Outcome> {
      return new Promise((resolve) => {
        const timer = timers.setTimeout(() => settle(requestId, timedOut), timeoutMs);
        pending.set(requestId, { settle: resolve, timer });
      });
    },
  };
}
