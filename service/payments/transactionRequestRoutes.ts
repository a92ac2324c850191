/**
 * Solana Pay transaction requests (docs/decisions/2026-11-27-transaction-requests.md):
 *
 *   GET  /payments/<reference>/transaction   {label, icon}
 *   POST /payments/<reference>/transaction   {"account"} → {transaction, message}: the unsigned transfer
 *
 * This file answers them and names their refusals; transactionRequest.ts builds the transaction.
 * A wallet fetches them from anywhere: they answer any origin, without credentials.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Address, isAddress } from "@solana/kit";
import {
  PAYMENT_LABEL,
  type PaymentErrorBody,
  type PaymentStatus,
  type TransactionRequestBody,
  type TransactionRequestLabel,
  type TransactionRequestTransaction,
} from "../../src/lib/payments.ts";
import { answerJson, refuseMethod } from "../http/answers.ts";
import { clientAddress, limitKey, maskAddress } from "../http/clientAddress.ts";
import type { StoredPayment } from "../storage/payments.ts";
import { formatUnits } from "./amounts.ts";
import { type BlockhashLifetime, RpcFault } from "./chain.ts";
import { type AccountState, RpcBudgetSpent } from "./requestReads.ts";
import { statusBody } from "./requestRoutes.ts";
import {
  COMMON_REFUSALS,
  type PaymentRoutesOptions,
  PREFLIGHT_MAX_AGE_S,
  type RouteShared,
  readJsonBody,
  refuse,
  refuseBody,
} from "./routeShared.ts";
import {
  buyerHolding,
  buyerTokenAccount,
  ICON_PATH,
  requestOrigin,
  transferTransaction,
} from "./transactionRequest.ts";

const TRANSACTION_METHODS = "GET, HEAD, POST";
/** The RPC could not answer a transaction request (and gave no Retry-After of its own): when to ask again. */
const RPC_RETRY_AFTER_S = 5;

/** The transaction request's refusals, as they are sent. */
export const TRANSACTION_REQUEST_REFUSALS = {
  labelRateLimited: { error: "rate_limited", message: "Too many requests. Try again in a minute." },
  rateLimited: { error: "rate_limited", message: "Too many requests. Try again in a few minutes." },
  noAccount: {
    error: "bad_request",
    message: 'Send {"account": "<the wallet\'s address>"}, a base58 Solana address.',
  },
  notFound: { error: "not_found", message: "There is no such payment request." },
  ownWallet: { error: "own_wallet", message: "This is the shop's own wallet: pay from another." },
  noTokens: { error: "no_tokens", message: "This wallet holds no $ZN." },
  accountFrozen: { error: "account_frozen", message: "This wallet's $ZN account is frozen." },
  rpcBusy: { error: "busy", message: "The shop is answering many wallets at once. Try again in a few seconds." },
} as const satisfies Record<string, PaymentErrorBody>;

/** Why a transaction request refuses a request that no longer waits: it never will again (410). */
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

type TransactionRequestRoutesOptions = Pick<
  PaymentRoutesOptions,
  | "allowedOrigins"
  | "settings"
  | "store"
  | "trustProxy"
  | "trustedProxies"
  | "chainInfo"
  | "available"
  | "statusLimiter"
  | "reads"
  | "transactionLimiter"
  | "servesPages"
  | "logger"
  | "metrics"
  | "now"
>;

/** Answers GET, HEAD, POST and OPTIONS on /payments/<reference>/transaction. */
export type TransactionRequestRoute = (req: IncomingMessage, res: ServerResponse, reference: string) => void;

