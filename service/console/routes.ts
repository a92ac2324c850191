/**
 * The operator console's door (docs/design.md#6a, docs/design.md#9): the sign-in page at /admin,
 * the session cookie, the sign-outs, and the rules every /admin route follows. Absent unless
 * ADMIN_PASSWORD_HASH is set (then /admin is the site's 404 like any unknown path).
 *
 * - Sign in: POST /admin/login with the password; a wrong one answers 401 "Wrong password". The
 *   failures are counted in the database, for every instance together: after 5 from one client
 *   address (IPv6: one /64), 10 from one IPv6 /56 or 20 from one IPv6 /48 or IPv4 /24 within 15
 *   minutes every attempt from there answers 429 "Too many attempts" with Retry-After, before the
 *   password is even checked; after 20 from any addresses, each network counting 5 at most, every
 *   attempt is held back before its check (1 s doubling to 60 s, one at a time across instances),
 *   and one whose turn would be further off answers 503 with Retry-After. Under load
 *   (docs/design.md#11): an attempt counts as a failure until its password proves right, at most 2
 *   passwords are checked at once (1 on 2 cores; when they are taken, an attempt from a network
 *   with none in flight waits up to a second for the next, others answer 503 with Retry-After), and
 *   a check that fails counts as a failure and answers 500.
 * - Devices (device.ts): every sign-in also sets a device cookie, HttpOnly, SameSite=Strict, Secure
 *   as the session's, for a year. An attempt carrying one that holds skips the address's and the
 *   console's limits, which strangers guessing from many addresses would keep it behind, and has a
 *   check slot kept for it. After 5 failures of its own within 15 minutes the cookie is ignored:
 *   the attempt is a stranger's, under the address's and the console's limits, never worse off.
 *   A signing-in browser gets a new cookie, the one it sent revoked. "Sign out" keeps the device;
 *   "Sign out everywhere" revokes every device, a new ADMIN_PASSWORD_HASH or secret unsigns them all.
 * - The session: a row in the database and an HttpOnly, SameSite=Strict cookie scoped to /admin for
 *   8 hours, Secure when the request came over https (directly, or by X-Forwarded-Proto through
 *   TRUST_PROXY hops). A cookie opens the console only while its signature holds and its row is
 *   neither revoked nor expired, read from the database on every request (no copy is kept here).
 *   Its key, like the device's, derives from the secret and the password's hash: an instance
 *   restarted with a new ADMIN_PASSWORD_HASH or secret refuses every session signed before.
 *   "Sign out" revokes the session, "Sign out everywhere" every session, on every instance at once.
 * - Every POST needs a same-origin Origin (403 otherwise), every route but the sign-in page and
 *   the sign-in itself a live session (401 otherwise).
 * - Every answer: no-store, noindex, and a policy that allows nothing but the console's own style
 *   and script (by hash), its event stream and forms posting to itself. The password is never logged.
 * - Signed in, /admin is the console (consolePage.ts) and its actions are moderation.ts's; while
 *   payments are on, the console lists the newest payments and hides or restores patrons too.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { AdminSettings } from "../config.ts";
import { clientAddress, limitKey, maskAddress, overHttps } from "../http/clientAddress.ts";
import { type AddressGroups, addressGroups } from "../http/fairShares.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { visitorUnanswered } from "../repeatedWarnings.ts";
import type { PaymentStore } from "../storage/payments.ts";
import { type BidStore, StoreUnavailableError } from "../storage/types.ts";
import { DEVICE_MS, deviceKey, deviceToken, newDeviceId, readDevice } from "./device.ts";
import { readCookie, readForm } from "./forms.ts";
import { createModerationDesk, readBefore, readNotice } from "./moderation.ts";
import { CONSOLE_POLICY, consolePage, messagePage, signInPage } from "./page.ts";
import { verifyPassword } from "./password.ts";
import { createPulse, pulseSection } from "./pulse.ts";
import { newSessionId, readSession, SESSION_MS, type Session, sessionKey, sessionToken } from "./session.ts";
import {
  createCheckSlots,
  createRefusalMemo,
  DEVICE_POLICY,
  FAILURE_WINDOW_MS,
  SIGN_IN_POLICY,
} from "./signInLimits.ts";

const SESSION_COOKIE = "nothing_admin";
const DEVICE_COOKIE = "nothing_admin_device";
/** The refusal memo's key for a locked device: apart from every client address's. */
const lockedDeviceKey = (device: string) => `device ${device}`;
const MAX_FORM_BYTES = 4096;
/** A check takes about a quarter of a second: a slot is likely free again within one. */
const BUSY_RETRY_AFTER_SECONDS = 1;
/** The database may be back within seconds (a restart, a fail-over). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
/** The answers to an attempt the failures refuse: this address's (429), or the console's (503). */
const REFUSALS = {
  limited: { status: 429, problem: "Too many attempts" },
  throttled: { status: 503, problem: "Sign-ins are slowed down after many wrong passwords. Try again in a minute." },
} as const;
/** Where "Sign out everywhere" lands: the sign-in page, saying what was done. */
const SIGNED_OUT_EVERYWHERE = "/admin?done=signed_out_everywhere";
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
  /** The proxies believed (TRUSTED_PROXIES); unset, loopback. */
  trustedProxies?: readonly string[] | undefined;
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

