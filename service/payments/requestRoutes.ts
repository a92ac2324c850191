/**
 * The payment routes (docs/design.md#8):
 *
 *   POST /payments             {"tierId":"2","name"?:"Nobody"} → 201 the transfer request
 *   GET  /payments/config      {"enabled","available"}: whether the page offers real purchases
 *   GET  /payments/patrons     Verified Patrons, the top 10 names by confirmed $ZN
 *   GET  /payments/<reference> where a request stands
 *   GET  /payments/<reference>/transaction   Solana Pay transaction request: {label, icon}
 *   POST /payments/<reference>/transaction   {"account"} → {transaction, message}: the unsigned transfer
 *
 * The pages may be on another origin (docs/design.md#6d): every answer carries CORS for the
 * origins whose pages may open the socket (ALLOWED_ORIGINS, else the same origin), as
 * /auction/winners does, and a POST from any other origin is refused, as the socket refuses it.
 * The transaction request is the exception: a wallet fetches it from anywhere, so it answers any
 * origin, without credentials (docs/decisions/2026-11-27-transaction-requests.md).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Address, getAddressDecoder, isAddress } from "@solana/kit";
import { LRUCache } from "lru-cache";
import { TIERS, type Tier } from "../../src/data/tiers.ts";
import { checkBidderName } from "../../src/lib/auction/bidRules.ts";
import { REFUSAL_TEXTS } from "../../src/lib/auction/refusalTexts.ts";
import {
  type CreatedPayment,
  PAYMENT_LABEL,
  PAYMENT_NAME_NOT_ALLOWED_TEXT,
  PAYMENTS_CONFIG_PATH,
  PAYMENTS_PATH,
  PAYMENTS_UNAVAILABLE_TEXT,
  type PaymentErrorBody,
  type PaymentRequestBody,
  type PaymentStatus,
  type PaymentStatusBody,
  type PaymentsConfigBody,
  TRANSACTION_REQUEST_SUFFIX,
  type TransactionRequestBody,
  type TransactionRequestLabel,
  type TransactionRequestTransaction,
} from "../../src/lib/payments.ts";
import { PATRONS_LIMIT, PATRONS_PATH, type PatronsBody } from "../../src/lib/verifiedPatrons.ts";
import { createCoalescer } from "../coalescedReads.ts";
import { answerJson, refuseMethod, refuseUnlessRead } from "../http/answers.ts";
import { clientAddress, limitKey, maskAddress } from "../http/clientAddress.ts";
import { isOriginAllowed } from "../http/originPolicy.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { NameFilter } from "../names/nameFilter.ts";
import type { PaymentStore, StoredPayment } from "../storage/payments.ts";
import { StoreUnavailableError } from "../storage/types.ts";
import { formatUnits, toBaseUnits, transferRequestUrl } from "./amounts.ts";
import { type ChainClient, type ChainInfo, RpcFault } from "./chain.ts";
import { explorerUrl, type PaymentSettings } from "./settings.ts";
import {
  buyerHolding,
  buyerTokenAccount,
  ICON_PATH,
  requestOrigin,
  transferTransaction,
} from "./transactionRequest.ts";

/** A request body is a tier id and a name of at most 40 characters: 2 KiB is plenty. */
const MAX_BODY_BYTES = 2048;
/** Verified Patrons change only with a confirmation: a few seconds old is fresh enough. */
const PATRONS_CACHE_MS = 5_000;
const PATRONS_CACHE_CONTROL = "public, max-age=5";
const PREFLIGHT_MAX_AGE_S = 600;
const TRANSACTION_METHODS = "GET, HEAD, POST";
const REFERENCE_BYTES = 32;
/**
 * A request's status, read once for every asker within this: a page polls every 3 s while its
 * socket is closed, and a flood of the same reference costs one read a second.
 */
