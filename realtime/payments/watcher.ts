/**
 * The payment watcher (docs/design.md#8): one per deployment, the instance that holds the store's
 * watcher lease. Each poll reads the new signatures of the recipient's token account (one call
 * when there are none), fetches each new transaction once, judges it (verify.ts) and records its
 * outcome with the cursor moved past it in one commit, so a fault between two transactions loses
 * nothing and credits nothing twice. After a complete poll it expires the requests whose end is
 * behind it. Failed calls back off, exponentially up to a minute, or as long as a 429's
 * Retry-After asks; after RPC_UNHEALTHY_AFTER_MS of failures every instance is told the chain is
 * out of reach (purchases answer "Payments are unavailable right now.") until a call succeeds.
 */
import type { Signature } from "@solana/kit";
import type { Timers } from "../../src/lib/timers.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { PaymentStore, RecordOutcome, WatcherLease } from "../storage/payments.ts";
import { type ChainClient, RpcFault, type SignatureInfo } from "./chain.ts";
import { verifyTransaction, type WatchedTokenAccount } from "./verify.ts";

/** getSignaturesForAddress's largest page. */
const SIGNATURE_PAGE_LIMIT = 1000;
/** A backlog deeper than this many pages is read from its newest 50,000 (logged). */
const MAX_SIGNATURE_PAGES = 50;
/** How often an instance without the lease tries to take it. */
const LEASE_RETRY_MS = 1_000;
/** Longest pause between two tries after failures (a Retry-After may ask for more, up to MAX_RETRY_AFTER_MS). */
export const MAX_BACKOFF_MS = 60_000;
const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** Failing this long means the chain is out of reach: every instance stops taking payments. */
export const RPC_UNHEALTHY_AFTER_MS = 10_000;
/**
 * A request expires once a complete poll that started this long after its end found no payment:
 * a transaction's block time may trail the wall clock, and a payment made in time is confirmed
 * even when seen late.
 */
export const EXPIRY_GRACE_MS = 60_000;
/** On the first poll of a new token account, history older than the oldest open request less this is skipped. */
const FIRST_POLL_MARGIN_MS = 5 * 60_000;
/** A listed transaction that getTransaction keeps answering null for is skipped after this many polls (logged as an error). */
const MAX_MISSING_POLLS = 30;

export interface PaymentWatcherOptions {
  store: PaymentStore;
  chain: ChainClient;
  account: WatchedTokenAccount;
  pollMs: number;
  logger: Logger;
  metrics: Metrics;
  timers: Timers;
  now?: () => number;
}

export interface PaymentWatcher {
  /** Tries for the lease, then polls, until stopped. */
  start(): void;
  /** One step (a lease attempt or a poll) as start() runs them; resolves with the pause before the next. */
  step(): Promise<number>;
  /** True while this watcher holds the lease. */
  isActive(): boolean;
  stop(): Promise<void>;
}

class LeaseLost extends Error {
  override name = "LeaseLost";
}