/**
 * Whether a form's Origin names this console's host but another port: the Host a proxy passed on
 * lost the port the browser used (nginx's $host drops it), or names the proxy's upstream port.
 */
function differsOnlyByPort(origin: string | null, expected: string | null): boolean {
  if (origin === null || expected === null) return false;
  try {
    const [given, own] = [new URL(origin), new URL(expected)];
    const port = (url: URL) => url.port || (url.protocol === "https:" ? "443" : "80");
    return given.hostname === own.hostname && port(given) !== port(own);
  } catch {
    return false;
  }
}

/** The /admin routes: the handler answers every request whose path isAdminPath. */
export function createAdminConsole({
  admin,
  trustProxy,
  trustedProxies,
  logger,
  metrics,
  store,
  payments,
}: AdminConsoleOptions) {
  const clock = admin.clock;
  const now = clock ? clock.now : Date.now;
  /** The time a database call is made at: null, the database's own clock, unless a test set one. */
  const at = clock ? () => new Date(clock.now()) : () => null;
  const wait = clock ? clock.wait : (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal });
  const refusals = createRefusalMemo({
    maxKeys: admin.signIn?.maxRememberedRefusals,
    now: clock ? clock.now : undefined,
  });
  const checks = createCheckSlots({ max: admin.signIn?.maxConcurrentChecks });
  /** Derived once: a new password hash or secret takes a restart, which derives it anew. */
  const devices = deviceKey(admin.sessionSecret, admin.passwordHash);
  const sessions = sessionKey(admin.sessionSecret, admin.passwordHash);
  let held = 0;
  metrics.signInLimit.failures = () => store.admin.signInFailures(FAILURE_WINDOW_MS, at()).catch(() => null);
  metrics.signInLimit.held = () => held;
  /** Whether the database has the session neither revoked nor expired (the signature is checked before). */
  const isLive = (session: Session) => store.admin.isSessionLive(session.id, at());
  // One series for every console of this instance, at the console's time (the database's unless a test set one).
  const pulse = createPulse({
    read: (fromMinute) => store.admin.pulse(at(), payments !== undefined, fromMinute),
    now,
    changes: [(listener) => store.onBid(listener)],
    invalidations: [(listener) => store.onModeration(listener)],
  });
  const moderation = createModerationDesk({
    store,
    logger,
    metrics,
    headers: HEADERS,
    now,
    isLive,
    payments: payments?.store,
    otherChanges: [pulse.onChange],
  });

  /** The Origin a form posted from this console carries, as far as the service can tell. */
  function ownOrigin(req: IncomingMessage): string | null {
    const host = req.headers.host;
    return host ? `${overHttps(req, trustProxy, trustedProxies) ? "https" : "http"}://${host}` : null;
  }

  function sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    return Boolean(origin) && origin === ownOrigin(req);
  }

  /**
   * Logs a form refused for its Origin. The usual cause is no attack but a proxy that ends TLS
   * without TRUST_PROXY: the browser sends https://host, the service sees http and expects
   * http://host, and every sign-in is refused (docs/realtime.md#operator-console).
   */
  function logForeignForm(req: IncomingMessage, path: string) {
    const origin = req.headers.origin?.slice(0, 200) ?? null;
    const expected = ownOrigin(req);
    const httpsBehindProxy = origin !== null && expected !== null && origin === expected.replace(/^http:/, "https:");
    const client = maskAddress(limitKey(clientAddress(req, trustProxy, trustedProxies)));
    logger.warn(
      { origin, expected, path, client },
      httpsBehindProxy
        ? "refused a console form sent over https while the service saw http: behind a proxy that ends TLS, set TRUST_PROXY to the number of proxies"
        : differsOnlyByPort(origin, expected)
          ? "refused a console form whose Origin differs from the Host only by its port: a proxy in front must pass the Host the browser sent, port included (nginx: proxy_set_header Host $http_host)"
          : "refused a console form whose Origin is not this console's (behind a proxy that ends TLS, set TRUST_PROXY)",
    );
  }

  function send(res: ServerResponse, status: number, html: string, extra: Record<string, string | number> = {}) {
    res.writeHead(status, { ...HEADERS, "Content-Type": "text/html; charset=utf-8", ...extra }).end(html);
  }

  function sessionCookie(req: IncomingMessage, value: string, maxAgeSeconds: number): string {
    const secure = overHttps(req, trustProxy, trustedProxies) ? "; Secure" : "";
    return `${SESSION_COOKIE}=${value}; Path=/admin; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
  }

  function deviceCookie(req: IncomingMessage, value: string): string {
    const secure = overHttps(req, trustProxy, trustedProxies) ? "; Secure" : "";
    return `${DEVICE_COOKIE}=${value}; Path=/admin; Max-Age=${DEVICE_MS / 1000}; HttpOnly; SameSite=Strict${secure}`;
  }

  /** Back to the sign-in page (or `location`) with the cookie cleared. */
  function signedOut(req: IncomingMessage, res: ServerResponse, location = "/admin") {
    res.writeHead(303, { ...HEADERS, Location: location, "Set-Cookie": sessionCookie(req, "", 0) }).end();
  }

  function refuse(res: ServerResponse, { reason, waitMs }: { reason: keyof typeof REFUSALS; waitMs: number }) {
    metrics.adminSignInsRefused.inc({ reason });
    const { status, problem } = REFUSALS[reason];
    send(res, status, signInPage(problem), { "Retry-After": Math.max(1, Math.ceil(waitMs / 1000)) });
  }

  function busy(res: ServerResponse) {
    metrics.adminSignInsRefused.inc({ reason: "busy" });
    send(res, 503, signInPage("Too many sign-ins are being checked right now. Try again in a moment."), {
      "Retry-After": BUSY_RETRY_AFTER_SECONDS,
    });
  }

  /** The cookie's session if its signature holds and the database has it live; null otherwise. */
  async function liveSession(req: IncomingMessage): Promise<Session | null> {
    const session = readSession(sessions, readCookie(req, SESSION_COOKIE), now());
    return session && (await isLive(session)) ? session : null;
  }

  /**
   * Holds an attempt back until its turn, with nothing but its request and form: no check slot,
   * no database connection. False when its client left meanwhile.
   */
  async function holdBack(res: ServerResponse, waitMs: number): Promise<boolean> {
    const left = new AbortController();
    const onClose = () => left.abort();
    res.once("close", onClose);
    held += 1;
    try {
      await wait(waitMs, left.signal);
      return !left.signal.aborted;
    } catch (error) {
      if (left.signal.aborted) return false;
      throw error;
    } finally {
      held -= 1;
      res.off("close", onClose);
    }
  }

  /** Whether the password is right; null when it could not be checked (answered 500, still counted). */
  async function checkPassword(res: ServerResponse, password: string, client: string): Promise<boolean | null> {
    try {
      return await verifyPassword(password, admin.passwordHash);
    } catch (error) {
      // The attempt stays counted: a check that fails must not be a free guess.
      metrics.adminSignInsRefused.inc({ reason: "error" });
      logger.error({ err: error, client }, "an operator password could not be checked");
      send(res, 500, signInPage("The password could not be checked. Try again later."));
      return null;
    }
  }

  function wrongPassword(res: ServerResponse, client: string, device: boolean) {
    metrics.adminLoginFailures.inc();
    logger.warn({ client, device }, "operator sign-in failed");
    send(res, 401, signInPage("Wrong password"));
  }

  /**
   * A new session and a new device, in cookies, let in `through` a trusted device or not;
   * `replacing`: the device whose cookie the browser sent, if it holds (revoked, locked or not).
   */
  async function signedIn(
    req: IncomingMessage,
    res: ServerResponse,
    client: string,
    through: "device" | "untrusted",
    replacing: string | null,
  ) {
    const id = newSessionId();
    const device = newDeviceId();
    const { expiresAtMs } = await store.admin.openSession(id, SESSION_MS, at());
    await store.admin.issueDevice(device, DEVICE_MS, replacing, at());
    metrics.adminSignIns.inc({ client: through });
    logger.info({ session: id, client, device: through === "device" }, "operator signed in");
    res
      .writeHead(303, {
        ...HEADERS,
        Location: "/admin",
        "Set-Cookie": [
          sessionCookie(req, sessionToken(sessions, { id, expiresAtMs }), SESSION_MS / 1000),
          deviceCookie(req, deviceToken(devices, device)),
        ],
      })
      .end();
  }

  /**
   * An attempt through a trusted device (OWASP's device cookies): only the device's own failures
   * limit it, and a slot is kept for its check, so that no stranger can keep it out. False, and
   * nothing answered, when the database does not trust the device (revoked, expired) or its own
   * failures have locked it: then it is an untrusted client's attempt, never refused for being
   * a device, and the lock is remembered so that the next ones skip the query.
   */
  async function signInThroughDevice(
    req: IncomingMessage,
    res: ServerResponse,
    device: string,
    password: string,
    client: string,
  ): Promise<boolean> {
    const freeSlot = checks.tryTake(true);
    if (!freeSlot) {
      busy(res);
      return true;
    }
    let right: boolean | null;
    try {
      const reservation = await store.admin.reserveDeviceSignIn(device, DEVICE_POLICY, at());
      if (reservation.outcome === "unknown") return false;
      if (reservation.outcome === "locked") {
        refusals.remember(lockedDeviceKey(device), { reason: "limited", waitMs: reservation.waitMs });
        logger.warn({ client }, "a device locked by its own failures: its sign-ins are a stranger's");
        return false;
      }
      right = await checkPassword(res, password, client);
      if (right) await store.admin.forgetDeviceSignIn(reservation.attemptId);
    } finally {
      freeSlot();
    }
    if (right === null) return true;
    if (!right) wrongPassword(res, client, true);
    else await signedIn(req, res, client, "device", device);
    return true;
  }

  /** The refusal remembered for the client or either of its networks, or for the console. */
  function rememberedRefusal(groups: AddressGroups) {
    const networks = [groups.mid, groups.wide].filter((group) => group !== null);
    return refusals.refusal(groups.client) ?? networks.map((group) => refusals.refusal(group)).find(Boolean) ?? null;
  }

  async function signIn(req: IncomingMessage, res: ServerResponse) {
    const groups = addressGroups(clientAddress(req, trustProxy, trustedProxies));
    const client = maskAddress(groups.client);
    const sent = readDevice(devices, readCookie(req, DEVICE_COOKIE));
    // A device this instance found locked lately is a stranger until its lock ends.
    const device = sent && refusals.refusal(lockedDeviceKey(sent))?.reason !== "limited" ? sent : null;
    // An untrusted client is refused before the form is even read, if the database refused it
    // lately; the reservation below decides for real.
    const remembered = device ? null : rememberedRefusal(groups);
    if (remembered) {
      refuse(res, remembered);
      return;
    }
    const form = await readForm(req, MAX_FORM_BYTES);
    if (!form) {
      send(res, 413, signInPage("That form was too large."));
      return;
    }
    const password = form.get("password") ?? "";
    if (device) {
      if (await signInThroughDevice(req, res, device, password, client)) return;
      const stale = rememberedRefusal(groups);
      if (stale) {
        refuse(res, stale);
        return;
      }
    }
    await signInUntrusted(req, res, groups, client, password, sent);
  }

  /**
   * Today's limits, for a client with no device cookie the database trusts, or one its own failures
   * locked; `sent`, the device of a cookie whose signature holds, is revoked if the password is right.
   */
  async function signInUntrusted(
    req: IncomingMessage,
    res: ServerResponse,
    groups: AddressGroups,
    client: string,
    password: string,
    sent: string | null,
  ) {
    // The network whose checks in flight decide whether this one may wait for a slot.
    const network = groups.wide ?? groups.client;
    const left = new AbortController();
    const onClose = () => left.abort();
    res.once("close", onClose);
    try {
      await checkUntrusted(req, res, groups, network, left.signal, client, password, sent);
    } finally {
      res.off("close", onClose);
    }
  }

  async function checkUntrusted(
    req: IncomingMessage,
    res: ServerResponse,
    groups: AddressGroups,
    network: string,
    left: AbortSignal,
    client: string,
    password: string,
    sent: string | null,
  ) {
    // A check slot first: an attempt beyond them costs nothing, not even a query.
    let freeSlot = await checks.take(network, left);
    if (!freeSlot) {
      if (!left.aborted) busy(res);
      return;
    }
    let right: boolean | null;
    try {
      // Counted as a failure from here until the password proves right, in the same statement as
      // the check of the counts: attempts sent at once, to any instances, cannot all pass it.
      const reservation = await store.admin.reserveSignIn(groups, SIGN_IN_POLICY, at());
      if (reservation.outcome !== "reserved") {
        const limited = reservation.outcome === "limited" ? reservation.by : "client";
        const key = limited === "network" ? groups.wide : limited === "subnet" ? groups.mid : groups.client;
        refusals.remember(key ?? groups.client, { reason: reservation.outcome, waitMs: reservation.waitMs });
        refuse(res, { reason: reservation.outcome, waitMs: reservation.waitMs });
        return;
      }
      const forget = async () => {
        for (const key of [groups.client, groups.mid, groups.wide]) if (key !== null) refusals.forgetKey(key);
        await store.admin.forgetSignIn(reservation.attemptId);
      };
      if (reservation.waitMs > 0) {
        // Held back without its slot, then checked only if a slot is free at its turn.
        freeSlot();
        freeSlot = null;
        if (!(await holdBack(res, reservation.waitMs))) {
          // Counted, never checked: leaving early must not be a free guess either.
          logger.info({ client }, "a held operator sign-in was given up by its client");
          return;
        }
        freeSlot = await checks.take(network, left);
        if (!freeSlot) {
          // No password was checked, so nothing was guessed: not a failure.
          await forget();
          busy(res);
          return;
        }
      }
      right = await checkPassword(res, password, client);
      if (right) await forget();
    } finally {
      freeSlot?.();
    }
    if (right === null) return;
    if (!right) {
      wrongPassword(res, client, false);
      return;
    }
    await signedIn(req, res, client, "untrusted", sent);
  }

  async function answer(req: IncomingMessage, res: ServerResponse, { path, query }: RequestTarget): Promise<void> {
    const session = await liveSession(req);
    const route = `${req.method} ${path.replace(/\/$/, "") || "/"}`;

    if ((route === "GET /admin" || route === "HEAD /admin") && !session) {
      // Signed out, expired, revoked or never signed in alike: the sign-in form.
      const everywhere = query.get("done") === "signed_out_everywhere";
      send(res, 200, signInPage(undefined, everywhere ? "Every session is signed out." : undefined));
    } else if (route === "GET /admin" || route === "HEAD /admin") {
      const before = readBefore(query.get("before"));
      const [view, latest, setAside, series] = await Promise.all([
        store.moderationView(before, CONSOLE_PAGE_SIZE),
        payments?.store.latest(CONSOLE_PAYMENTS),
        payments?.store.setAside(CONSOLE_PAYMENTS),
        pulse.current(),
      ]);
      const paymentList =
        payments && latest && setAside ? { latest, setAside, explorerTxUrl: payments.explorerTxUrl } : null;
      send(
        res,
        200,
        consolePage({ view, before, notice: readNotice(query), payments: paymentList, pulse: pulseSection(series) }),
      );
    } else if (req.method === "POST" && !sameOrigin(req) && (path === "/admin/login" || session)) {
      logForeignForm(req, path);
      send(res, 403, messagePage("Refused: this form was not sent from this console."));
    } else if (route === "POST /admin/login") {
      await signIn(req, res);
    } else if (!session) {
      send(res, 401, signInPage());
    } else if (route === "POST /admin/logout") {
      await store.admin.revokeSession(session.id, at());
      logger.info({ session: session.id }, "operator signed out");
      signedOut(req, res);
    } else if (route === "POST /admin/logout/everywhere") {
      // Every device too: a cookie taken from any of them is worth no more than a stranger's.
      const devicesRevoked = await store.admin.revokeEveryDevice(at());
      const revoked = await store.admin.revokeEverySession(at());
      logger.info({ session: session.id, revoked, devices: devicesRevoked }, "operator signed out every session");
      signedOut(req, res, SIGNED_OUT_EVERYWHERE);
    } else if (route === "GET /admin/events") {
      moderation.streamChanges(res, session);
    } else if (req.method === "POST" && (await moderation.handle(req, res, path, session))) {
      // Answered: a redirect back to the console with what the action did.
    } else {
      send(res, 404, messagePage("Nothing here."));
    }
  }

  return async function handleAdmin(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<void> {
    try {
      await answer(req, res, target);
    } catch (error) {
      // Sessions and sign-ins live in the database: without it the console opens for nobody.
      if (!(error instanceof StoreUnavailableError) || res.headersSent) throw error;
      visitorUnanswered(logger, "the operator console", error.message);
      send(res, 503, messagePage("The console cannot reach its database right now. Try again in a moment."), {
        "Retry-After": UNAVAILABLE_RETRY_AFTER_SECONDS,
      });
    }
  };
}