const STATUS_CACHE_MS = 1_000;
const STATUS_CACHE_ENTRIES = 10_000;
/** With the open-request cap reached: when to ask again. */
const BUSY_RETRY_AFTER_S = 60;
/** The RPC could not answer a transaction request (and gave no Retry-After of its own): when to ask again. */
const RPC_RETRY_AFTER_S = 5;

/** Answers the request when its path is a payments path (the target parsed once by server.ts); false leaves it to others. */
export type PaymentRoute = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => boolean;

interface CommonOptions {
  /** As ServiceConfig.allowedOrigins: empty is same origin only, `*` any. */
  allowedOrigins: readonly string[];
}

export interface PaymentRoutesOptions extends CommonOptions {
  settings: PaymentSettings;
  store: PaymentStore;
  trustProxy: number;
  /** The chain as read at start; null until it could be read. */
  chainInfo(): ChainInfo | null;
  /** Whether a payment can be taken now (chain and database reachable). */
  available(): boolean;
  nameFilter: NameFilter;
  /** POST /payments, per client (an IPv6 client by its /64). */
  rateLimiter: RateLimiter;
  /** GET /payments/<reference>, per client as above: the answers a page's polling needs, and no flood. */
  statusLimiter: RateLimiter;
  /** Confirmations are slower than usual (the RPC provider rate limits the watcher). */
  slow(): boolean;
  /** The RPC calls a transaction request makes: the buyer's and the store's token accounts, a recent blockhash. */
  chain: Pick<ChainClient, "accounts" | "latestBlockhash">;
  /** POST /payments/<reference>/transaction, per client as above (each costs two RPC calls). */
  transactionLimiter: RateLimiter;
  /** The service serves the built pages (STATIC_DIR set): the icon is on its own origin, else on the pages'. */
  servesPages: boolean;
  logger: Logger;
  metrics: Metrics;
  now(): number;
  randomBytes(length: number): Uint8Array;
}

const isPaymentsPath = (path: string) => path === PAYMENTS_PATH || path.startsWith(`${PAYMENTS_PATH}/`);

function refuse(res: ServerResponse, status: number, body: PaymentErrorBody, headers: Record<string, string> = {}) {
  answerJson(res, status, body, headers);
}

/** CORS as /auction/winners answers it; true when the request's origin may use the routes. */
function allowOrigin(req: IncomingMessage, res: ServerResponse, allowedOrigins: readonly string[]): boolean {
  res.setHeader("Vary", "Origin");
  const allowed = isOriginAllowed(req, allowedOrigins);
  if (allowed && req.headers.origin !== undefined) res.setHeader("Access-Control-Allow-Origin", req.headers.origin);
  return allowed;
}

function preflight(res: ServerResponse, allowed: boolean) {
  if (!allowed) {
    refuse(res, 403, { error: "origin_not_allowed" });
    return;
  }
  res
    .writeHead(204, {
      "Access-Control-Allow-Methods": "GET, HEAD, POST",
      "Access-Control-Allow-Headers": "Content-Type",
      "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_S),
      "Cache-Control": "no-store",
    })
    .end();
}

/** Why a transaction request refuses a request that no longer waits: it never will again (410). */
const ENDED_TEXTS: Record<Exclude<PaymentStatus, "waiting">, string> = {
  confirmed: "This payment request is already paid.",
  underpaid: "This payment request was already paid, short of its price.",
  expired: "This payment request has expired. Start a new purchase.",
};

/** Payments off: only /payments/config answers (enabled false); everything else is as before payments. */
export function createPaymentsOffRoute({ allowedOrigins }: CommonOptions): PaymentRoute {
  return (req, res, target) => {
    if (target.path !== PAYMENTS_CONFIG_PATH && target.path !== PATRONS_PATH) return false;
    const allowed = allowOrigin(req, res, allowedOrigins);
    if (req.method === "OPTIONS") preflight(res, allowed);
    else if (refuseUnlessRead(req, res)) return true;
    else if (target.path === PATRONS_PATH) {
      // The Wall of Fame asks on every visit, maybe from another origin: a 404 it may read (CORS),
      // which hides its Verified Patrons, rather than the site's logged "page not found".
      refuse(res, 404, { error: "payments_off" });
    } else answerJson(res, 200, { enabled: false, available: false } satisfies PaymentsConfigBody);
    return true;
  };
}