export function createPaymentWatcher(options: PaymentWatcherOptions): PaymentWatcher {
  const { store, chain, account, pollMs, metrics, timers, now = Date.now } = options;
  const logger = options.logger.child({ component: "payments" });
  const tokenAccount = account.tokenAccount;
  let lease: WatcherLease | null = null;
  let leaseSince = 0;
  let stopped = false;
  let timer: unknown;
  let running: Promise<unknown> = Promise.resolve();
  let failures = 0;
  let failingSince: number | null = null;
  /** What every instance was last told of the chain (read from the store when the lease is taken). */
  let publishedRpcOk: boolean | null = null;
  const missingPolls = new Map<string, number>();

  function dropLease(reason: string) {
    if (!lease) return;
    lease = null;
    metrics.paymentWatcherActive.set(0);
    logger.warn({ reason }, "payment watcher stopped: the lease is gone");
  }

  async function claim(): Promise<boolean> {
    const claimed = await store.claimWatcher(account);
    if (!claimed) return false;
    lease = claimed;
    leaseSince = now();
    failures = 0;
    failingSince = null;
    claimed.onLost(() => {
      if (lease === claimed) dropLease("lost");
    });
    publishedRpcOk = await store.rpcOk(tokenAccount);
    metrics.paymentWatcherActive.set(1);
    logger.info({ tokenAccount }, "payment watcher started: this instance holds the lease");
    return true;
  }

  /** The signatures after the cursor, oldest first. */
  async function newSignatures(held: WatcherLease, cursor: string | null): Promise<SignatureInfo[]> {
    const listed: SignatureInfo[] = [];
    let before: Signature | undefined;
    // Only the first poll of a token account, with no cursor, looks back: as far as the oldest request still waiting.
    const since =
      cursor === null ? ((await held.earliestWaiting())?.getTime() ?? leaseSince) - FIRST_POLL_MARGIN_MS : null;
    const older = (info: SignatureInfo) =>
      since !== null && info.blockTime !== null && Number(info.blockTime) * 1000 < since;
    for (let page = 0; page < MAX_SIGNATURE_PAGES; page++) {
      const infos = await chain.signaturesFor(tokenAccount, {
        until: (cursor ?? undefined) as Signature | undefined,
        before,
        limit: SIGNATURE_PAGE_LIMIT,
      });
      listed.push(...infos);
      const last = infos.at(-1);
      if (!last || infos.length < SIGNATURE_PAGE_LIMIT || older(last)) break;
      before = last.signature;
      if (page === MAX_SIGNATURE_PAGES - 1) {
        logger.error(
          { tokenAccount, pages: MAX_SIGNATURE_PAGES },
          "payment backlog too deep: reading its newest pages only",
        );
      }
    }
    const fresh = listed.filter((info) => !older(info));
    const newest = listed[0];
    if (cursor === null && fresh.length === 0 && newest) {
      // Nothing to judge, but the history exists: later polls read from its newest signature on.
      await held.skip(newest.signature, new Date(now()));
    }
    return fresh.reverse();
  }

  function logOutcome(signature: string, outcome: RecordOutcome | { outcome: "failed" | "no_payment" }) {
    metrics.paymentOutcomes.inc({ outcome: outcome.outcome });
    if ("payment" in outcome) {
      const { payment } = outcome;
      logger.info(
        {
          reference: payment.reference,
          signature,
          outcome: outcome.outcome,
          tierId: payment.tierId,
          priceBaseUnits: payment.priceBaseUnits.toString(),
          receivedBaseUnits: payment.amountReceived?.toString(),
        },
        `payment ${outcome.outcome}`,
      );
    } else if (outcome.outcome === "unknown_reference") {
      logger.info({ signature }, "a transfer to the store with no known reference: ignored");
    } else if (outcome.outcome === "already_recorded" || outcome.outcome === "not_open") {
      logger.warn(
        { signature, reference: outcome.reference, outcome: outcome.outcome },
        "a transfer that credits nothing",
      );
    } else {
      logger.debug({ signature, outcome: outcome.outcome }, "a transaction of the token account that pays nothing");
    }
  }

  async function judge(held: WatcherLease, info: SignatureInfo): Promise<boolean> {
    const at = () => new Date(now());
    if (info.err !== null) {
      await held.skip(info.signature, at());
      logOutcome(info.signature, { outcome: "failed" });
      return true;
    }
    const transaction = await chain.transaction(info.signature);
    if (transaction === null) {
      // Listed but not served yet (another node behind the same endpoint): the next poll asks again.
      const polls = (missingPolls.get(info.signature) ?? 0) + 1;
      missingPolls.set(info.signature, polls);
      if (polls < MAX_MISSING_POLLS) return false;
      logger.error({ signature: info.signature, polls }, "getTransaction never found a listed transaction: skipped");
      missingPolls.delete(info.signature);
      await held.skip(info.signature, at());
      return true;
    }
    missingPolls.delete(info.signature);
    const verdict = verifyTransaction(transaction, account);
    if (verdict.kind !== "payment") {
      await held.skip(info.signature, at());
      logOutcome(info.signature, { outcome: verdict.kind });
      return true;
    }
    const outcome = await held.record(
      {
        signature: info.signature,
        accountKeys: verdict.accountKeys,
        received: verdict.received,
        blockTime: verdict.blockTime,
      },
      at(),
    );
    logOutcome(info.signature, outcome);
    return true;
  }

  async function poll(held: WatcherLease): Promise<void> {
    const startedAt = now();
    const fresh = await newSignatures(held, await held.cursor());
    for (const info of fresh) {
      if (!held.isHeld()) throw new LeaseLost();
      // Stops at a transaction the node does not have yet: the cursor must not pass it.
      if (!(await judge(held, info))) return;
    }
    const expired = await held.expire(new Date(startedAt - EXPIRY_GRACE_MS));
    for (const reference of expired) {
      metrics.paymentOutcomes.inc({ outcome: "expired" });
      logger.info({ reference }, "payment expired");
    }
  }

  async function publishRpcOk(held: WatcherLease, ok: boolean) {
    if (publishedRpcOk === ok) return;
    await held.setRpcOk(ok, new Date(now()));
    publishedRpcOk = ok;
    if (ok) logger.info("the Solana RPC answers again: payments are available");
    else
      logger.error(
        { failingForMs: RPC_UNHEALTHY_AFTER_MS },
        "the Solana RPC is out of reach: payments are unavailable",
      );
  }

  function backoff(fault: RpcFault | null): number {
    failures += 1;
    const exponential = Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 16));
    if (fault?.retryAfterMs !== null && fault?.retryAfterMs !== undefined) {
      return Math.min(MAX_RETRY_AFTER_MS, Math.max(fault.retryAfterMs, pollMs));
    }
    return exponential;
  }

  async function step(): Promise<number> {
    if (stopped) return pollMs;
    const held = lease;
    if (!held) {
      try {
        return (await claim()) ? 0 : LEASE_RETRY_MS;
      } catch (error) {
        logger.warn({ err: error }, "could not try for the payment watcher lease");
        return LEASE_RETRY_MS;
      }
    }
    try {
      await poll(held);
      failures = 0;
      failingSince = null;
      await publishRpcOk(held, true);
      return pollMs;
    } catch (error) {
      if (error instanceof LeaseLost || !held.isHeld()) {
        dropLease("lost during a poll");
        return 0;
      }
      if (error instanceof RpcFault) {
        failingSince ??= now();
        const delay = backoff(error);
        logger.warn(
          { method: error.method, kind: error.kind, retryInMs: delay },
          "a Solana RPC call failed: backing off",
        );
        if (now() - failingSince >= RPC_UNHEALTHY_AFTER_MS) await publishRpcOk(held, false).catch(() => {});
        return delay;
      }
      // The database: the poll is repeated whole once it answers, from the cursor it kept.
      const delay = backoff(null);
      logger.warn({ err: error, retryInMs: delay }, "the payment watcher could not record: backing off");
      return delay;
    }
  }

  function schedule(delay: number) {
    if (stopped) return;
    timer = timers.setTimeout(() => {
      running = step().then(schedule, (error: unknown) => {
        logger.error({ err: error }, "the payment watcher failed");
        schedule(pollMs);
      });
    }, delay);
  }

  return {
    start() {
      schedule(0);
    },
    step,
    isActive: () => lease !== null,
    async stop() {
      stopped = true;
      timers.clearTimeout(timer);
      await running.catch(() => {});
      const held = lease;
      lease = null;
      metrics.paymentWatcherActive.set(0);
      await held?.release();
    },
  };
}
