/**
 * What one transaction did for the store (docs/design.md#8), from getTransaction's `json` answer:
 * whether it succeeded, the base units the recipient's token account for the mint gained (post
 * minus pre balance, the balance's owner and mint checked), and every account key, where a Solana
 * Pay reference sits. No I/O: the watcher fetches, this judges. An answer it cannot read (a block
 * time no clock can hold, a balance that is no number) is "unjudgeable", never a payment.
 */
import type { Address, GetTransactionApiResponseJson } from "@solana/kit";

export type FetchedTransaction = GetTransactionApiResponseJson<0>;

export interface WatchedTokenAccount {
  /** The recipient's associated token account for the mint. */
  tokenAccount: Address;
  /** The wallet that owns it. */
  recipient: Address;
  mint: Address;
}

export type TransactionVerdict =
  | { kind: "failed" }
  /** The answer is malformed: judged again a few times, then set aside for the operator. */
  | { kind: "unjudgeable"; detail: string }
  /** Succeeded, but the watched account gained nothing (an outgoing transfer, another mint's). */
  | { kind: "no_payment"; accountKeys: Address[] }
  | { kind: "payment"; accountKeys: Address[]; received: bigint; blockTime: Date | null };

/** The transaction's account keys in index order: the static keys, then those loaded from lookup tables. */
function accountKeysOf(transaction: FetchedTransaction): Address[] {
  const loaded = transaction.meta?.loadedAddresses;
  return [...transaction.transaction.message.accountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
}

type Balances = NonNullable<NonNullable<FetchedTransaction["meta"]>["postTokenBalances"]>;

/** The watched account's balance in one list; 0 when it has no entry (the account did not exist yet, or was closed). */
function balanceOf(balances: Balances | undefined, index: number, watched: WatchedTokenAccount): bigint {
  const entry = balances?.find((balance) => balance.accountIndex === index);
  if (!entry || entry.mint !== watched.mint || entry.owner !== watched.recipient) return 0n;
  return BigInt(entry.uiTokenAmount.amount);
}

/** No Solana block is older than this (the chain's genesis was in March 2020). */
const EARLIEST_BLOCK_TIME_S = Date.UTC(2020, 0, 1) / 1000;
/** A validator's clock may run ahead of ours, but not by more than this. */
const LATEST_BLOCK_TIME_AHEAD_S = 24 * 60 * 60;
/** Token amounts are u64. */
const MAX_U64 = 2n ** 64n - 1n;

export function verifyTransaction(
  transaction: FetchedTransaction,
  watched: WatchedTokenAccount,
  nowMs: number,
): TransactionVerdict {
  try {
    return judge(transaction, watched, nowMs);
  } catch (error) {
    return { kind: "unjudgeable", detail: `unreadable answer: ${(error as Error)?.message ?? String(error)}` };
  }
}

function judge(transaction: FetchedTransaction, watched: WatchedTokenAccount, nowMs: number): TransactionVerdict {
  const meta = transaction.meta;
  if (!meta || meta.err !== null) return { kind: "failed" };
  const accountKeys = accountKeysOf(transaction);
  const index = accountKeys.indexOf(watched.tokenAccount);
  const received =
    index < 0
      ? 0n
      : balanceOf(meta.postTokenBalances, index, watched) - balanceOf(meta.preTokenBalances, index, watched);
  if (received <= 0n) return { kind: "no_payment", accountKeys };
  if (received > MAX_U64) return { kind: "unjudgeable", detail: `received ${received} base units, over a u64` };
  const seconds = transaction.blockTime === null ? null : Number(transaction.blockTime);
  if (seconds !== null && !(seconds >= EARLIEST_BLOCK_TIME_S && seconds <= nowMs / 1000 + LATEST_BLOCK_TIME_AHEAD_S)) {
    return { kind: "unjudgeable", detail: `blockTime ${String(transaction.blockTime)} is no time a block was made` };
  }
  return { kind: "payment", accountKeys, received, blockTime: seconds === null ? null : new Date(seconds * 1000) };
}
