/**
 * Payment requests and where they stand (docs/design.md#8):
 *
 *   POST /payments             {"tierId":"2","name"?:"Nobody"} → 201 the transfer request
 *   GET  /payments/<reference> where a request stands
 *
 * Each refusal is named here, as it is sent; the tests import them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { getAddressDecoder, isAddress } from "@solana/kit";
import { LRUCache } from "lru-cache";
import { TIERS, type Tier } from "../../src/data/tiers.ts";
import { checkBidderName } from "../../src/lib/auction/bidRules.ts";
import { REFUSAL_TEXTS } from "../../src/lib/auction/refusalTexts.ts";
import {
  type CreatedPayment,
  PAYMENT_NAME_NOT_ALLOWED_TEXT,
  PAYMENTS_PATH,
  type PaymentErrorBody,
  type PaymentRequestBody,
  type PaymentStatusBody,
  TRANSACTION_REQUEST_SUFFIX,
} from "../../src/lib/payments.ts";
import { answerJson, refuseMethod } from "../http/answers.ts";
import { clientAddress, limitKey, maskAddress } from "../http/clientAddress.ts";
import { DEFAULT_CONNECTION_LIMITS } from "../http/connectionLimits.ts";
import { addressGroups, shareBudgets, shareRefusal } from "../http/fairShares.ts";
import type { NameFilter } from "../names/nameFilter.ts";
import { createRepeatedWarnings, logRepeated } from "../repeatedWarnings.ts";
import type { StoredPayment } from "../storage/payments.ts";
import { formatUnits, toBaseUnits, transferRequestUrl } from "./amounts.ts";
import {
  COMMON_REFUSALS,
  type PaymentRoutesOptions,
  type RouteShared,
  readJsonBody,
  refuse,
  refuseBody,
} from "./routeShared.ts";
import { requestOrigin } from "./transactionRequest.ts";

const REFERENCE_BYTES = 32;
/**
 * A request's status, read once for every asker within this: a page polls every 3 s while its
 * socket is closed, and a flood of the same reference costs one read a second.
 */
const STATUS_CACHE_MS = 1_000;
const STATUS_CACHE_ENTRIES = 10_000;
/** With the open-request cap reached: when to ask again. */
const BUSY_RETRY_AFTER_S = 60;

/** POST /payments's and GET /payments/<reference>'s own refusals, as they are sent. */
export const PAYMENT_REQUEST_REFUSALS = {
  notAnObject: { error: "bad_request", message: 'Send {"tierId": "1"}.' },
  tierIdNotAString: { error: "bad_request", message: "tierId must be a string." },
  unknownTier: { error: "unknown_tier", message: "There is no such tier." },
  nameNotAString: { error: "bad_request", message: "name must be a string." },
  invalidName: { error: "invalid_name", message: REFUSAL_TEXTS.invalid_name },
  nameNotAllowed: { error: "name_not_allowed", message: PAYMENT_NAME_NOT_ALLOWED_TEXT },
  rateLimited: { error: "rate_limited", message: "Too many payment requests. Try again in a few minutes." },
  busy: { error: "busy", message: "The shop is busy. Try again in a minute." },
  networkBusy: {
    error: "network_busy",
    message: "Too many payment requests are open from your network. Try again once one has ended.",
  },
  statusRateLimited: { error: "rate_limited", message: "Too many status requests. Try again in a minute." },
  notFound: { error: "not_found" },
} as const satisfies Record<string, PaymentErrorBody>;

type Refused = { ok: false; status: number; error: PaymentErrorBody };
type ParsedRequest = { ok: true; tier: Tier; name: string | null } | Refused;

/** A request made, or why not: the status, the body and headers (Retry-After) of the refusal. */
export type OpenedRequest = { ok: true; payment: StoredPayment } | (Refused & { headers?: Record<string, string> });

/**
 * A patron's name as every name is checked: blank is anonymous (null); else the bidder name's rules
 * (bidRules.ts) and the name filter, refused 422 as POST /payments refuses it.
 */
export function checkPatronName(name: string, nameFilter: NameFilter): { ok: true; name: string | null } | Refused {
  if (name.trim() === "") return { ok: true, name: null };
  const checked = checkBidderName(name);
  if (!checked.ok) return { ok: false, status: 422, error: PAYMENT_REQUEST_REFUSALS.invalidName };
  if (!nameFilter(checked.value).allowed) {
    return { ok: false, status: 422, error: PAYMENT_REQUEST_REFUSALS.nameNotAllowed };
  }
  return { ok: true, name: checked.value };
}

