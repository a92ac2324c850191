/**
 * What one transaction did for the store (docs/design.md#8), from getTransaction's `json` answer:
 * whether it succeeded, the base units the recipient's token account for the mint gained (post
 * minus pre balance, the balance's owner and mint checked), and every account key, where a Solana
 * Pay reference sits. No I/O: the watcher fetches, this judges.
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

export function verifyTransaction(transaction: FetchedTransaction, watched: WatchedTokenAccount): TransactionVerdict {
  const meta = transaction.meta;
  if (!meta || meta.err !== null) return { kind: "failed" };
  const accountKeys = accountKeysOf(transaction);
  const index = accountKeys.indexOf(watched.tokenAccount);
  const received =
    index < 0
      ? 0n
      : balanceOf(meta.postTokenBalances, index, watched) - balanceOf(meta.preTokenBalances, index, watched);
  if (received <= 0n) return { kind: "no_payment", accountKeys };
  const blockTime = transaction.blockTime === null ? null : new Date(Number(transaction.blockTime) * 1000);
  return { kind: "payment", accountKeys, received, blockTime };
}
