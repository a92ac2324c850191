/**
 * What the payment route families share (docs/design.md#8): the options they are built from, CORS
 * for the pages' origins and its preflight, a JSON body read within its limit, one read per key
 * at a time, and the refusals common to every family.
 *
 * The pages may be on another origin (docs/design.md#6d): every answer carries CORS for the
 * origins whose pages may open the socket (ALLOWED_ORIGINS, else the same origin), as
 * /auction/winners does, and a POST from any other origin is refused, as the socket refuses it.
 * The transaction request is the exception (transactionRequestRoutes.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PAYMENTS_UNAVAILABLE_TEXT, type PaymentErrorBody } from "../../src/lib/payments.ts";
import { type Coalesce, createCoalescer } from "../coalescedReads.ts";
import { answerJson } from "../http/answers.ts";
import { isOriginAllowed } from "../http/originPolicy.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { NameFilter } from "../names/nameFilter.ts";
import { visitorUnanswered } from "../repeatedWarnings.ts";
import type { PaymentStore } from "../storage/payments.ts";
import { StoreUnavailableError } from "../storage/types.ts";
import type { ChainInfo } from "./chain.ts";
import type { RequestReads } from "./requestReads.ts";
import type { PaymentSettings } from "./settings.ts";

/** A request body is a tier id and a name of at most 40 characters: 2 KiB is plenty. */
const MAX_BODY_BYTES = 2048;
export const PREFLIGHT_MAX_AGE_S = 600;

/** Answers the request when its path is a payments path (the target parsed once by server.ts); false leaves it to others. */
export type PaymentRoute = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => boolean;

export interface PaymentRoutesOptions {
  /** As ServiceConfig.allowedOrigins: empty is same origin only, `*` any. */
  allowedOrigins: readonly string[];
  settings: PaymentSettings;
  store: PaymentStore;
  trustProxy: number;
  /** The proxies believed (TRUSTED_PROXIES); unset, loopback. */
  trustedProxies?: readonly string[] | undefined;
  /** The share of the open requests an IPv6 /48 or IPv4 /24 may hold, in percent (http/fairShares.ts). */
  networkSharePercent?: number;
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
  /** What a transaction request reads of the chain (the buyer's and the store's token accounts, a blockhash), shared and budgeted. */
  reads: RequestReads;
  /** POST /payments/<reference>/transaction, per client as above. */
  transactionLimiter: RateLimiter;
  /** The service serves the built pages (STATIC_DIR set): the icon is on its own origin, else on the pages'. */
  servesPages: boolean;
  logger: Logger;
  metrics: Metrics;
  now(): number;
  randomBytes(length: number): Uint8Array;
}

/** The refusals of more than one family, as they are sent. */
export const COMMON_REFUSALS = {
  unsupportedMediaType: { error: "unsupported_media_type", message: "Send JSON." },
  tooLarge: { error: "too_large", message: "The request is too large." },
  notJson: { error: "bad_request", message: "The request is not JSON." },
  unreadable: { error: "bad_request", message: "The request could not be read." },
  originNotAllowed: { error: "origin_not_allowed" },
  unavailable: { error: "unavailable", message: PAYMENTS_UNAVAILABLE_TEXT },
} as const satisfies Record<string, PaymentErrorBody>;

export function refuse(
  res: ServerResponse,
  status: number,
  body: PaymentErrorBody,
  headers: Record<string, string> = {},
) {
  answerJson(res, status, body, headers);
}

/** CORS as /auction/winners answers it; true when the request's origin may use the routes. */
export function allowOrigin(req: IncomingMessage, res: ServerResponse, allowedOrigins: readonly string[]): boolean {
  res.setHeader("Vary", "Origin");
  const allowed = isOriginAllowed(req, allowedOrigins);
  if (allowed && req.headers.origin !== undefined) res.setHeader("Access-Control-Allow-Origin", req.headers.origin);
  return allowed;
}

export function preflight(res: ServerResponse, allowed: boolean) {
  if (!allowed) {
    refuse(res, 403, COMMON_REFUSALS.originNotAllowed);
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

type BodyRefusal = { ok: false; status: number; error: PaymentErrorBody };
type Body = { ok: true; value: unknown } | BodyRefusal;

export function readJsonBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") {
      resolve({ ok: false, status: 415, error: COMMON_REFUSALS.unsupportedMediaType });
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
        resolve({ ok: false, status: 413, error: COMMON_REFUSALS.tooLarge });
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
        resolve({ ok: false, status: 400, error: COMMON_REFUSALS.notJson });
      }
    });
    req.on("error", () => {
      if (done) return;
      done = true;
      resolve({ ok: false, status: 400, error: COMMON_REFUSALS.unreadable });
    });
  });
}

/** A body that could not be read; a too large one closes the connection, the rest of it unread. */
export function refuseBody(res: ServerResponse, body: BodyRefusal) {
  refuse(res, body.status, body.error, body.status === 413 ? { Connection: "close" } : {});
}

/** What one service's families hold together: a read of a request or of the patrons is shared by its askers. */
export interface RouteShared {
  coalesce: Coalesce;
  unavailable(res: ServerResponse): void;
  /** A read or write that threw: logged, and answered 503 unless an answer has started. */
  failed(res: ServerResponse, what: string, error: unknown): void;
}

export function createRouteShared(logger: Logger): RouteShared {
  function unavailable(res: ServerResponse) {
    refuse(res, 503, COMMON_REFUSALS.unavailable);
  }
  return {
    coalesce: createCoalescer(),
    unavailable,
    failed(res, what, error) {
      if (!(error instanceof StoreUnavailableError)) logger.error({ err: error }, `${what} failed`);
      else visitorUnanswered(logger, what, loggedError(error));
      if (!res.headersSent) unavailable(res);
    },
  };
}
