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
 * - Every answer: no-store, noindex, and a policy that allows nothing but this page's own style
 *   and forms posting to itself. The password is never logged.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { clientAddress, forwardedEntries, maskAddress } from "../auction/clientAddress.ts";
import type { ServiceConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { type PasswordHash, verifyPassword } from "./password.ts";
import { readSession, SESSION_MS, signSession } from "./session.ts";

const SESSION_COOKIE = "nothing_admin";
const MAX_FAILURES = 5;
const FAILURE_WINDOW_MS = 15 * 60 * 1000;
const MAX_FORM_BYTES = 4096;
const MAX_TRACKED_ADDRESSES = 10_000;

// The browser's own light or dark colours: the store's palette lives in uno.config.ts, which the
// service (and its container) does not load.
const STYLE = `:root{color-scheme:light dark}body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
label,input,button{display:block;font:inherit}input{margin:.5rem 0 1rem;padding:.5rem;width:100%;box-sizing:border-box}
button{padding:.5rem 1rem;min-height:2.75rem}[role=alert]{font-weight:bold}`;
const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`;

const HEADERS = {
  "Content-Security-Policy": `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  "Cache-Control": "no-store",
  "X-Robots-Tag": "noindex, nofollow",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

function page(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>Operator console · The Nothing Store</title><style>${STYLE}</style></head><body><main><h1>Operator console</h1>${body}</main></body></html>`;
}

function signInPage(problem?: string): string {
  const alert = problem ? `<p role="alert">${problem}</p>` : "";
  return page(
    `${alert}<form method="post" action="/admin/login"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus><button type="submit">Sign in</button></form>`,
  );
}

const SIGNED_IN_PAGE = page(
  `<p>Signed in.</p><form method="post" action="/admin/logout"><button type="submit">Sign out</button></form>`,
);

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

function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > MAX_FORM_BYTES) return null;
  }
  return new URLSearchParams(body);
}

export interface AdminConsoleOptions {
  admin: NonNullable<ServiceConfig["admin"]>;
  trustProxy: number;
  logger: Logger;
  metrics: Metrics;
}

export function isAdminPath(url: string | undefined): boolean {
  const path = new URL(url ?? "/", "http://localhost").pathname;
  return path === "/admin" || path.startsWith("/admin/");
}

/** The /admin routes: the handler answers every request whose path isAdminPath. */
export function createAdminConsole({ admin, trustProxy, logger, metrics }: AdminConsoleOptions) {
  const now = Date.now;
  const failures = createFailureLog(now);
  const passwordHash: PasswordHash = admin.passwordHash;

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
    const form = await readForm(req);
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

    if (route === "GET /admin" || route === "HEAD /admin") {
      send(res, 200, session ? SIGNED_IN_PAGE : signInPage());
    } else if (req.method === "POST" && !sameOrigin(req) && (path === "/admin/login" || session)) {
      send(res, 403, page("<p>Refused: this form was not sent from this console.</p>"));
    } else if (route === "POST /admin/login") {
      await signIn(req, res);
    } else if (!session) {
      send(res, 401, signInPage());
    } else if (route === "POST /admin/logout") {
      logger.info({ session: session.id }, "operator signed out");
      res.writeHead(303, { ...HEADERS, Location: "/admin", "Set-Cookie": sessionCookie(req, "", 0) }).end();
    } else {
      send(res, 404, page("<p>Nothing here.</p>"));
    }
  };
}