function parseRequest(value: unknown, nameFilter: NameFilter): ParsedRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, status: 400, error: PAYMENT_REQUEST_REFUSALS.notAnObject };
  }
  const { tierId, name } = value as { [K in keyof PaymentRequestBody]?: unknown };
  if (typeof tierId !== "string") {
    return { ok: false, status: 400, error: PAYMENT_REQUEST_REFUSALS.tierIdNotAString };
  }
  const tier = TIERS.find((candidate) => String(candidate.id) === tierId);
  if (!tier) return { ok: false, status: 422, error: PAYMENT_REQUEST_REFUSALS.unknownTier };
  if (name !== undefined && name !== null && typeof name !== "string") {
    return { ok: false, status: 400, error: PAYMENT_REQUEST_REFUSALS.nameNotAString };
  }
  if (typeof name !== "string") return { ok: true, tier, name: null };
  const checked = checkPatronName(name, nameFilter);
  return checked.ok ? { ok: true, tier, name: checked.name } : checked;
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
  "network_busy",
  "unavailable",
] as const;

type RequestRoutesOptions = Pick<
  PaymentRoutesOptions,
  | "settings"
  | "store"
  | "trustProxy"
  | "trustedProxies"
  | "networkSharePercent"
  | "chainInfo"
  | "available"
  | "nameFilter"
  | "rateLimiter"
  | "statusLimiter"
  | "slow"
  | "logger"
  | "metrics"
  | "now"
  | "randomBytes"
>;

export interface RequestRoutes {
  /** /payments: a POST from an allowed origin makes a request. */
  request(req: IncomingMessage, res: ServerResponse, allowed: boolean): void;
  /** GET /payments/<reference>. */
  status(req: IncomingMessage, res: ServerResponse, reference: string): void;
  /** Makes a request for this client as POST /payments does, within the same limits and cap. */
  open(req: IncomingMessage, tier: Tier, name: string | null): Promise<OpenedRequest>;
}

