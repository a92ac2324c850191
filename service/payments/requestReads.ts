/**
 * What transaction requests read from the chain, shared (docs/decisions/2026-11-28-the-rpc-is-a-budget.md):
 * one blockhash per few seconds for every request, and each account read at most once per
 * interval, the reads of requests arriving together joined into one getMultipleAccounts. Every
 * call is taken from the RPC budget; when the budget refuses, the caller is told when to ask again
 * (RpcBudgetSpent), and nothing is called. A network (an IPv6 /48, an IPv4 /24) asking for
 * accounts nobody read lately may join at most its share of the budget's calls
 * (NETWORK_SHARE_PERCENT), so one subscriber's wallets cannot spend everyone's share.
 */
import type { Address } from "@solana/kit";
import { LRUCache } from "lru-cache";
import type { Timers } from "../../src/lib/timers.ts";
import type { BlockhashLifetime, ChainClient } from "./chain.ts";
import type { RpcBudget } from "./rpcBudget.ts";

/** A blockhash lands for ~60-90 s (150 blocks): one is shared this long by every transaction request. */
export const BLOCKHASH_SHARE_MS = 5_000;
/** With the budget spent, a shared blockhash this young still serves rather than a refusal. */
const BLOCKHASH_STALE_OK_MS = 20_000;
/** An account's state (a buyer's balance, the store's token account) is read again after this. */
export const ACCOUNT_READ_MS = 5_000;
/** Reads asked within this window go in one call. */
export const READ_BATCH_WINDOW_MS = 20;
/** Networks whose share is remembered; past it the least recently used starts afresh. */
const MAX_REMEMBERED_NETWORKS = 10_000;
/** getMultipleAccounts' largest request. */
const MAX_ACCOUNTS_PER_CALL = 100;
const MAX_REMEMBERED_ACCOUNTS = 10_000;

export type AccountState = { owner: Address; data: Uint8Array } | null;

/** The budget could not spare the call: ask again in `retryAfterMs`. */
export class RpcBudgetSpent extends Error {
  override name = "RpcBudgetSpent";
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super(`the RPC budget is spent for transaction requests: retry in ${retryAfterMs} ms`);
    this.retryAfterMs = retryAfterMs;
  }
}

export interface RequestReads {
  latestBlockhash(): Promise<BlockhashLifetime>;
  /**
   * Each account's state, in the order asked; read at most once per ACCOUNT_READ_MS. `network`
   * (fairShares.ts's widest group of the client) is charged when its ask needs a new read.
   */
  accounts(addresses: readonly Address[], network?: string): Promise<AccountState[]>;
}

export interface RequestReadsOptions {
  chain: ChainClient;
  budget: RpcBudget;
  timers: Timers;
  now: () => number;
  /** The share of the budget's calls one network may cause, in percent (NETWORK_SHARE_PERCENT). */
  networkSharePercent?: number;
  /** The budget's rate (PAYMENT_RPC_CALLS_PER_SECOND), which the networks' shares are of. */
  callsPerSecond?: number;
}

