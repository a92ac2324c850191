/**
 * Solana Pay transaction requests (spec v1.1; docs/decisions/2026-11-27-transaction-requests.md):
 * the unsigned transaction a wallet fetches for an open payment request, with no I/O of its own.
 * It holds the store's own transfer and nothing else: TransferChecked of the request's exact price
 * from the buyer's associated token account to the store's, the request's reference added to it
 * as a read-only non-signer key (where the watcher finds it, as for a transfer request), and a
 * memo with the tier's name. The buyer pays the fee and signs; the service signs nothing. Only
 * while the store's token account does not exist yet does an idempotent create of it come first,
 * as wallets add one to a transfer request. Two compute-budget instructions lead
 * (docs/decisions/2026-11-28-priority-fees-and-expiry.md): a unit limit sized to what the transfer
 * uses, and the operator's priority fee per unit, so every wallet sends it at the same price
 * (Phantom adds its own only to a transaction that has none).
 */
import type { IncomingMessage } from "node:http";
import {
  AccountRole,
  type Address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getUtf8Encoder,
  type Instruction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import {
  AccountState,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTokenDecoder,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import { overHttps } from "../http/clientAddress.ts";
import type { BlockhashLifetime, ChainInfo } from "./chain.ts";

/** The SPL Memo program (v2 and later): data is UTF-8, no accounts needed. */
export const MEMO_PROGRAM_ADDRESS = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr" as Address;
/** The site's square icon (public/favicon.svg), as GET answers it. */
export const ICON_PATH = "/favicon.svg";
const TOKEN_ACCOUNT_SIZE = 165;

/** What the buyer's associated token account for the mint holds, as the chain answered it. */
export type BuyerHolding = { kind: "none" } | { kind: "frozen" } | { kind: "holds"; amount: bigint };

/** Judges the buyer's associated token account (null: it does not exist). */
export function buyerHolding(account: { owner: Address; data: Uint8Array } | null, info: ChainInfo): BuyerHolding {
  if (!account || account.owner !== info.tokenProgram || account.data.length < TOKEN_ACCOUNT_SIZE) {
    return { kind: "none" };
  }
  const token = getTokenDecoder().decode(account.data.subarray(0, TOKEN_ACCOUNT_SIZE));
  if (token.state === AccountState.Uninitialized) return { kind: "none" };
  if (token.state === AccountState.Frozen) return { kind: "frozen" };
  return { kind: "holds", amount: token.amount };
}

export interface TransferTransaction {
  buyer: Address;
  mint: Address;
  recipient: Address;
  info: ChainInfo;
  /** Base units: the request's price. */
  amount: bigint;
  reference: Address;
  memo: string;
  /** The store's token account does not exist yet: create it first (idempotent; the buyer pays its rent). */
  createStoreAccount: boolean;
  lifetime: BlockhashLifetime;
  /** The priority fee, in micro-lamports per compute unit (PAYMENT_PRIORITY_FEE_MICROLAMPORTS); 0 adds none. */
  priorityFeeMicroLamports: number;
}

/**
 * Compute units the transaction may use. LiteSVM measured 745 for a Token transfer with its memo
 * and 14,270 with the store's account created first (paymentTransactionRequest.test.ts); SPL
 * Token before its p-token rewrite took about 6,200 for TransferChecked alone, creating an
 * associated token account about 25,000, and Token-2022 more: the limits leave room for those.
 * The priority fee is paid per unit asked, so a tight limit keeps it small; a transaction over its
 * limit fails and moves nothing.
 */
export const COMPUTE_UNIT_LIMIT = { transfer: 30_000, withStoreAccount: 80_000 } as const;

/** The buyer's associated token account for the mint, under the mint's token program. */
export async function buyerTokenAccount(buyer: Address, mint: Address, info: ChainInfo): Promise<Address> {
  const [address] = await findAssociatedTokenPda({ owner: buyer, mint, tokenProgram: info.tokenProgram });
  return address;
}

/** The unsigned version 0 transaction, base64 of its wire form (signatures zeroed), fee payer the buyer. */
export async function transferTransaction(terms: TransferTransaction): Promise<string> {
  const { buyer, mint, recipient, info, amount, reference } = terms;
  const source = await buyerTokenAccount(buyer, mint, info);
  // A signer that never signs: it marks the buyer's key as the one whose signature the wallet adds.
  const signer = createNoopSigner(buyer);
  const transfer = getTransferCheckedInstruction(
    { source, mint, destination: info.tokenAccount, authority: signer, amount, decimals: info.decimals },
    { programAddress: info.tokenProgram },
  );
  const withReference: Instruction = {
    ...transfer,
    accounts: [...transfer.accounts, { address: reference, role: AccountRole.READONLY }],
  };
  const memo: Instruction = { programAddress: MEMO_PROGRAM_ADDRESS, data: getUtf8Encoder().encode(terms.memo) };
  const createStoreAccount = terms.createStoreAccount
    ? [
        getCreateAssociatedTokenIdempotentInstruction({
          payer: signer,
          ata: info.tokenAccount,
          owner: recipient,
          mint,
          tokenProgram: info.tokenProgram,
        }),
      ]
    : [];
  const units = terms.createStoreAccount ? COMPUTE_UNIT_LIMIT.withStoreAccount : COMPUTE_UNIT_LIMIT.transfer;
  const computeBudget = [
    getSetComputeUnitLimitInstruction({ units }),
    ...(terms.priorityFeeMicroLamports > 0
      ? [getSetComputeUnitPriceInstruction({ microLamports: BigInt(terms.priorityFeeMicroLamports) })]
      : []),
  ];
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayer(buyer, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(terms.lifetime, tx),
    (tx) => appendTransactionMessageInstructions([...computeBudget, ...createStoreAccount, withReference, memo], tx),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}

/** The origin this request reached, as the client saw it: https directly or as the outermost trusted proxy reports it. */
export function requestOrigin(req: IncomingMessage, trustProxy: number, proxies?: readonly string[]): string {
  return `${overHttps(req, trustProxy, proxies) ? "https" : "http"}://${req.headers.host ?? "localhost"}`;
}
