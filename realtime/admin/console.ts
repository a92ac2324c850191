/**
 * The operator console's door (DESIGN.md 6a): the sign-in page at /admin, the session cookie, the
 * sign-out, and the rules every /admin route follows. Absent unless ADMIN_PASSWORD_HASH is set
 * (then /admin is the site's 404 like any unknown path).
 *
 * - Sign in: POST /admin/login with the password; a wrong one answers 401 "Wrong password"; after
 *   5 failures from one client address within 15 minutes every attempt answers 429 "Too many
 *   attempts" with Retry-After, before the password is even checked.
 * - The session: an HttpOnly, SameSite=Strict cookie scoped to /admin for 8 hours, Secure when the
 *   request came over https (directly, or by X-Forwarded-Proto through TRUST_PROXY hops).
 * - Every POST needs a same-origin Origin (403 otherwise), every route but the sign-in page and
 *   the sign-in itself a valid session (401 otherwise).
 * - Every answer: no-store, noindex, and a policy that allows nothing but the console's own style
 *   and script (by hash), its event stream and forms posting to itself. The password is never logged.
 * - Signed in, /admin is the console (consolePage.ts) and its actions are moderation.ts's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { clientAddress, forwardedEntries, maskAddress } from "../auction/clientAddress.ts";
import type { ServiceConfig } from "../config.ts";
import type { PasswordHash } from "../passwordHash.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { BidStore } from "../storage/types.ts";
import { CONSOLE_POLICY, consolePage, messagePage, signInPage } from "./consolePage.ts";
import { readCookie, readForm } from "./forms.ts";
import { createModerationDesk, readBefore, readNotice } from "./moderation.ts";
import { verifyPassword } from "./password.ts";
import { readSession, SESSION_MS, signSession } from "./session.ts";

const SESSION_COOKIE = "nothing_admin";
const MAX_FAILURES = 5;
const FAILURE_WINDOW_MS = 15 * 60 * 1000;
const MAX_FORM_BYTES = 4096;
const MAX_TRACKED_ADDRESSES = 10_000;
/** Bids per console page. */
const CONSOLE_PAGE_SIZE = 50;

const HEADERS = {
  "Content-Security-Policy": CONSOLE_POLICY,
  "Cache-Control": "no-store",
  "X-Robots-Tag": "noindex, nofollow",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

/** Failed sign-ins per client address in the last 15 minutes (this instance's count). */
function createFailureLog(now: () => number) {
  const failures = new Map<string, number[]>();
  const recent = (address: string) => (failures.get(address) ?? []).filter((at) => at > now() - FAILURE_WINDOW_MS);
  return {
    /** Milliseconds until the address may try again; 0 when it may now. */
    waitMs(address: string): number {
      const times = recent(address);
      failures.set(address, times);
      if (times.length < MAX_FAILURES) return 0;
      return (times[times.length - MAX_FAILURES] as number) + FAILURE_WINDOW_MS - now();
    },
    record(address: string) {
      failures.set(address, [...recent(address), now()]);
      // Addresses whose failures have all left the window are forgotten, so the map stays small.
      if (failures.size > MAX_TRACKED_ADDRESSES) {
        for (const key of failures.keys()) if (recent(key).length === 0) failures.delete(key);
      }
    },
  };
}

export interface AdminConsoleOptions {
  admin: NonNullable<ServiceConfig["admin"]>;
  trustProxy: number;
  logger: Logger;
  metrics: Metrics;
  store: BidStore;
}

export function isAdminPath(url: string | undefined): boolean {
  const path = new URL(url ?? "/", "http://localhost").pathname;
  return path === "/admin" || path.startsWith("/admin/");
}

/** The /admin routes: the handler answers every request whose path isAdminPath. */
export function createAdminConsole({ admin, trustProxy, logger, metrics, store }: AdminConsoleOptions) {
  const now = Date.now;
  const failures = createFailureLog(now);
  const passwordHash: PasswordHash = admin.passwordHash;
  const moderation = createModerationDesk({ store, logger, metrics, headers: HEADERS, now });

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

  async function signIn(req: IncomingMessage, res: ServerResponse) {
    const address = clientAddress(req, trustProxy);
    const waitMs = failures.waitMs(address);
    if (waitMs > 0) {
      send(res, 429, signInPage("Too many attempts"), { "Retry-After": Math.ceil(waitMs / 1000) });
      return;
    }
    const form = await readForm(req, MAX_FORM_BYTES);
    if (!form) {
      send(res, 413, signInPage("That form was too large."));
      return;
    }
    if (!(await verifyPassword(form.get("password") ?? "", passwordHash))) {
      failures.record(address);
      metrics.adminLoginFailures.inc();
      logger.warn({ client: maskAddress(address) }, "operator sign-in failed");
      send(res, 401, signInPage("Wrong password"));
      return;
    }
    const { session, token } = signSession(admin.sessionSecret, now());
    logger.info({ session: session.id, client: maskAddress(address) }, "operator signed in");
    res
      .writeHead(303, { ...HEADERS, Location: "/admin", "Set-Cookie": sessionCookie(req, token, SESSION_MS / 1000) })
      .end();
  }

  return async function handleAdmin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const session = readSession(admin.sessionSecret, readCookie(req, SESSION_COOKIE), now());
    const route = `${req.method} ${path.replace(/\/$/, "") || "/"}`;

    const query = new URL(req.url ?? "/", "http://localhost").searchParams;

    if ((route === "GET /admin" || route === "HEAD /admin") && !session) {
      send(res, 200, signInPage());
    } else if (route === "GET /admin" || route === "HEAD /admin") {
      const before = readBefore(query.get("before"));
      const view = await store.moderationView(before, CONSOLE_PAGE_SIZE);
      send(res, 200, consolePage({ view, before, notice: readNotice(query) }));
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
