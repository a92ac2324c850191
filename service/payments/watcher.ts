/**
 * The payment watcher (docs/deploying.md, "Payments"): one per deployment, the instance that holds
 * the store's watcher lease. It finds each payment by its request's reference, as Solana Pay's
 * findReference does: getSignaturesForAddress(reference) lists only the transactions that carry
 * that key, and nobody but the buyer knows it before paying, so no amount of spam on the store's
 * token account can hide or delay a payment. Each poll looks up the waiting requests, least
 * recently looked up first; each transaction listed under their references is fetched once, in
 * chain order, judged (verify.ts) and recorded in one commit, so a fault between two loses nothing and credits nothing
 * twice. A request expires only once a lookup that started after its end (and a grace) found
 * nothing. With no request waiting, the only call is a heartbeat a minute: a lookup of a request
 * that ended unpaid, for a payment seen late.
 *
 * Many waiting requests are watched in one call (docs/decisions/2026-11-28-the-rpc-is-a-budget.md):
 * every payment lands on the store's token account, so each poll first reads the newest
 * transaction there (one call of one signature). While it is the one the last poll saw, a request
 * looked up since the account last changed cannot have been paid, and is looked up again only
 * every QUIET_LOOKUP_MS (an index may list a transaction late), to settle what its last lookup
 * left, or to expire it. Lookups are taken from the RPC budget (rpcBudget.ts), which
 * bounds the calls whatever the number of requests; spam on the account only brings back the
 * lookups by reference, within the same budget.
 *
 * Slow is not down: a 429 makes the chain "limited" (the watcher waits as long as Retry-After
 * asks; purchases go on, confirmations come later); only failing to reach it (refused, timeouts,
 * 5xx) for `unreachableAfterMs` makes it "unreachable", which stops purchases until it answers.
 */
import type { Address, Signature } from "@solana/kit";
import type { Timers } from "../../src/lib/timers.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { endRepeated, logRepeated } from "../repeatedWarnings.ts";
import type { LookupTarget, PaymentStore, RecordOutcome, RpcState, WatcherLease } from "../storage/payments.ts";
import { type ChainClient, RpcFault, type SignatureInfo } from "./chain.ts";
import type { RpcBudget } from "./rpcBudget.ts";
import { verifyTransaction, type WatchedTokenAccount } from "./verify.ts";

/** getSignaturesForAddress's largest page. */
const SIGNATURE_PAGE_LIMIT = 1000;
/** A reference listing more pages than this (only possible once it is public) is read again next poll, never expired. */
const MAX_PAGES_PER_LOOKUP = 5;
/** Requests looked up in one poll: with more waiting, each is looked up every few polls. */
export const LOOKUPS_PER_POLL = 50;
/** While the store's token account lists nothing new, a request is still looked up this often. */
export const QUIET_LOOKUP_MS = 60_000;
/** With no request waiting, the watcher calls the chain at most this often. */
export const HEARTBEAT_MS = 60_000;
/** The heartbeat looks for late payments to requests that ended this recently. */
const LATE_PAYMENT_WINDOW_MS = 24 * 60 * 60_000;
/** How often an instance without the lease tries to take it. */
const LEASE_RETRY_MS = 1_000;
/** Longest pause between two tries after failures (a Retry-After may ask for more, up to MAX_RETRY_AFTER_MS). */
export const MAX_BACKOFF_MS = 60_000;
const MAX_RETRY_AFTER_MS = 10 * 60_000;
/**
 * A request expires once a lookup that started this long after its end found nothing: a
 * transaction's block time may trail the wall clock, and the RPC's index may trail the chain.
 */
export const EXPIRY_GRACE_MS = 60_000;
/** A listed transaction that getTransaction keeps answering null for is given up after this many lookups (logged as an error). */
const MAX_MISSING_LOOKUPS = 30;
/** A transaction whose answer cannot be judged is tried this many times, then set aside for the operator. */
export const MAX_JUDGE_TRIES = 3;
/** How often the watcher deletes the requests that ended unpaid longer ago than the retention, and how many at most. */
export const FORGET_EVERY_MS = 60 * 60_000;
const FORGET_AT_ONCE = 1_000;

