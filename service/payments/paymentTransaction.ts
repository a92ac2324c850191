/**
 * The store's transfer for one open payment request and one buyer, with every refusal on the way
 * (docs/decisions/2026-11-27-transaction-requests.md): the request still open, the buyer not the
 * store, the buyer's $ZN read from the chain, the transaction built (transactionRequest.ts).
 * Shared by the Solana Pay transaction request (transactionRequestRoutes.ts) and the Actions POST
 * (service/actions/), so that both answer the same transaction and the same refusals.
 */
import { type Address, isAddress } from "@solana/kit";
import type { Tier } from "../../src/data/tiers.ts";
import type { PaymentErrorBody, PaymentStatus } from "../../src/lib/payments.ts";
import { logRepeated } from "../repeatedWarnings.ts";
import type { StoredPayment } from "../storage/payments.ts";
import { formatUnits, toBaseUnits } from "./amounts.ts";
import { type BlockhashLifetime, type ChainInfo, RpcFault } from "./chain.ts";
import { type AccountState, RpcBudgetSpent } from "./requestReads.ts";
import { statusBody } from "./requestRoutes.ts";
import { COMMON_REFUSALS, type PaymentRoutesOptions, type RouteShared } from "./routeShared.ts";
import { buyerHolding, buyerTokenAccount, transferTransaction } from "./transactionRequest.ts";

/** The RPC could not answer (and gave no Retry-After of its own): when to ask again. */
const RPC_RETRY_AFTER_S = 5;

/** The refusals on the way to a transaction, as they are sent. */
export const PAYMENT_TRANSACTION_REFUSALS = {
  notFound: { error: "not_found", message: "There is no such payment request." },
  ownWallet: { error: "own_wallet", message: "This is the shop's own wallet: pay from another." },
  noTokens: { error: "no_tokens", message: "This wallet holds no $ZN." },
  accountFrozen: { error: "account_frozen", message: "This wallet's $ZN account is frozen." },
  rpcBusy: { error: "busy", message: "The shop is answering many wallets at once. Try again in a few seconds." },
} as const satisfies Record<string, PaymentErrorBody>;

/** Why a request that no longer waits is refused: it never will again (410). */
const ENDED_TEXTS: Record<Exclude<PaymentStatus, "waiting">, string> = {
  confirmed: "This payment request is already paid.",
  underpaid: "This payment request was already paid, short of its price.",
  expired: "This payment request has expired. Start a new purchase.",
};

export function endedRefusal(status: Exclude<PaymentStatus, "waiting">): PaymentErrorBody {
  return { error: "ended", message: ENDED_TEXTS[status] };
}

/** `held` and `price` in $ZN, as formatUnits writes them. */
export function insufficientTokensRefusal(held: string, tierName: string, price: string): PaymentErrorBody {
  return { error: "insufficient_tokens", message: `This wallet holds ${held} $ZN; ${tierName} costs ${price} $ZN.` };
}

/** A refusal as it is to be sent: status, body, and headers such as Retry-After. */
export interface PaymentRefusal {
  ok: false;
  status: number;
  error: PaymentErrorBody;
  headers?: Record<string, string>;
}

type OpenPayment = { ok: true; payment: StoredPayment } | PaymentRefusal;

export type PaymentTransaction =
  | {
      ok: true;
      /** Base64 of the unsigned wire transaction. */
      transaction: string;
      /** What the wallet shows: the tier and its price. */
      message: string;
      /** The transaction first creates the store's token account. */
      createsStoreAccount: boolean;
    }
  | PaymentRefusal;

type PaymentTransactionsOptions = Pick<
  PaymentRoutesOptions,
  "settings" | "store" | "chainInfo" | "available" | "reads" | "logger" | "metrics" | "now"
>;

export interface PaymentTransactions {
  /** The request behind `reference`, if it can still be paid. */
  open(reference: string): Promise<OpenPayment>;
  /** The transfer of `payment`'s price from `account` (a checked address), or why not. */
  build(payment: StoredPayment, account: Address, network?: string): Promise<PaymentTransaction>;
  /**
   * What build would refuse `account` for a price (own wallet, no or too few $ZN, frozen, the RPC),
   * before any request is made; null when it would build. Its reads serve the build that follows.
   */
  refusalFor(account: Address, tier: Pick<Tier, "name" | "price">, network?: string): Promise<PaymentRefusal | null>;
}

const refusal = (status: number, error: PaymentErrorBody, headers?: Record<string, string>): PaymentRefusal =>
  headers ? { ok: false, status, error, headers } : { ok: false, status, error };