type Body = { ok: true; value: unknown } | { ok: false; status: number; error: PaymentErrorBody };

function readJsonBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") {
      resolve({ ok: false, status: 415, error: { error: "unsupported_media_type", message: "Send JSON." } });
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done = true;
        resolve({ ok: false, status: 413, error: { error: "too_large", message: "The request is too large." } });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      try {
        resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      } catch {
        resolve({ ok: false, status: 400, error: { error: "bad_request", message: "The request is not JSON." } });
      }
    });
    req.on("error", () => {
      if (done) return;
      done = true;
      resolve({ ok: false, status: 400, error: { error: "bad_request", message: "The request could not be read." } });
    });
  });
}

type ParsedRequest =
  | { ok: true; tier: Tier; name: string | null }
  | { ok: false; status: number; error: PaymentErrorBody };

function parseRequest(value: unknown, nameFilter: NameFilter): ParsedRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, status: 400, error: { error: "bad_request", message: 'Send {"tierId": "1"}.' } };
  }
  const { tierId, name } = value as { [K in keyof PaymentRequestBody]?: unknown };
  if (typeof tierId !== "string") {
    return { ok: false, status: 400, error: { error: "bad_request", message: "tierId must be a string." } };
  }
  const tier = TIERS.find((candidate) => String(candidate.id) === tierId);
  if (!tier) return { ok: false, status: 422, error: { error: "unknown_tier", message: "There is no such tier." } };
  if (name !== undefined && name !== null && typeof name !== "string") {
    return { ok: false, status: 400, error: { error: "bad_request", message: "name must be a string." } };
  }
  if (typeof name !== "string" || name.trim() === "") return { ok: true, tier, name: null };
  const checked = checkBidderName(name);
  if (!checked.ok)
    return { ok: false, status: 422, error: { error: "invalid_name", message: REFUSAL_TEXTS.invalid_name } };
  if (!nameFilter(checked.value).allowed) {
    return { ok: false, status: 422, error: { error: "name_not_allowed", message: PAYMENT_NAME_NOT_ALLOWED_TEXT } };
  }
  return { ok: true, tier, name: checked.value };
}

export function statusBody(payment: StoredPayment): PaymentStatusBody {
  const tier = TIERS.find((candidate) => candidate.id === payment.tierId);
  return {
    reference: payment.reference,
    status: payment.status,
    tierId: String(payment.tierId),
    tierName: tier?.name ?? "",
    spins: tier?.spins ?? 0,
    priceAmount: formatUnits(payment.priceBaseUnits, payment.decimals),
    ...(payment.amountReceived === null
      ? {}
      : { receivedAmount: formatUnits(payment.amountReceived, payment.decimals) }),
    ...(payment.signature === null ? {} : { signature: payment.signature }),
    expiresAt: payment.expiresAt,
  };
}

/** Every outcome payment_requests_total counts (docs/realtime.md's refusals of POST /payments), each from zero. */
const REQUEST_OUTCOMES = [
  "created",
  "bad_request",
  "too_large",
  "unsupported_media_type",
  "unknown_tier",
  "invalid_name",
  "name_not_allowed",
  "origin_not_allowed",
  "rate_limited",
  "busy",
  "unavailable",
] as const;

