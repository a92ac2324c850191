/**
 * The operator console's door (docs/design.md#6a): the sign-in page at /admin, the session cookie, the
 * sign-out, and the rules every /admin route follows. Absent unless ADMIN_PASSWORD_HASH is set
 * (then /admin is the site's 404 like any unknown path).
 *
 * - Sign in: POST /admin/login with the password; a wrong one answers 401 "Wrong password"; after
 *   5 failures from one client address (IPv6: one /64) within 15 minutes every attempt answers 429
 *   "Too many attempts" with Retry-After, before the password is even checked. Under load
 *   (docs/design.md#11): an attempt counts as a failure until its password proves right, at most 2
 *   passwords are checked at once (1 on 2 cores; 503 with Retry-After beyond), and a check that
 *   fails counts as a failure and answers 500.
 * - The session: an HttpOnly, SameSite=Strict cookie scoped to /admin for 8 hours, Secure when the
 *   request came over https (directly, or by X-Forwarded-Proto through TRUST_PROXY hops).
 * - Every POST needs a same-origin Origin (403 otherwise), every route but the sign-in page and
 *   the sign-in itself a valid session (401 otherwise).
 * - Every answer: no-store, noindex, and a policy that allows nothing but the console's own style
 *   and script (by hash), its event stream and forms posting to itself. The password is never logged.
 * - Signed in, /admin is the console (consolePage.ts) and its actions are moderation.ts's; while
 *   payments are on, the console lists the newest payments and hides or restores patrons too.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { clientAddress, forwardedEntries, limitKey, maskAddress } from "../auction/clientAddress.ts";
import type { AdminSettings } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RequestTarget } from "../requestTarget.ts";
import type { PaymentStore } from "../storage/payments.ts";
import type { BidStore } from "../storage/types.ts";
import { CONSOLE_POLICY, consolePage, messagePage, signInPage } from "./consolePage.ts";
import { readCookie, readForm } from "./forms.ts";
import { createModerationDesk, readBefore, readNotice } from "./moderation.ts";
import { verifyPassword } from "./password.ts";
import { readSession, SESSION_MS, signSession } from "./session.ts";
import { createCheckSlots, createFailureLog } from "./signInLimits.ts";

const SESSION_COOKIE = "nothing_admin";
const MAX_FORM_BYTES = 4096;
/** A check takes about a quarter of a second: a slot is likely free again within one. */
const BUSY_RETRY_AFTER_SECONDS = 1;
/** Bids per console page. */
const CONSOLE_PAGE_SIZE = 50;
/** Payments the console lists, newest first (docs/design.md#8). */
const CONSOLE_PAYMENTS = 50;