export function createPaymentTransactions(
  options: PaymentTransactionsOptions,
  shared: RouteShared,
): PaymentTransactions {
  const { settings, store, logger } = options;

  function rpcUnavailable(error: RpcFault): PaymentRefusal {
    const retryAfterS =
      error.retryAfterMs === null ? RPC_RETRY_AFTER_S : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    logRepeated(
      logger,
      "warn",
      { method: error.method, kind: error.kind },
      "a transaction request could not reach the Solana RPC",
      error.kind,
    );
    return refusal(503, COMMON_REFUSALS.unavailable, { "Retry-After": String(retryAfterS) });
  }

  function budgetSpent(error: RpcBudgetSpent): PaymentRefusal {
    options.metrics.paymentRpcBudgetRefusals.inc();
    const retryAfterS = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return refusal(503, PAYMENT_TRANSACTION_REFUSALS.rpcBusy, { "Retry-After": String(retryAfterS) });
  }

  /** The buyer's and the store's token accounts and a blockhash, or why the transfer cannot be built. */
  async function readBuyer(
    account: Address,
    priceOn: (chain: ChainInfo) => bigint,
    tierName: string,
    network: string | undefined,
  ): Promise<{ ok: true; chain: ChainInfo; accounts: AccountState[]; lifetime: BlockhashLifetime } | PaymentRefusal> {
    const chain = options.chainInfo();
    if (!chain || !options.available()) return refusal(503, COMMON_REFUSALS.unavailable);
    if (account === settings.recipient) return refusal(422, PAYMENT_TRANSACTION_REFUSALS.ownWallet);
    const source = await buyerTokenAccount(account, settings.mint, chain);
    let accounts: AccountState[];
    let lifetime: BlockhashLifetime;
    try {
      [accounts, lifetime] = await Promise.all([
        options.reads.accounts([source, chain.tokenAccount], network),
        options.reads.latestBlockhash(),
      ]);
    } catch (error) {
      if (error instanceof RpcBudgetSpent) return budgetSpent(error);
      if (error instanceof RpcFault) return rpcUnavailable(error);
      throw error;
    }
    const holding = buyerHolding(accounts[0] ?? null, chain);
    if (holding.kind === "none") return refusal(422, PAYMENT_TRANSACTION_REFUSALS.noTokens);
    if (holding.kind === "frozen") return refusal(422, PAYMENT_TRANSACTION_REFUSALS.accountFrozen);
    const priceBaseUnits = priceOn(chain);
    if (holding.amount < priceBaseUnits) {
      const held = formatUnits(holding.amount, chain.decimals);
      return refusal(422, insufficientTokensRefusal(held, tierName, formatUnits(priceBaseUnits, chain.decimals)));
    }
    return { ok: true, chain, accounts, lifetime };
  }

  return {
    async open(reference) {
      // Not base58 of 32 bytes: no request of ours, and no query for it.
      const payment = isAddress(reference)
        ? await shared.coalesce(`status ${reference}`, () => store.find(reference))
        : null;
      if (!payment || payment.mint !== settings.mint || payment.recipient !== settings.recipient) {
        return refusal(404, PAYMENT_TRANSACTION_REFUSALS.notFound);
      }
      if (payment.status !== "waiting") return refusal(410, endedRefusal(payment.status));
      if (Date.parse(payment.expiresAt) <= options.now()) return refusal(410, endedRefusal("expired"));
      return { ok: true, payment };
    },

    async refusalFor(account, tier, network) {
      const read = await readBuyer(account, (chain) => toBaseUnits(tier.price, chain.decimals), tier.name, network);
      return read.ok ? null : read;
    },

    async build(payment, account, network) {
      const { tierName, priceAmount: price } = statusBody(payment);
      const read = await readBuyer(account, () => payment.priceBaseUnits, tierName, network);
      if (!read.ok) return read;
      const { chain, accounts, lifetime } = read;
      const createsStoreAccount = !accounts[1];
      const transaction = await transferTransaction({
        buyer: account,
        mint: settings.mint,
        recipient: settings.recipient,
        info: chain,
        amount: payment.priceBaseUnits,
        reference: payment.reference as Address,
        memo: tierName,
        createStoreAccount: createsStoreAccount,
        lifetime,
        priorityFeeMicroLamports: settings.priorityFeeMicroLamports,
      });
      return { ok: true, transaction, message: `${tierName}, ${price} $ZN`, createsStoreAccount };
    },
  };
}