export interface PaymentWatcherOptions {
  store: PaymentStore;
  chain: ChainClient;
  /** The instance's RPC budget: the watcher's lookups are taken from it first. */
  budget: RpcBudget;
  account: WatchedTokenAccount;
  pollMs: number;
  /** Failing to reach the chain this long makes it "unreachable": purchases stop until it answers. */
  unreachableAfterMs: number;
  /** Requests that ended unpaid are deleted this long after their end. */
  retentionMs: number;
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

type JudgedLogOutcome = RecordOutcome | { outcome: "failed" | "no_payment" | "set_aside" };

/** Every outcome payment_confirmations_total counts, each present from zero. */
const CONFIRMATION_OUTCOMES = [
  "confirmed",
  "underpaid",
  "late",
  "unknown_reference",
  "already_recorded",
  "not_open",
  "failed",
  "no_payment",
  "set_aside",
  "expired",
] as const satisfies readonly (JudgedLogOutcome["outcome"] | "expired")[];

/** The watcher's warnings that repeat while the database or the chain is out of reach (repeatedWarnings.ts). */
const LEASE_TRY_FAILED = "could not try for the payment watcher lease";
const RECORD_FAILED = "the payment watcher could not record: backing off";
const RPC_CALL_FAILED = "a Solana RPC call failed: backing off";

export function createPaymentWatcher(options: PaymentWatcherOptions): PaymentWatcher {
  const { store, chain, budget, account, pollMs, unreachableAfterMs, retentionMs, metrics, timers } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: "payments" });
  const tokenAccount = account.tokenAccount;
  let lease: WatcherLease | null = null;
  let stopped = false;
  let timer: unknown;
  let running: Promise<unknown> = Promise.resolve();
  let failures = 0;
  /** When the chain began failing in a way other than a rate limit; null while it answers. */
  let unreachableSince: number | null = null;
  /** What every instance was last told of the chain (read from the store when the lease is taken). */
  let publishedState: RpcState | null = null;
  let lastHeartbeat = Number.NEGATIVE_INFINITY;
  let lastForget = Number.NEGATIVE_INFINITY;
  /**
   * The newest signature listed on the store's token account, and when the listing that found it
   * started: a request looked up since then was looked up after the account last changed. Null
   * until the first listing of this lease.
   */
  let accountMark: { newest: Signature | null; since: number } | null = null;
  /** References whose last lookup left a transaction unsettled or unread: looked up every poll. */
  const unsettledReferences = new Set<string>();
  const missingLookups = new Map<string, number>();
  const judgeTries = new Map<string, number>();
  for (const outcome of CONFIRMATION_OUTCOMES) metrics.paymentOutcomes.inc({ outcome }, 0);

  function dropLease(reason: string) {
    if (!lease) return;
    lease = null;
    metrics.paymentWatcherActive.set(0);
    // Not ended by a new lease: a database that flaps still gives one line an interval.
    logRepeated(logger, "warn", { reason }, "payment watcher stopped: the lease is gone");
  }

  async function claim(): Promise<boolean> {
    const claimed = await store.claimWatcher(account);
    if (!claimed) return false;
    lease = claimed;
    failures = 0;
    unreachableSince = null;
    lastHeartbeat = Number.NEGATIVE_INFINITY;
    accountMark = null;
    unsettledReferences.clear();
    claimed.onLost((reason) => {
      if (lease === claimed) dropLease(reason);
    });
    publishedState = await store.rpcState(tokenAccount);
    metrics.paymentWatcherActive.set(1);
    logger.info({ tokenAccount }, "payment watcher started: this instance holds the lease");
    return true;
  }

  function logOutcome(signature: string, outcome: JudgedLogOutcome, reference: string) {
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
    } else if (outcome.outcome === "already_recorded" || outcome.outcome === "not_open") {
      logger.warn({ signature, reference, outcome: outcome.outcome }, "a transfer that credits nothing");
    } else {
      logger.debug(
        { signature, reference, outcome: outcome.outcome },
        "a transaction under a reference that pays nothing",
      );
    }
  }

  /** Every signature listed under `reference`, oldest first; `complete` false when it has more pages than a lookup reads. */
  async function listed(reference: string): Promise<{ infos: SignatureInfo[]; complete: boolean }> {
    const infos: SignatureInfo[] = [];
    let before: Signature | undefined;
    for (let page = 0; page < MAX_PAGES_PER_LOOKUP; page++) {
      // The first page was granted with the lookup; a public reference's further pages are owed.
      if (page > 0) budget.spendWatcher(1);
      const answer = await chain.signaturesFor(reference as Address, { before, limit: SIGNATURE_PAGE_LIMIT });
      infos.push(...answer);
      const last = answer.at(-1);
      if (!last || answer.length < SIGNATURE_PAGE_LIMIT) return { infos: infos.reverse(), complete: true };
      before = last.signature;
    }
    logger.warn({ reference, listed: infos.length }, "a reference lists more transactions than one lookup reads");
    return { infos: infos.reverse(), complete: false };
  }

  /**
   * Fetches, judges and records one transaction listed under `reference`. False when it could not
   * be settled this time (not served yet, or an answer not yet given up on): the request must not
   * expire behind it.
   */
  async function settle(held: WatcherLease, reference: string, info: SignatureInfo): Promise<boolean> {
    const at = () => new Date(now());
    const { signature } = info;
    if (info.err !== null) {
      // Failed on chain: nothing moved, and getTransaction would only say so again.
      await held.judged(signature, reference, "failed", null, at());
      logOutcome(signature, { outcome: "failed" }, reference);
      return true;
    }
    // Owed whatever the budget: a listed transaction may be a payment to credit.
    budget.spendWatcher(1);
    const transaction = await chain.transaction(signature);
    if (transaction === null) {
      // Listed but not served yet (another node behind the same endpoint): the next lookup asks again.
      const lookups = (missingLookups.get(signature) ?? 0) + 1;
      missingLookups.set(signature, lookups);
      if (lookups < MAX_MISSING_LOOKUPS) return false;
      logger.error({ signature, reference, lookups }, "getTransaction never found a listed transaction: given up");
      missingLookups.delete(signature);
      await held.judged(signature, reference, "set_aside", `getTransaction found nothing ${lookups} times`, at());
      metrics.paymentSetAside.inc();
      return true;
    }
    missingLookups.delete(signature);
    const verdict = verifyTransaction(transaction, account, now());
    if (verdict.kind === "unjudgeable") {
      const tries = (judgeTries.get(signature) ?? 0) + 1;
      judgeTries.set(signature, tries);
      if (tries < MAX_JUDGE_TRIES) {
        if (tries === 1)
          logger.warn({ signature, reference, detail: verdict.detail }, "a transaction that cannot be judged");
        return false;
      }
      judgeTries.delete(signature);
      await held.judged(signature, reference, "set_aside", verdict.detail, at());
      metrics.paymentSetAside.inc();
      logOutcome(signature, { outcome: "set_aside" }, reference);
      logger.error(
        { signature, reference, tries, detail: verdict.detail },
        "a transaction that cannot be judged is set aside: the console lists it",
      );
      return true;
    }
    judgeTries.delete(signature);
    if (verdict.kind !== "payment") {
      await held.judged(signature, reference, verdict.kind, null, at());
      logOutcome(signature, { outcome: verdict.kind }, reference);
      return true;
    }
    const outcome = await held.record(
      { signature, accountKeys: verdict.accountKeys, received: verdict.received, blockTime: verdict.blockTime },
      at(),
    );
    if (outcome.outcome === "unknown_reference" || outcome.outcome === "not_open") {
      // Pays the store but credits no request (paid twice, another mint's request): judged once.
      await held.judged(signature, reference, "no_payment", outcome.outcome, at());
    }
    logOutcome(signature, outcome, reference);
    return true;
  }

  /**
   * Looks `targets` up by their references, then settles every transaction listed under any of
   * them in chain order (a transfer carrying two references credits the older request, as it
   * would have had each been seen the moment it landed), and expires those that may expire and
   * listed nothing unsettled.
   */
  async function lookUp(held: WatcherLease, targets: readonly LookupTarget[], mayExpire: boolean): Promise<void> {
    const startedAt = now();
    const listings: { target: LookupTarget; infos: SignatureInfo[]; complete: boolean }[] = [];
    for (const target of targets) listings.push({ target, ...(await listed(target.reference)) });
    const found = new Map<string, { info: SignatureInfo; reference: string }>();
    for (const { target, infos } of listings) {
      for (const info of infos)
        if (!found.has(info.signature)) found.set(info.signature, { info, reference: target.reference });
    }
    // Stable: within a slot, the order the listings gave.
    const inChainOrder = [...found.values()].sort((a, b) =>
      a.info.slot < b.info.slot ? -1 : a.info.slot > b.info.slot ? 1 : 0,
    );
    const known = await held.known([...found.keys()]);
    const unsettled = new Set<string>();
    for (const { info, reference } of inChainOrder) {
      if (known.has(info.signature)) continue;
      if (!held.isHeld()) throw new LeaseLost();
      if (!(await settle(held, reference, info))) unsettled.add(info.signature);
    }
    for (const { target, infos, complete } of listings) {
      const settled = complete && infos.every((info) => !unsettled.has(info.signature));
      if (settled) unsettledReferences.delete(target.reference);
      else unsettledReferences.add(target.reference);
      const expireBefore =
        mayExpire && settled && startedAt - EXPIRY_GRACE_MS > target.expiresAt.getTime()
          ? new Date(startedAt - EXPIRY_GRACE_MS)
          : null;
      if (await held.lookedUp(target.reference, new Date(startedAt), expireBefore)) {
        metrics.paymentOutcomes.inc({ outcome: "expired" });
        logger.info({ reference: target.reference }, "payment expired");
      }
    }
  }

  /** Deletes the requests that ended unpaid before the retention: nobody paid them, nobody will look. */
  async function forgetUnpaid(held: WatcherLease): Promise<void> {
    if (now() - lastForget < FORGET_EVERY_MS) return;
    lastForget = now();
    const forgotten = await held.forgetUnpaid(new Date(now() - retentionMs), FORGET_AT_ONCE);
    // A full batch leaves more: the next poll goes on.
    if (forgotten === FORGET_AT_ONCE) lastForget = Number.NEGATIVE_INFINITY;
    if (forgotten > 0) logger.info({ forgotten, retentionMs }, "deleted requests that ended unpaid");
  }

  /**
   * Whether the newest transaction on the store's token account is the one the last poll saw (one
   * call, of one signature); false the first time.
   */
  async function accountUnchanged(): Promise<boolean> {
    const startedAt = now();
    const [newest] = await chain.signaturesFor(tokenAccount, { limit: 1 });
    const signature = newest?.signature ?? null;
    if (accountMark && accountMark.newest === signature) return true;
    accountMark = { newest: signature, since: startedAt };
    return false;
  }

  /** A lookup of `target` could find something new, or is owed (something unsettled, an expiry), or is due anyway. */
  function lookupWanted(target: LookupTarget, unchanged: boolean, at: number): boolean {
    const lookedUpAt = target.lookedUpAt?.getTime();
    if (!unchanged || lookedUpAt === undefined || !accountMark || lookedUpAt < accountMark.since) return true;
    if (unsettledReferences.has(target.reference)) return true;
    return at - lookedUpAt >= QUIET_LOOKUP_MS || at - EXPIRY_GRACE_MS > target.expiresAt.getTime();
  }

  async function poll(held: WatcherLease): Promise<void> {
    await forgetUnpaid(held);
    const due = await held.dueLookups(LOOKUPS_PER_POLL);
    if (due.length > 0) {
      if (budget.grantWatcher(1) === 0) return;
      const unchanged = await accountUnchanged();
      const at = now();
      const wanted = due.filter((target) => lookupWanted(target, unchanged, at));
      const granted = budget.grantWatcher(wanted.length);
      if (granted > 0) await lookUp(held, wanted.slice(0, granted), true);
      return;
    }
    if (now() - lastHeartbeat < HEARTBEAT_MS) return;
    if (budget.grantWatcher(1) === 0) return;
    lastHeartbeat = now();
    const ended = await held.endedUnpaid(new Date(now() - LATE_PAYMENT_WINDOW_MS));
    if (ended) await lookUp(held, [ended], false);
  }

  async function publish(held: WatcherLease, state: RpcState) {
    metrics.paymentRpcState.set({ state: "ok" }, state === "ok" ? 1 : 0);
    metrics.paymentRpcState.set({ state: "limited" }, state === "limited" ? 1 : 0);
    metrics.paymentRpcState.set({ state: "unreachable" }, state === "unreachable" ? 1 : 0);
    if (publishedState === state) return;
    await held.setRpcState(state, new Date(now()));
    const before = publishedState;
    publishedState = state;
    if (state === "ok") logger.info({ before }, "the Solana RPC answers in full again");
    else if (state === "limited")
      logger.warn("the Solana RPC rate limits the watcher: confirmations are slower, purchases go on");
    else
      logger.error(
        { failingForMs: unreachableAfterMs },
        "the Solana RPC is out of reach: purchases are unavailable until it answers",
      );
  }

  function backoff(fault: RpcFault | null): number {
    failures += 1;
    if (fault?.retryAfterMs !== null && fault?.retryAfterMs !== undefined) {
      return Math.min(MAX_RETRY_AFTER_MS, Math.max(fault.retryAfterMs, pollMs));
    }
    return Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 16));
  }

  async function step(): Promise<number> {
    if (stopped) return pollMs;
    const held = lease;
    if (!held) {
      try {
        const claimed = await claim();
        endRepeated(logger, LEASE_TRY_FAILED, "the payment watcher tries for its lease again");
        return claimed ? 0 : LEASE_RETRY_MS;
      } catch (error) {
        logRepeated(logger, "warn", { err: loggedError(error) }, LEASE_TRY_FAILED);
        return LEASE_RETRY_MS;
      }
    }
    try {
      await poll(held);
      endRepeated(logger, RECORD_FAILED, "the payment watcher records again");
      endRepeated(logger, RPC_CALL_FAILED, "the payment watcher's Solana RPC calls succeed again");
      failures = 0;
      unreachableSince = null;
      await publish(held, "ok");
      return pollMs;
    } catch (error) {
      if (error instanceof LeaseLost || !held.isHeld()) {
        dropLease("lost during a poll");
        return 0;
      }
      if (error instanceof RpcFault) {
        const delay = backoff(error);
        logRepeated(logger, "warn", { method: error.method, kind: error.kind, retryInMs: delay }, RPC_CALL_FAILED);
        if (error.kind === "rate_limited") {
          // A 429 is an answer: the chain is reachable, only slower.
          unreachableSince = null;
          await publish(held, "limited").catch(() => {});
        } else {
          unreachableSince ??= now();
          if (now() - unreachableSince >= unreachableAfterMs) await publish(held, "unreachable").catch(() => {});
        }
        return delay;
      }
      // The database: the lookups are repeated once it answers; what was recorded stays recorded.
      const delay = backoff(null);
      logRepeated(logger, "warn", { err: loggedError(error), retryInMs: delay }, RECORD_FAILED);
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