export function createRequestRoutes(options: RequestRoutesOptions, shared: RouteShared): RequestRoutes {
  const { settings, store, logger, metrics, nameFilter, rateLimiter, statusLimiter } = options;
  const { coalesce, failed } = shared;
  for (const outcome of REQUEST_OUTCOMES) metrics.paymentRequests.inc({ outcome }, 0);
  const referenceDecoder = getAddressDecoder();
  // A client holds no more open requests than it may ask for in a window.
  const openRequestShares = shareBudgets({
    capacity: settings.maxOpenRequests,
    perClient: settings.rateLimit,
    wideShare: (options.networkSharePercent ?? DEFAULT_CONNECTION_LIMITS.networkSharePercent) / 100,
  });
  const networkRefusals = createRepeatedWarnings({ now: performance.now.bind(performance) });
  // The share check and the insert, one request at a time in this instance, so that requests
  // asked at once cannot all pass the check; another instance may add at most its own one.
  let creating: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(task: () => Promise<T>): Promise<T> => {
    const run = creating.then(task);
    creating = run.catch(() => {});
    return run;
  };
  const statusCache = new LRUCache<string, { body: PaymentStatusBody | null; at: number }>({
    max: STATUS_CACHE_ENTRIES,
  });

  /**
   * A payment request for `tier` made for this client, within its limits: the rate limit, the
   * open-request cap and its network's fair share; counted and logged. POST /payments and the
   * Actions POST (service/actions/) both make theirs here.
   */
  async function open(req: IncomingMessage, tier: Tier, name: string | null): Promise<OpenedRequest> {
    const count = (outcome: string) => metrics.paymentRequests.inc({ outcome });
    const chain = options.chainInfo();
    if (!chain || !options.available()) {
      count("unavailable");
      return { ok: false, status: 503, error: COMMON_REFUSALS.unavailable };
    }
    const address = clientAddress(req, options.trustProxy, options.trustedProxies);
    if (!rateLimiter.take(limitKey(address))) {
      count("rate_limited");
      return { ok: false, status: 429, error: PAYMENT_REQUEST_REFUSALS.rateLimited };
    }
    const networks = addressGroups(address);
    const outcome = await oneAtATime(async () => {
      // Fair shares of the open requests (http/fairShares.ts): a network never holds more than its
      // share, and the last of the cap is kept for networks holding little. Counted up to the cap
      // only: a flood never makes this read slower than the cap's rows.
      const held = await store.heldWaiting(networks, settings.maxOpenRequests);
      const refusal = shareRefusal(openRequestShares, held);
      if (refusal) return { refusal, held } as const;
      const createdAt = options.now();
      const reference = referenceDecoder.decode(options.randomBytes(REFERENCE_BYTES));
      const stored = await store.create({
        reference,
        tierId: tier.id,
        priceBaseUnits: toBaseUnits(tier.price, chain.decimals),
        decimals: chain.decimals,
        mint: settings.mint,
        recipient: settings.recipient,
        name,
        createdAt: new Date(createdAt),
        expiresAt: new Date(createdAt + settings.requestMinutes * 60_000),
        networks,
      });
      return { stored, reference } as const;
    });
    const retryAfter = { "Retry-After": String(BUSY_RETRY_AFTER_S) };
    if ("refusal" in outcome) {
      const { refusal, held } = outcome;
      if (refusal === "full") {
        count("busy");
        logRepeated(
          logger,
          "warn",
          { cap: settings.maxOpenRequests },
          "payment request refused: the open-request cap is reached",
        );
        return { ok: false, status: 503, error: PAYMENT_REQUEST_REFUSALS.busy, headers: retryAfter };
      }
      count("network_busy");
      networkRefusals.note(`${refusal} ${networks.wide ?? networks.client}`, (repeated) =>
        logger.warn(
          { network: maskAddress(networks.wide ?? networks.client), share: refusal, held, repeated },
          "payment request refused: its network holds its share of the open requests",
        ),
      );
      return { ok: false, status: 429, error: PAYMENT_REQUEST_REFUSALS.networkBusy, headers: retryAfter };
    }
    const { stored, reference } = outcome;
    if (stored === "name_not_allowed") {
      count("name_not_allowed");
      return { ok: false, status: 422, error: PAYMENT_REQUEST_REFUSALS.nameNotAllowed };
    }
    count("created");
    logger.info(
      {
        reference,
        tierId: tier.id,
        priceBaseUnits: stored.priceBaseUnits.toString(),
        named: name !== null,
        address: maskAddress(address),
      },
      "payment requested",
    );
    return { ok: true, payment: stored };
  }

  async function create(req: IncomingMessage, res: ServerResponse) {
    const count = (outcome: string) => metrics.paymentRequests.inc({ outcome });
    const body = await readJsonBody(req);
    if (!body.ok) {
      count(body.error.error);
      refuseBody(res, body);
      return;
    }
    const parsed = parseRequest(body.value, nameFilter);
    if (!parsed.ok) {
      count(parsed.error.error);
      refuse(res, parsed.status, parsed.error);
      return;
    }
    const { tier } = parsed;
    const opened = await open(req, tier, parsed.name);
    if (!opened.ok) {
      refuse(res, opened.status, opened.error, opened.headers);
      return;
    }
    const { payment } = opened;
    const { reference } = payment;
    const amount = formatUnits(payment.priceBaseUnits, payment.decimals);
    const created: CreatedPayment = {
      reference,
      url: transferRequestUrl({
        recipient: settings.recipient,
        amount,
        mint: settings.mint,
        reference,
        message: tier.name,
      }),
      transactionUrl: `solana:${requestOrigin(req, options.trustProxy, options.trustedProxies)}${PAYMENTS_PATH}/${reference}${TRANSACTION_REQUEST_SUFFIX}`,
      recipient: settings.recipient,
      mint: settings.mint,
      amount,
      tierId: String(tier.id),
      tierName: tier.name,
      spins: tier.spins,
      expiresAt: payment.expiresAt,
      ...(options.slow() ? { slow: true } : {}),
    };
    answerJson(res, 201, created);
  }

  async function answerStatus(req: IncomingMessage, res: ServerResponse, reference: string) {
    if (!statusLimiter.take(limitKey(clientAddress(req, options.trustProxy, options.trustedProxies)))) {
      refuse(res, 429, PAYMENT_REQUEST_REFUSALS.statusRateLimited);
      return;
    }
    // Not base58 of 32 bytes: no request of ours, and no query for it.
    if (!isAddress(reference)) {
      refuse(res, 404, PAYMENT_REQUEST_REFUSALS.notFound);
      return;
    }
    const at = options.now();
    let cached = statusCache.get(reference);
    if (!cached || at - cached.at >= STATUS_CACHE_MS || at < cached.at) {
      const payment = await coalesce(`status ${reference}`, () => store.find(reference));
      cached = { body: payment ? statusBody(payment) : null, at };
      statusCache.set(reference, cached);
    }
    if (!cached.body) refuse(res, 404, PAYMENT_REQUEST_REFUSALS.notFound);
    else answerJson(res, 200, cached.body);
  }

  return {
    request(req, res, allowed) {
      if (req.method !== "POST") {
        refuseMethod(res, "POST");
      } else if (!allowed) {
        metrics.paymentRequests.inc({ outcome: "origin_not_allowed" });
        refuse(res, 403, COMMON_REFUSALS.originNotAllowed);
        req.resume();
      } else {
        create(req, res).catch((error: unknown) => failed(res, "a payment request", error));
      }
    },
    status(req, res, reference) {
      answerStatus(req, res, reference).catch((error: unknown) => failed(res, "reading a payment", error));
    },
    open,
  };
}