export function createPaymentRoutes(options: PaymentRoutesOptions): PaymentRoute {
  const { settings, store, allowedOrigins, logger, metrics, nameFilter, rateLimiter, statusLimiter } = options;
  for (const outcome of REQUEST_OUTCOMES) metrics.paymentRequests.inc({ outcome }, 0);
  const coalesce = createCoalescer();
  const referenceDecoder = getAddressDecoder();
  let patronsCache: { body: PatronsBody; at: number } | null = null;
  const statusCache = new LRUCache<string, { body: PaymentStatusBody | null; at: number }>({
    max: STATUS_CACHE_ENTRIES,
  });

  function unavailable(res: ServerResponse) {
    refuse(res, 503, { error: "unavailable", message: PAYMENTS_UNAVAILABLE_TEXT });
  }

  function failed(res: ServerResponse, what: string, error: unknown) {
    if (!(error instanceof StoreUnavailableError)) logger.error({ err: error }, `${what} failed`);
    else logger.warn({ err: loggedError(error) }, `${what}: the database is unavailable`);
    if (!res.headersSent) unavailable(res);
  }

  async function create(req: IncomingMessage, res: ServerResponse) {
    const count = (outcome: string) => metrics.paymentRequests.inc({ outcome });
    const body = await readJsonBody(req);
    if (!body.ok) {
      count(body.error.error);
      refuse(res, body.status, body.error, body.status === 413 ? { Connection: "close" } : {});
      return;
    }
    const parsed = parseRequest(body.value, nameFilter);
    if (!parsed.ok) {
      count(parsed.error.error);
      refuse(res, parsed.status, parsed.error);
      return;
    }
    const chain = options.chainInfo();
    if (!chain || !options.available()) {
      count("unavailable");
      unavailable(res);
      return;
    }
    const address = clientAddress(req, options.trustProxy);
    if (!rateLimiter.take(limitKey(address))) {
      count("rate_limited");
      refuse(res, 429, { error: "rate_limited", message: "Too many payment requests. Try again in a few minutes." });
      return;
    }
    // Counted up to the cap only: a flood never makes this read slower than the cap's rows.
    if ((await store.countWaiting(settings.maxOpenRequests)) >= settings.maxOpenRequests) {
      count("busy");
      logger.warn({ cap: settings.maxOpenRequests }, "payment request refused: the open-request cap is reached");
      refuse(
        res,
        503,
        { error: "busy", message: "The shop is busy. Try again in a minute." },
        { "Retry-After": String(BUSY_RETRY_AFTER_S) },
      );
      return;
    }
    const { tier, name } = parsed;
    const createdAt = options.now();
    const reference = referenceDecoder.decode(options.randomBytes(REFERENCE_BYTES));
    const priceBaseUnits = toBaseUnits(tier.price, chain.decimals);
    const stored = await store.create({
      reference,
      tierId: tier.id,
      priceBaseUnits,
      decimals: chain.decimals,
      mint: settings.mint,
      recipient: settings.recipient,
      name,
      createdAt: new Date(createdAt),
      expiresAt: new Date(createdAt + settings.requestMinutes * 60_000),
    });
    if (stored === "name_not_allowed") {
      count("name_not_allowed");
      refuse(res, 422, { error: "name_not_allowed", message: PAYMENT_NAME_NOT_ALLOWED_TEXT });
      return;
    }
    const amount = formatUnits(stored.priceBaseUnits, stored.decimals);
    const created: CreatedPayment = {
      reference,
      url: transferRequestUrl({
        recipient: settings.recipient,
        amount,
        mint: settings.mint,
        reference,
        message: tier.name,
      }),
      transactionUrl: `solana:${requestOrigin(req, options.trustProxy)}${PAYMENTS_PATH}/${reference}${TRANSACTION_REQUEST_SUFFIX}`,
      recipient: settings.recipient,
      mint: settings.mint,
      amount,
      tierId: String(tier.id),
      tierName: tier.name,
      spins: tier.spins,
      expiresAt: stored.expiresAt,
      ...(options.slow() ? { slow: true } : {}),
    };
    count("created");
    logger.info(
      {
        reference,
        tierId: tier.id,
        priceBaseUnits: priceBaseUnits.toString(),
        named: name !== null,
        address: maskAddress(address),
      },
      "payment requested",
    );
    answerJson(res, 201, created);
  }

  async function status(req: IncomingMessage, res: ServerResponse, reference: string) {
    if (!statusLimiter.take(limitKey(clientAddress(req, options.trustProxy)))) {
      refuse(res, 429, { error: "rate_limited", message: "Too many status requests. Try again in a minute." });
      return;
    }
    // Not base58 of 32 bytes: no request of ours, and no query for it.
    if (!isAddress(reference)) {
      refuse(res, 404, { error: "not_found" });
      return;
    }
    const at = options.now();
    let cached = statusCache.get(reference);
    if (!cached || at - cached.at >= STATUS_CACHE_MS || at < cached.at) {
      const payment = await coalesce(`status ${reference}`, () => store.find(reference));
      cached = { body: payment ? statusBody(payment) : null, at };
      statusCache.set(reference, cached);
    }
    if (!cached.body) refuse(res, 404, { error: "not_found" });
    else answerJson(res, 200, cached.body);
  }

  async function patrons(res: ServerResponse) {
    const at = options.now();
    if (!patronsCache || at - patronsCache.at >= PATRONS_CACHE_MS || at < patronsCache.at) {
      const rows = await coalesce("patrons", () => store.patrons(settings.mint, PATRONS_LIMIT));
      patronsCache = {
        at,
        body: {
          patrons: rows.map((row) => ({
            name: row.name,
            total: formatUnits(row.totalBaseUnits, row.decimals),
            latestSignature: row.latestSignature,
            explorerUrl: explorerUrl(settings.explorerTxUrl, row.latestSignature),
          })),
        },
      };
    }
    answerJson(res, 200, patronsCache.body, { "Cache-Control": PATRONS_CACHE_CONTROL });
  }

  /** The request behind a transaction request, if it can still be paid; else the refusal is sent. */
  async function openRequest(res: ServerResponse, reference: string): Promise<StoredPayment | null> {
    // Not base58 of 32 bytes: no request of ours, and no query for it.
    const payment = isAddress(reference) ? await coalesce(`status ${reference}`, () => store.find(reference)) : null;
    if (!payment || payment.mint !== settings.mint || payment.recipient !== settings.recipient) {
      refuse(res, 404, { error: "not_found", message: "There is no such payment request." });
      return null;
    }
    if (payment.status !== "waiting") {
      refuse(res, 410, { error: "ended", message: ENDED_TEXTS[payment.status] });
      return null;
    }
    if (Date.parse(payment.expiresAt) <= options.now()) {
      refuse(res, 410, { error: "ended", message: ENDED_TEXTS.expired });
      return null;
    }
    return payment;
  }

  function rpcUnavailable(res: ServerResponse, error: RpcFault) {
    const retryAfterS =
      error.retryAfterMs === null ? RPC_RETRY_AFTER_S : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    logger.warn({ method: error.method, kind: error.kind }, "a transaction request could not reach the Solana RPC");
    refuse(
      res,
      503,
      { error: "unavailable", message: PAYMENTS_UNAVAILABLE_TEXT },
      { "Retry-After": String(retryAfterS) },
    );
  }

  async function transactionLabel(req: IncomingMessage, res: ServerResponse, reference: string) {
    if (!statusLimiter.take(limitKey(clientAddress(req, options.trustProxy)))) {
      refuse(res, 429, { error: "rate_limited", message: "Too many requests. Try again in a minute." });
      return;
    }
    if (!(await openRequest(res, reference))) return;
    const pagesOrigin = options.servesPages ? null : allowedOrigins.find((origin) => origin !== "*");
    const icon = `${pagesOrigin ?? requestOrigin(req, options.trustProxy)}${ICON_PATH}`;
    answerJson(res, 200, { label: PAYMENT_LABEL, icon } satisfies TransactionRequestLabel, {
      "Cache-Control": "no-store",
    });
  }

  async function transaction(req: IncomingMessage, res: ServerResponse, reference: string) {
    const address = clientAddress(req, options.trustProxy);
    if (!options.transactionLimiter.take(limitKey(address))) {
      req.resume();
      refuse(res, 429, { error: "rate_limited", message: "Too many requests. Try again in a few minutes." });
      return;
    }
    const body = await readJsonBody(req);
    if (!body.ok) {
      refuse(res, body.status, body.error, body.status === 413 ? { Connection: "close" } : {});
      return;
    }
    const { account } = (typeof body.value === "object" && body.value !== null ? body.value : {}) as {
      [K in keyof TransactionRequestBody]?: unknown;
    };
    if (typeof account !== "string" || !isAddress(account)) {
      refuse(res, 400, {
        error: "bad_request",
        message: 'Send {"account": "<the wallet\'s address>"}, a base58 Solana address.',
      });
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
      refuse(res, 422, { error: "own_wallet", message: "This is the shop's own wallet: pay from another." });
      return;
    }
    const { tierName, priceAmount: price } = statusBody(payment);
    const source = await buyerTokenAccount(account, settings.mint, chain);
    let accounts: Awaited<ReturnType<typeof options.chain.accounts>>;
    let lifetime: Awaited<ReturnType<typeof options.chain.latestBlockhash>>;
    try {
      [accounts, lifetime] = await Promise.all([
        options.chain.accounts([source, chain.tokenAccount]),
        options.chain.latestBlockhash(),
      ]);
    } catch (error) {
      if (error instanceof RpcFault) {
        rpcUnavailable(res, error);
        return;
      }
      throw error;
    }
    const holding = buyerHolding(accounts[0] ?? null, chain);
    if (holding.kind === "none") {
      refuse(res, 422, { error: "no_tokens", message: "This wallet holds no $ZN." });
      return;
    }
    if (holding.kind === "frozen") {
      refuse(res, 422, { error: "account_frozen", message: "This wallet's $ZN account is frozen." });
      return;
    }
    if (holding.amount < payment.priceBaseUnits) {
      refuse(res, 422, {
        error: "insufficient_tokens",
        message: `This wallet holds ${formatUnits(holding.amount, payment.decimals)} $ZN; ${tierName} costs ${price} $ZN.`,
      });
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

  /** Any origin, no credentials: a wallet fetches the transaction request from wherever it runs. */
  function transactionRoute(req: IncomingMessage, res: ServerResponse, reference: string) {
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
  }

  return (req, res, target) => {
    const { path } = target;
    if (!isPaymentsPath(path)) return false;
    if (path.endsWith(TRANSACTION_REQUEST_SUFFIX) && path.split("/").length === 4) {
      transactionRoute(req, res, path.slice(PAYMENTS_PATH.length + 1, -TRANSACTION_REQUEST_SUFFIX.length));
      return true;
    }
    const allowed = allowOrigin(req, res, allowedOrigins);
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      preflight(res, allowed);
      return true;
    }
    if (path === PAYMENTS_PATH) {
      if (method !== "POST") {
        refuseMethod(res, "POST");
      } else if (!allowed) {
        metrics.paymentRequests.inc({ outcome: "origin_not_allowed" });
        refuse(res, 403, { error: "origin_not_allowed" });
        req.resume();
      } else {
        create(req, res).catch((error: unknown) => failed(res, "a payment request", error));
      }
      return true;
    }
    if (refuseUnlessRead(req, res)) return true;
    if (path === PAYMENTS_CONFIG_PATH) {
      answerJson(res, 200, {
        enabled: true,
        available: options.available(),
        ...(options.slow() ? { slow: true } : {}),
        recipient: settings.recipient,
      } satisfies PaymentsConfigBody);
    } else if (path === PATRONS_PATH) {
      patrons(res).catch((error: unknown) => failed(res, "reading the patrons", error));
    } else {
      const reference = path.slice(PAYMENTS_PATH.length + 1);
      status(req, res, reference).catch((error: unknown) => failed(res, "reading a payment", error));
    }
    return true;
  };
}
