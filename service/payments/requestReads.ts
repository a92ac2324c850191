/**
 * What transaction requests read from the chain, shared (docs/decisions/2026-11-28-the-rpc-is-a-budget.md):
 * one blockhash per few seconds for every request, and each account read at most once per
 * interval, the reads of requests arriving together joined into one getMultipleAccounts. Every
 * call is taken from the RPC budget; when the budget refuses, the caller is told when to ask again
 * (RpcBudgetSpent), and nothing is called.
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
  /** Each account's state, in the order asked; read at most once per ACCOUNT_READ_MS. */
  accounts(addresses: readonly Address[]): Promise<AccountState[]>;
}

export interface RequestReadsOptions {
  chain: ChainClient;
  budget: RpcBudget;
  timers: Timers;
  now: () => number;
}

export function createRequestReads({ chain, budget, timers, now }: RequestReadsOptions): RequestReads {
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

  function account(address: Address): Promise<AccountState> {
    const known = accountStates.get(address);
    if (known && now() - known.readAt < ACCOUNT_READ_MS) return Promise.resolve(known.value);
    const asked = pending.get(address);
    if (asked) return asked.promise;
    const waiter = Promise.withResolvers<AccountState>();
    pending.set(address, waiter);
    queue.push(address);
    if (queue.length >= MAX_ACCOUNTS_PER_CALL) flush();
    else if (batchTimer === null) batchTimer = timers.setTimeout(flush, READ_BATCH_WINDOW_MS);
    return waiter.promise;
  }

  return {
    latestBlockhash,
    accounts: (addresses) => Promise.all(addresses.map(account)),
  };
}