const HEADERS = {
  "Content-Security-Policy": CONSOLE_POLICY,
  "Cache-Control": "no-store",
  "X-Robots-Tag": "noindex, nofollow",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

export interface AdminConsoleOptions {
  admin: AdminSettings;
  trustProxy: number;
  logger: Logger;
  metrics: Metrics;
  store: BidStore;
  /** While payments are on: their store and the explorer's transaction page for the list. */
  payments?: { store: PaymentStore; explorerTxUrl: string } | undefined;
}

/** `path` as RequestTarget gives it (parsed once by the server, docs/design.md#11). */
export function isAdminPath(path: string): boolean {
  return path === "/admin" || path.startsWith("/admin/");
}

/** The /admin routes: the handler answers every request whose path isAdminPath. */
export function createAdminConsole({ admin, trustProxy, logger, metrics, store, payments }: AdminConsoleOptions) {
  const now = Date.now;
  // This instance's count: behind a load balancer an address gets its attempts per instance.
  const failures = createFailureLog({ maxTrackedAddresses: admin.signIn?.maxTrackedAddresses });
  const checks = createCheckSlots(admin.signIn?.maxConcurrentChecks);
  metrics.signInLimit.trackedAddresses = () => failures.size;
  const moderation = createModerationDesk({
    store,
    logger,
    metrics,
    headers: HEADERS,
    now,
    payments: payments?.store,
  });

  /** https directly, or as the outermost trusted proxy reports it. */
  function overHttps(req: IncomingMessage): boolean {
    if ((req.socket as { encrypted?: boolean }).encrypted) return true;
    if (trustProxy === 0) return false;
    // As for the client's address: read no further left than the trusted hops.
    const hops = forwardedEntries(req, "x-forwarded-proto");
    return hops[Math.max(0, hops.length - trustProxy)] === "https";
  }

  function sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    const host = req.headers.host;
    return Boolean(origin && host) && origin === `${overHttps(req) ? "https" : "http"}://${host}`;
  }

  function send(res: ServerResponse, status: number, html: string, extra: Record<string, string | number> = {}) {
    res.writeHead(status, { ...HEADERS, "Content-Type": "text/html; charset=utf-8", ...extra }).end(html);
  }

  function sessionCookie(req: IncomingMessage, value: string, maxAgeSeconds: number): string {
    const secure = overHttps(req) ? "; Secure" : "";
    return `${SESSION_COOKIE}=${value}; Path=/admin; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
  }

  function tooManyAttempts(res: ServerResponse, waitMs: number) {
    metrics.adminSignInsRefused.inc({ reason: "limited" });
    send(res, 429, signInPage("Too many attempts"), { "Retry-After": Math.ceil(waitMs / 1000) });
  }

  async function signIn(req: IncomingMessage, res: ServerResponse) {
    const key = limitKey(clientAddress(req, trustProxy));
    const client = maskAddress(key);
    // Refused before the form is even read; the reservation below decides for real.
    const waitMs = failures.waitMs(key);
    if (waitMs > 0) {
      tooManyAttempts(res, waitMs);
      return;
    }
    const form = await readForm(req, MAX_FORM_BYTES);
    if (!form) {
      send(res, 413, signInPage("That form was too large."));
      return;
    }
    // Counted as a failure from here until the password proves right, in the same turn as the
    // check of the count: attempts sent at once cannot all pass it.
    const attempt = failures.reserve(key);
    if (!attempt.ok) {
      tooManyAttempts(res, attempt.waitMs);
      return;
    }
    const freeSlot = checks.tryTake();
    if (!freeSlot) {
      // No password was checked, so nothing was guessed: not a failure.
      attempt.forget();
      metrics.adminSignInsRefused.inc({ reason: "busy" });
      send(res, 503, signInPage("Too many sign-ins are being checked right now. Try again in a moment."), {
        "Retry-After": BUSY_RETRY_AFTER_SECONDS,
      });
      return;
    }
    let right: boolean;
    try {
      right = await verifyPassword(form.get("password") ?? "", admin.passwordHash);
    } catch (error) {
      // The attempt stays counted: a check that fails must not be a free guess.
      metrics.adminSignInsRefused.inc({ reason: "error" });
      logger.error({ err: error, client }, "an operator password could not be checked");
      send(res, 500, signInPage("The password could not be checked. Try again later."));
      return;
    } finally {
      freeSlot();
    }
    if (!right) {
      metrics.adminLoginFailures.inc();
      logger.warn({ client }, "operator sign-in failed");
      send(res, 401, signInPage("Wrong password"));
      return;
    }
    attempt.forget();
    const { session, token } = signSession(admin.sessionSecret, now());
    logger.info({ session: session.id, client }, "operator signed in");
    res
      .writeHead(303, { ...HEADERS, Location: "/admin", "Set-Cookie": sessionCookie(req, token, SESSION_MS / 1000) })
      .end();
  }

  return async function handleAdmin(
    req: IncomingMessage,
    res: ServerResponse,
    { path, query }: RequestTarget,
  ): Promise<void> {
    const session = readSession(admin.sessionSecret, readCookie(req, SESSION_COOKIE), now());
    const route = `${req.method} ${path.replace(/\/$/, "") || "/"}`;

    if ((route === "GET /admin" || route === "HEAD /admin") && !session) {
      send(res, 200, signInPage());
    } else if (route === "GET /admin" || route === "HEAD /admin") {
      const before = readBefore(query.get("before"));
      const [view, latest] = await Promise.all([
        store.moderationView(before, CONSOLE_PAGE_SIZE),
        payments?.store.latest(CONSOLE_PAYMENTS),
      ]);
      const paymentList = payments && latest ? { latest, explorerTxUrl: payments.explorerTxUrl } : null;
      send(res, 200, consolePage({ view, before, notice: readNotice(query), payments: paymentList }));
    } else if (req.method === "POST" && !sameOrigin(req) && (path === "/admin/login" || session)) {
      send(res, 403, messagePage("Refused: this form was not sent from this console."));
    } else if (route === "POST /admin/login") {
      await signIn(req, res);
    } else if (!session) {
      send(res, 401, signInPage());
    } else if (route === "POST /admin/logout") {
      logger.info({ session: session.id }, "operator signed out");
      res.writeHead(303, { ...HEADERS, Location: "/admin", "Set-Cookie": sessionCookie(req, "", 0) }).end();
    } else if (route === "GET /admin/events") {
      moderation.streamChanges(res, session);
    } else if (req.method === "POST" && (await moderation.handle(req, res, path, session))) {
      // Answered: a redirect back to the console with what the action did.
    } else {
      send(res, 404, messagePage("Nothing here."));
    }
  };
}