export function createRequestReads(options: RequestReadsOptions): RequestReads {
  const { chain, budget, timers, now } = options;
  const networkRate = ((options.callsPerSecond ?? 1) * (options.networkSharePercent ?? 100)) / 100;
  /** Each network's bucket of reads: a second of its share deep, at least one read. */
  const networkDepth = Math.max(1, networkRate);
  const networks = new LRUCache<string, { level: number; at: number }>({ max: MAX_REMEMBERED_NETWORKS });
  let blockhash: { value: BlockhashLifetime; readAt: number } | null = null;
  let blockhashRead: Promise<BlockhashLifetime> | null = null;
  const accountStates = new LRUCache<Address, { value: AccountState; readAt: number }>({
    max: MAX_REMEMBERED_ACCOUNTS,
  });
  /** Asked and not yet answered (queued or in a call): later askers join. */
  const pending = new Map<Address, PromiseWithResolvers<AccountState>>();
  let queue: Address[] = [];
  let batchTimer: unknown = null;

  function latestBlockhash(): Promise<BlockhashLifetime> {
    const age = blockhash ? now() - blockhash.readAt : Number.POSITIVE_INFINITY;
    if (blockhash && age < BLOCKHASH_SHARE_MS) return Promise.resolve(blockhash.value);
    if (blockhashRead) return blockhashRead;
    if (!budget.tryRequest(1)) {
      if (blockhash && age < BLOCKHASH_STALE_OK_MS) return Promise.resolve(blockhash.value);
      return Promise.reject(new RpcBudgetSpent(budget.requestRetryAfterMs(1)));
    }
    const read = chain.latestBlockhash().then((value) => {
      blockhash = { value, readAt: now() };
      return value;
    });
    blockhashRead = read;
    const forget = () => {
      blockhashRead = null;
    };
    read.then(forget, forget);
    return read;
  }

  function flush() {
    timers.clearTimeout(batchTimer);
    batchTimer = null;
    chargedForBatch.clear();
    const batch = queue.slice(0, MAX_ACCOUNTS_PER_CALL);
    queue = queue.slice(MAX_ACCOUNTS_PER_CALL);
    if (queue.length > 0) batchTimer = timers.setTimeout(flush, READ_BATCH_WINDOW_MS);
    const settle = (each: (waiter: PromiseWithResolvers<AccountState>, index: number) => void) => {
      for (const [index, address] of batch.entries()) {
        const waiter = pending.get(address);
        pending.delete(address);
        if (waiter) each(waiter, index);
      }
    };
    if (!budget.tryRequest(1)) {
      const spent = new RpcBudgetSpent(budget.requestRetryAfterMs(1));
      settle((waiter) => waiter.reject(spent));
      return;
    }
    chain.accounts(batch).then(
      (states) => {
        const readAt = now();
        for (const [index, address] of batch.entries()) {
          accountStates.set(address, { value: states[index] ?? null, readAt });
        }
        settle((waiter, index) => waiter.resolve(states[index] ?? null));
      },
      (error: unknown) => settle((waiter) => waiter.reject(error)),
    );
  }

  /** The networks charged for the call being gathered: a call costs each network once. */
  const chargedForBatch = new Set<string>();

  /** Takes one call from `network`'s share unless it joined this one already: 0, or the ms until it could. */
  function chargeNetwork(network: string): number {
    if (chargedForBatch.has(network)) return 0;
    const at = now();
    const held = networks.get(network) ?? { level: networkDepth, at };
    const level = Math.min(networkDepth, held.level + ((at - held.at) / 1000) * networkRate);
    if (level < 1) {
      networks.set(network, { level, at });
      return Math.max(1, Math.ceil(((1 - level) / networkRate) * 1000));
    }
    networks.set(network, { level: level - 1, at });
    chargedForBatch.add(network);
    return 0;
  }

  function account(address: Address, network: string | undefined): Promise<AccountState> {
    const known = accountStates.get(address);
    if (known && now() - known.readAt < ACCOUNT_READ_MS) return Promise.resolve(known.value);
    const asked = pending.get(address);
    if (asked) return asked.promise;
    const waitMs = network === undefined ? 0 : chargeNetwork(network);
    if (waitMs > 0) return Promise.reject(new RpcBudgetSpent(waitMs));
    const waiter = Promise.withResolvers<AccountState>();
    pending.set(address, waiter);
    queue.push(address);
    if (queue.length >= MAX_ACCOUNTS_PER_CALL) flush();
    else if (batchTimer === null) batchTimer = timers.setTimeout(flush, READ_BATCH_WINDOW_MS);
    return waiter.promise;
  }

  return {
    latestBlockhash,
    accounts: (addresses, network) => Promise.all(addresses.map((address) => account(address, network))),
  };
}
