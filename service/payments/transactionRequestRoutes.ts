/**
 * Solana Pay transaction requests (docs/decisions/2026-11-27-transaction-requests.md):
 *
 *   GET  /payments/<reference>/transaction   {label, icon}
 *   POST /payments/<reference>/transaction   {"account"} → {transaction, message}: the unsigned transfer
 *
 * This file answers them; paymentTransaction.ts checks the request and the buyer and builds the
 * transaction (transactionRequest.ts).
 * A wallet fetches them from anywhere: they answer any origin, without credentials.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isAddress } from "@solana/kit";
import {
  PAYMENT_LABEL,
  type PaymentErrorBody,
  type TransactionRequestBody,
  type TransactionRequestLabel,
  type TransactionRequestTransaction,
} from "../../src/lib/payments.ts";
import { answerJson, refuseMethod } from "../http/answers.ts";
import { clientAddress, limitKey, maskAddress } from "../http/clientAddress.ts";
import { addressGroups } from "../http/fairShares.ts";
import { PAYMENT_TRANSACTION_REFUSALS, type PaymentRefusal, type PaymentTransactions } from "./paymentTransaction.ts";
import {
  type PaymentRoutesOptions,
  PREFLIGHT_MAX_AGE_S,
  type RouteShared,
  readJsonBody,
  refuse,
  refuseBody,
} from "./routeShared.ts";
import { ICON_PATH, requestOrigin } from "./transactionRequest.ts";

const TRANSACTION_METHODS = "GET, HEAD, POST";

/** The transaction request's refusals, as they are sent (with the builder's, paymentTransaction.ts). */
export const TRANSACTION_REQUEST_REFUSALS = {
  labelRateLimited: { error: "rate_limited", message: "Too many requests. Try again in a minute." },
  rateLimited: { error: "rate_limited", message: "Too many requests. Try again in a few minutes." },
  noAccount: {
    error: "bad_request",
    message: 'Send {"account": "<the wallet\'s address>"}, a base58 Solana address.',
  },
  ...PAYMENT_TRANSACTION_REFUSALS,
} as const satisfies Record<string, PaymentErrorBody>;

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
  | "transactionLimiter"
  | "servesPages"
  | "logger"
  | "now"
>;

/** Answers GET, HEAD, POST and OPTIONS on /payments/<reference>/transaction. */
export type TransactionRequestRoute = (req: IncomingMessage, res: ServerResponse, reference: string) => void;

export function createTransactionRequestRoute(
  options: TransactionRequestRoutesOptions,
  shared: RouteShared,
  transactions: PaymentTransactions,
): TransactionRequestRoute {
  const { allowedOrigins, logger, statusLimiter } = options;
  const { unavailable, failed } = shared;

  function refuseWith(res: ServerResponse, refusal: PaymentRefusal) {
    refuse(res, refusal.status, refusal.error, refusal.headers);
  }

  async function transactionLabel(req: IncomingMessage, res: ServerResponse, reference: string) {
    if (!statusLimiter.take(limitKey(clientAddress(req, options.trustProxy, options.trustedProxies)))) {
      refuse(res, 429, TRANSACTION_REQUEST_REFUSALS.labelRateLimited);
      return;
    }
    const open = await transactions.open(reference);
    if (!open.ok) {
      refuseWith(res, open);
      return;
    }
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
    if (!options.chainInfo() || !options.available()) {
      unavailable(res);
      return;
    }
    const open = await transactions.open(reference);
    if (!open.ok) {
      refuseWith(res, open);
      return;
    }
    const { payment } = open;
    // Charged to the client's network: one /48 or /24 may cause only its share of the reads.
    const built = await transactions.build(payment, account, addressGroups(address).wide ?? undefined);
    if (!built.ok) {
      refuseWith(res, built);
      return;
    }
    const { transaction, message, createsStoreAccount } = built;
    logger.info(
      { reference: payment.reference, address: maskAddress(address), createsStoreAccount },
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
