/**
 * The operator console as a browser (or an attacker) reaches it, for service tests: form posts with
 * the console's own Origin, sign-ins from an address a trusted proxy forwards, the session cookie,
 * and a clock the test moves (AdminSettings.clock, docs/design.md#9).
 *
 *   const clock = manualAdminClock();
 *   const service = await startAuctionService(store, { admin: { ...admin, clock: clock.clock }, trustProxy: 1 });
 *   const cookie = cookieOf(await signInTo(service.httpUrl, PASSWORD, fromAddress("198.51.100.7")));
 *   await consolePost(service.httpUrl, "/admin/logout", "", { Cookie: cookie });
 *   const device = deviceCookieOf(signedIn);   // the device cookie of a sign-in, for the next one
 */
import { setTimeout as sleep } from "node:timers/promises";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import type { AdminClock, AdminSettings } from "../../../service/config.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";

/** The operator's password in every console test. */
export const PASSWORD = "correct horse battery";
export const SESSION_SECRET = "a session secret of at least thirty-two bytes";
/** The answer to an attempt the console-wide delay would hold too long (503). */
export const SLOWED = "Sign-ins are slowed down after many wrong passwords. Try again in a minute.";

/**
 * The console's settings with a hash of cost 2^logN, below what ADMIN_PASSWORD_HASH must have (the
 * production 2^17 takes a quarter second an attempt): passed in code, past the environment's check.
 */
export async function cheapAdmin(logN: number): Promise<AdminSettings> {
  return {
    passwordHash: parsePasswordHash(await hashPassword(PASSWORD, { logN, r: 8, p: 1 })),
    sessionSecret: SESSION_SECRET,
  };
}

/** A form post to the console, with its own Origin unless `headers` says otherwise; redirects not followed. */
export function consolePost(
  httpUrl: string,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${httpUrl}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: httpUrl, ...headers },
    body,
  });
}

export function signInTo(
  httpUrl: string,
  password: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${httpUrl}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: httpUrl, ...headers },
    body: new URLSearchParams({ password }).toString(),
    signal,
  });
}

/** The session cookie pair (name=value) a response sets: the first it sets (a sign-in's device cookie comes second). */
export const cookieOf = (response: Response) => (response.headers.getSetCookie()[0] ?? "").split(";")[0] as string;

/** The header a trusted proxy adds for the client at `address`. */
export const fromAddress = (address: string) => ({ "X-Forwarded-For": address });

/**
 * The n-th of many client addresses, each in an IPv4 /24 of its own: a stranger on a network of
 * their own, which the sign-in limits count apart (docs/decisions/2026-11-28-fair-sign-in-turns.md).
 */
export const nthAddress = (n: number) => `10.${(n >> 8) & 255}.${n & 255}.1`;

/** Status, Retry-After and the page's alert (or status) of one answer, its body read. */
export async function consoleAnswer(response: Response) {
  const text = await response.text();
  const alert = /<p role="(?:alert|status)">([^<]*)<\/p>/.exec(text)?.[1];
  return { status: response.status, retryAfter: response.headers.get("retry-after"), alert };
}

/** GET /admin with the cookie: "console" when it opens the console, "sign-in" for the sign-in form. */
export async function consoleState(httpUrl: string, cookie: string): Promise<"console" | "sign-in"> {
  const response = await fetch(`${httpUrl}/admin`, { headers: { Cookie: cookie } });
  const html = await response.text();
  if (response.status !== 200) throw new Error(`GET /admin answered ${response.status}`);
  if (html.includes('<button type="submit">Sign out</button>')) return "console";
  if (html.includes('<button type="submit">Sign in</button>')) return "sign-in";
  throw new Error("GET /admin showed neither the console nor the sign-in form");
}

/** A sign-in held back by the console-wide delay: how long it asked to wait, and its release. */
export interface HeldSignIn {
  ms: number;
  release(): void;
  /** Set once its client left (the wait was aborted). */
  readonly abandoned: boolean;
}

/**
 * An AdminClock whose time moves only when the test moves it, and whose waits last until the test
 * releases them: every held sign-in is listed in `held`, in the order it was held.
 */
export function manualAdminClock(startMs = Date.parse("2026-03-01T12:00:00.000Z")) {
  let nowMs = startMs;
  const held: HeldSignIn[] = [];
  const clock: AdminClock = {
    now: () => nowMs,
    wait(ms, signal) {
      return new Promise((resolve, reject) => {
        let abandoned = false;
        held.push({
          ms,
          release: () => resolve(),
          get abandoned() {
            return abandoned;
          },
        });
        signal.addEventListener(
          "abort",
          () => {
            abandoned = true;
            reject(signal.reason);
          },
          { once: true },
        );
      });
    },
  };
  return {
    clock,
    held,
    advance(ms: number) {
      nowMs += ms;
    },
  };
}

/** Waits for `settling`, letting every held sign-in go meanwhile (more may be held after a sweep). */
export async function settleReleasing(settling: Promise<unknown>, held: HeldSignIn[], what: string): Promise<void> {
  let settled = false;
  void settling.finally(() => {
    settled = true;
  });
  for (let sweep = 0; sweep < 500 && !settled; sweep++) {
    for (const hold of held) hold.release();
    await sleep(20);
  }
  await withTimeout(settling, 10_000, what);
}

/** The device cookie pair (name=value) a sign-in sets; "" when it sets none. */
export const deviceCookieOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(";")[0] as string)
    .find((pair) => pair.startsWith("nothing_admin_device=")) ?? "";