export function createTransactionRequestRoute(
  options: TransactionRequestRoutesOptions,
  shared: RouteShared,
): TransactionRequestRoute {
  const { settings, store, allowedOrigins, logger, statusLimiter } = options;
  const { coalesce, unavailable, failed } = shared;

  /** The request behind a transaction request, if it can still be paid; else the refusal is sent. */
  async function openRequest(res: ServerResponse, reference: string): Promise<StoredPayment | null> {
    // Not base58 of 32 bytes: no request of ours, and no query for it.
    const payment = isAddress(reference) ? await coalesce(`status ${reference}`, () => store.find(reference)) : null;
    if (!payment || payment.mint !== settings.mint || payment.recipient !== settings.recipient) {
      refuse(res, 404, TRANSACTION_REQUEST_REFUSALS.notFound);
      return null;
    }
    if (payment.status !== "waiting") {
      refuse(res, 410, endedRefusal(payment.status));
      return null;
    }
    if (Date.parse(payment.expiresAt) <= options.now()) {
      refuse(res, 410, endedRefusal("expired"));
      return null;
    }
    return payment;
  }

  function budgetSpent(res: ServerResponse, error: RpcBudgetSpent) {
    const retryAfterS = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    options.metrics.paymentRpcBudgetRefusals.inc();
    refuse(res, 503, TRANSACTION_REQUEST_REFUSALS.rpcBusy, { "Retry-After": String(retryAfterS) });
  }

  function rpcUnavailable(res: ServerResponse, error: RpcFault) {
    const retryAfterS =
      error.retryAfterMs === null ? RPC_RETRY_AFTER_S : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    logger.warn({ method: error.method, kind: error.kind }, "a transaction request could not reach the Solana RPC");
    refuse(res, 503, COMMON_REFUSALS.unavailable, { "Retry-After": String(retryAfterS) });
  }

  async function transactionLabel(req: IncomingMessage, res: ServerResponse, reference: string) {
    if (!statusLimiter.take(limitKey(clientAddress(req, options.trustProxy, options.trustedProxies)))) {
      refuse(res, 429, TRANSACTION_REQUEST_REFUSALS.labelRateLimited);
      return;
    }
    if (!(await openRequest(res, reference))) return;
    const pagesOrigin = options.servesPages ? null : allowedOrigins.find((origin) => origin !== "*");
    const icon = `${pagesOrigin ?? requestOrigin(req, options.trustProxy, options.trustedProxies)}${ICON_PATH}`;
    answerJson(res, 200, { label: PAYMENT_LABEL, icon } satisfies TransactionRequestLabel, {
      "Cache-Control": "no-store",
    });
  }

  async function transaction(req: IncomingMessage, res: ServerResponse, reference: string) {
    const address = clientAddress(req, options.trustProxy, options.trustedProxies);
    if (!options.transactionLimiter.take(limitKey(address))) {
      req.resume();
      refuse(res, 429, TRANSACTION_REQUEST_REFUSALS.rateLimited);
      return;
    }
    const body = await readJsonBody(req);
    if (!body.ok) {
      refuseBody(res, body);
      return;
    }
    const { account } = (typeof body.value === "object" && body.value !== null ? body.value : {}) as {
      [K in keyof TransactionRequestBody]?: unknown;
    };
    if (typeof account !== "string" || !isAddress(account)) {
      refuse(res, 400, TRANSACTION_REQUEST_REFUSALS.noAccount);
      return;
    }
    const chain = options.chainInfo();
    if (!chain || !options.available()) {
      unavailable(res);
      return;
    }
    const payment = await openRequest(res, reference);
    if (!payment) return;
    if (account === settings.recipient) {
      refuse(res, 422, TRANSACTION_REQUEST_REFUSALS.ownWallet);
      return;
    }
    const { tierName, priceAmount: price } = statusBody(payment);
    const source = await buyerTokenAccount(account, settings.mint, chain);
    let accounts: AccountState[];
    let lifetime: BlockhashLifetime;
    try {
      [accounts, lifetime] = await Promise.all([
        options.reads.accounts([source, chain.tokenAccount]),
        options.reads.latestBlockhash(),
      ]);
    } catch (error) {
      if (error instanceof RpcBudgetSpent) {
        budgetSpent(res, error);
        return;
      }
      if (error instanceof RpcFault) {
        rpcUnavailable(res, error);
        return;
      }
      throw error;
    }
    const holding = buyerHolding(accounts[0] ?? null, chain);
    if (holding.kind === "none") {
      refuse(res, 422, TRANSACTION_REQUEST_REFUSALS.noTokens);
      return;
    }
    if (holding.kind === "frozen") {
      refuse(res, 422, TRANSACTION_REQUEST_REFUSALS.accountFrozen);
      return;
    }
    if (holding.amount < payment.priceBaseUnits) {
      refuse(res, 422, insufficientTokensRefusal(formatUnits(holding.amount, payment.decimals), tierName, price));
      return;
    }
    const message = `${tierName}, ${price} $ZN`;
    const transaction = await transferTransaction({
      buyer: account,
      mint: settings.mint,
      recipient: settings.recipient,
      info: chain,
      amount: payment.priceBaseUnits,
      reference: payment.reference as Address,
      memo: tierName,
      createStoreAccount: !accounts[1],
      lifetime,
    });
    logger.info(
      { reference: payment.reference, address: maskAddress(address), createsStoreAccount: !accounts[1] },
      "transaction requested",
    );
    answerJson(res, 200, { transaction, message } satisfies TransactionRequestTransaction, {
      "Cache-Control": "no-store",
    });
  }

  return (req, res, reference) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res
        .writeHead(204, {
          "Access-Control-Allow-Methods": TRANSACTION_METHODS,
          "Access-Control-Allow-Headers": "Content-Type",
          "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_S),
          "Cache-Control": "no-store",
        })
        .end();
    } else if (method === "POST") {
      transaction(req, res, reference).catch((error: unknown) => failed(res, "a transaction request", error));
    } else if (method === "GET" || method === "HEAD") {
      transactionLabel(req, res, reference).catch((error: unknown) => failed(res, "a transaction request", error));
    } else {
      req.resume();
      refuseMethod(res, TRANSACTION_METHODS);
    }
  };
}
