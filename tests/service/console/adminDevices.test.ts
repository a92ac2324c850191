/**
 * The operator console's device cookies (OWASP, "Slow Down Online Guessing Attacks with Device
 * Cookies"; docs/decisions/2026-11-27-device-cookies-for-sign-in.md) through the real service, on
 * both backends: the operator, holding the cookie an earlier sign-in gave, signs in while strangers
 * guessing from rotating addresses keep the console's turn and their addresses' limits engaged.
 * Time moves only when the test moves it (AdminSettings.clock): nothing sleeps for minutes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, onTestFinished } from "vitest";
import type { AdminClock, ServiceConfig } from "../../../service/config.ts";
import { deviceKey, deviceToken, newDeviceId } from "../../../service/console/device.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";
import { type AuctionService, startAuctionService } from "../harness/auctionService.ts";
import {
  cheapAdmin,
  consoleAnswer,
  consolePost,
  cookieOf,
  deviceCookieOf,
  fromAddress,
  manualAdminClock,
  nthAddress,
  PASSWORD,
  SESSION_SECRET,
  SLOWED,
  settleReleasing,
  signInTo,
} from "../harness/operatorConsole.ts";
import { BACKENDS, type Backend, createTestLocation, openTestStore, testLogger, waitFor } from "../harness/stores.ts";

const ADMIN = await cheapAdmin(14);
/** What the operator waits at most, pressing "Sign in" again every second meanwhile. */
const OPERATOR_PATIENCE_MS = 10_000;

async function openConsoleWithStore(
  backend: Backend,
  overrides: Partial<ServiceConfig>,
  logLines: Record<string, unknown>[] = [],
) {
  const location = await createTestLocation(backend);
  onTestFinished(() => location.remove());
  const store = await openTestStore(location);
  onTestFinished(() => store.close());
  const start = (more: Partial<ServiceConfig> = {}) =>
    startAuctionService(
      store,
      { admin: ADMIN, trustProxy: 1, ...overrides, ...more },
      testLogger((line) => logLines.push(line)),
    ).then((service) => {
      onTestFinished(() => service.stop());
      return service;
    });
  return { store, service: await start(), start };
}

const openConsole = async (backend: Backend, overrides: Partial<ServiceConfig>) =>
  (await openConsoleWithStore(backend, overrides)).service;

async function metric(service: AuctionService, line: RegExp): Promise<number> {
  const text = await (await fetch(service.metricsUrl)).text();
  const match = new RegExp(`^${line.source} (\\d+)$`, "m").exec(text);
  if (!match) throw new Error(`no metric ${line.source}`);
  return Number(match[1]);
}

/** An address with its 5 failures: an untrusted attempt from it is refused 429. */
const LIMITED = fromAddress("203.0.113.9");
const TOO_MANY = "Too many attempts";

async function limitAddress(httpUrl: string): Promise<void> {
  for (let n = 0; n < 5; n++) expect((await signInTo(httpUrl, `wrong guess ${n}`, LIMITED)).status).toBe(401);
  expect((await consoleAnswer(await signInTo(httpUrl, PASSWORD, LIMITED))).alert).toBe(TOO_MANY);
}

/** A sign-in with the right password from the limited address, carrying `cookie`. */
const fromLimited = async (httpUrl: string, cookie: string) =>
  consoleAnswer(await signInTo(httpUrl, PASSWORD, { ...LIMITED, Cookie: cookie }));

/**
 * A clock in fast motion: a sign-in held back by the console-wide delay waits a millisecond, and
 * the console's time moves on by the whole delay. Strangers' attempts are then checked one after
 * another, as fast as the machine allows, keeping the check slot busy.
 */
function fastClock(): AdminClock {
  let nowMs = Date.parse("2026-03-01T12:00:00.000Z");
  return {
    now: () => nowMs,
    async wait(ms, signal) {
      nowMs += ms;
      await sleep(1, undefined, { signal });
    },
  };
}

/**
 * Strangers guessing from a new address each time, `loops` at once, until stopped: every answer's
 * status is pushed to `statuses`.
 */
function rotatingGuesses(httpUrl: string, loops: number, firstAddress: number) {
  let next = firstAddress;
  let stopped = false;
  const statuses: number[] = [];
  const running = Promise.allSettled(
    Array.from({ length: loops }, async () => {
      while (!stopped) {
        const response = await signInTo(httpUrl, "wrong guess", fromAddress(nthAddress(next++)));
        statuses.push(response.status);
        await response.body?.cancel();
        await sleep(20);
      }
    }),
  );
  return {
    statuses,
    stop() {
      stopped = true;
      return running;
    },
  };
}

/** Signs in again every second until let in or out of patience: the answers, and how long it took. */
async function operatorSignsIn(httpUrl: string, headers: Record<string, string>) {
  const startedAt = performance.now();
  const statuses: number[] = [];
  while (performance.now() - startedAt < OPERATOR_PATIENCE_MS) {
    const response = await signInTo(httpUrl, PASSWORD, headers, AbortSignal.timeout(OPERATOR_PATIENCE_MS));
    statuses.push(response.status);
    if (response.status === 303) return { statuses, ms: performance.now() - startedAt, response };
    await response.body?.cancel();
    await sleep(1_000);
  }
  return { statuses, ms: performance.now() - startedAt, response: null };
}

describe.each(BACKENDS)("an operator with a device cookie under a guessing attack, on %s", (backend) => {
  it("signs in within 10 s while strangers from rotating addresses hold the console's turn and their addresses are limited", async () => {
    const time = manualAdminClock();
    const service = await openConsole(backend, {
      admin: { ...ADMIN, clock: time.clock, signIn: { maxConcurrentChecks: 1 } },
    });
    const url = service.httpUrl;
    // An earlier sign-in, from home: the device cookie.
    const earlier = await signInTo(url, PASSWORD, fromAddress("198.51.100.7"));
    expect(earlier.status).toBe(303);
    const device = deviceCookieOf(earlier);

    // 20 wrong passwords from 4 addresses: each address limited, the console's turn engaged.
    for (let n = 0; n < 20; n++) {
      expect((await signInTo(url, `wrong guess ${n}`, fromAddress(nthAddress(n % 4)))).status).toBe(401);
    }
    expect((await consoleAnswer(await signInTo(url, PASSWORD, fromAddress(nthAddress(0))))).status).toBe(429);
    // Then strangers from ever new addresses: 5 of them hold the turns (the clock never reaches
    // them), the rest are refused 503.
    const strangers = rotatingGuesses(url, 8, 1_000);
    try {
      await waitFor(
        "the turns taken and strangers refused",
        () => time.held.length === 5 && strangers.statuses.length > 20,
      );
      // The operator without the cookie (a new browser, a fresh address): today's limits, exactly.
      const untrusted = await consoleAnswer(await signInTo(url, PASSWORD, fromAddress("192.0.2.50")));
      expect(untrusted).toMatchObject({ status: 503, alert: SLOWED });

      // With it, from another fresh address: let in at once.
      const operator = await operatorSignsIn(url, { ...fromAddress("192.0.2.51"), Cookie: device });
      console.info(
        `${backend}: the operator with a device cookie signed in after ${Math.round(operator.ms)} ms`,
        operator.statuses,
      );
      expect(operator.statuses).toEqual([303]);
      expect(operator.ms).toBeLessThan(OPERATOR_PATIENCE_MS);
    } finally {
      await settleReleasing(strangers.stop(), time.held, "the attack settling");
    }
    expect(strangers.statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    expect(strangers.statuses.every((status) => status === 503 || status === 401)).toBe(true);
  });
});

/** `count` wrong passwords from `headers`, one after another: the statuses. */
async function wrongPasswords(httpUrl: string, count: number, headers: (n: number) => Record<string, string>) {
  const statuses: number[] = [];
  for (let n = 0; n < count; n++) {
    const response = await signInTo(httpUrl, `wrong guess ${n}`, headers(n));
    statuses.push(response.status);
    await response.body?.cancel();
  }
  return statuses;
}

const times = (count: number, status: number) => Array<number>(count).fill(status);

describe.each(BACKENDS)("a device cookie after 5 failures of its own, on %s", (backend) => {
  it("is ignored, never refused: the right password through it from a fresh address signs in (303), other devices and clients unaffected", async () => {
    const time = manualAdminClock();
    const service = await openConsole(backend, { admin: { ...ADMIN, clock: time.clock } });
    const url = service.httpUrl;
    const home = fromAddress("198.51.100.7");
    const mine = deviceCookieOf(await signInTo(url, PASSWORD, home));
    const other = deviceCookieOf(await signInTo(url, PASSWORD, home));
    for (let n = 0; n < 5; n++) {
      const wrong = await consoleAnswer(await signInTo(url, `wrong guess ${n}`, { ...home, Cookie: mine }));
      expect(wrong).toMatchObject({ status: 401, alert: "Wrong password" });
      time.advance(1_000);
    }
    // The device's failures are its own: its address has none, and neither has the console.
    expect(await metric(service, /admin_sign_in_failures/)).toBe(0);
    // Locked, the cookie is ignored: a stranger's attempt from an address with no failures signs in.
    const through = await signInTo(url, PASSWORD, { ...fromAddress("192.0.2.60"), Cookie: mine });
    expect(through.status).toBe(303);
    const fresh = deviceCookieOf(through);
    expect(fresh).not.toBe(mine);
    // Let in as a stranger, besides the two sign-ins that gave the cookies.
    expect(await metric(service, /admin_sign_ins_total\{client="untrusted"\}/)).toBe(3);
    // The new cookie is a trusted device, past a limited address; the locked one was revoked with it.
    await limitAddress(url);
    expect((await fromLimited(url, fresh)).status).toBe(303);
    expect(await fromLimited(url, mine)).toMatchObject({ status: 429, alert: TOO_MANY });
    // The other device and an untrusted client, from the same address as the failures.
    expect((await signInTo(url, PASSWORD, { ...home, Cookie: other })).status).toBe(303);
    expect((await signInTo(url, PASSWORD, home)).status).toBe(303);
    expect(await metric(service, /admin_login_failures_total/)).toBe(10);
    expect(await metric(service, /admin_sign_ins_total\{client="device"\}/)).toBe(2);
  });

  it("gives a flood through it no more than a stranger's limits: 5 per address, then the console's turn", async () => {
    const time = manualAdminClock();
    const logLines: Record<string, unknown>[] = [];
    const { service } = await openConsoleWithStore(backend, { admin: { ...ADMIN, clock: time.clock } }, logLines);
    const url = service.httpUrl;
    const stolen = deviceCookieOf(await signInTo(url, PASSWORD, fromAddress("198.51.100.7")));
    // On a network apart from the stranger's, so that each counts its own 5 toward the console's turn.
    const attacker = fromAddress("198.18.0.20");

    // A stranger from one address, for comparison: 5 checks, then refused.
    const stranger = await wrongPasswords(url, 20, () => fromAddress("203.0.113.21"));
    expect(stranger).toEqual([...times(5, 401), ...times(15, 429)]);
    // Through the cookie from one address: the device's 5, then exactly the stranger's.
    const flood = await wrongPasswords(url, 25, () => ({ ...attacker, Cookie: stolen }));
    expect(flood).toEqual([...times(5, 401), ...stranger]);
    // The lock was read from the database once; the instance remembers it after that.
    expect(logLines.filter((line) => String(line.msg).startsWith("a device locked by its own failures"))).toHaveLength(
      1,
    );

    // Through the cookie from rotating addresses: the console's 20 failures, then its turn.
    expect(await wrongPasswords(url, 10, (n) => ({ ...fromAddress(nthAddress(n)), Cookie: stolen }))).toEqual(
      times(10, 401),
    );
    expect(await metric(service, /admin_sign_in_failures/)).toBe(20);
    const held = signInTo(url, PASSWORD, { ...fromAddress("192.0.2.80"), Cookie: stolen });
    await waitFor("the attempt through the locked device held back", () => time.held.length === 1);
    expect(time.held[0]?.ms).toBe(1_000);
    time.advance(1_000);
    time.held[0]?.release();
    // The right password, at its turn, signs in as a stranger's would.
    expect((await held).status).toBe(303);
    expect(await metric(service, /admin_login_failures_total/)).toBe(25);
    expect(await metric(service, /admin_sign_ins_total\{client="device"\}/)).toBe(0);
  });
});

describe("the operator console's device cookies", () => {
  it("comes with every sign-in: HttpOnly, SameSite=Strict, for /admin, a year; Secure behind https as the trusted proxy reports it", async () => {
    const service = await openConsole("pglite", {});
    const response = await signInTo(service.httpUrl, PASSWORD);
    expect(response.status).toBe(303);
    const [session, device, ...more] = response.headers.getSetCookie();
    expect(more).toEqual([]);
    expect(session).toMatch(
      /^nothing_admin=[\w-]+\.\d+\.[\w-]+; Path=\/admin; Max-Age=28800; HttpOnly; SameSite=Strict$/,
    );
    expect(device).toMatch(
      /^nothing_admin_device=[\w-]{22}\.[\w-]{43}; Path=\/admin; Max-Age=31536000; HttpOnly; SameSite=Strict$/,
    );

    const overHttps = await signInTo(service.httpUrl, PASSWORD, {
      "X-Forwarded-Proto": "https",
      Origin: service.httpUrl.replace("http:", "https:"),
    });
    expect(overHttps.status).toBe(303);
    const cookies = overHttps.headers.getSetCookie();
    expect(cookies).toHaveLength(2);
    for (const cookie of cookies) expect(cookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
  });

  it("lets a device in from an address that is limited, with a new cookie: the one it replaced is trusted no more", async () => {
    const service = await openConsole("pglite", {});
    const url = service.httpUrl;
    const first = deviceCookieOf(await signInTo(url, PASSWORD));
    await limitAddress(url);
    const through = await signInTo(url, PASSWORD, { ...LIMITED, Cookie: first });
    expect(through.status).toBe(303);
    const second = deviceCookieOf(through);
    expect(second).toMatch(/^nothing_admin_device=/);
    expect(second).not.toBe(first);
    expect(await fromLimited(url, first)).toMatchObject({ status: 429, alert: TOO_MANY });
    expect((await fromLimited(url, second)).status).toBe(303);
    expect(await metric(service, /admin_sign_ins_total\{client="device"\}/)).toBe(2);
    expect(await metric(service, /admin_sign_ins_total\{client="untrusted"\}/)).toBe(1);
  });

  it("keeps the device through Sign out", async () => {
    const service = await openConsole("pglite", {});
    const url = service.httpUrl;
    const signedIn = await signInTo(url, PASSWORD);
    const signedOut = await consolePost(url, "/admin/logout", "", {
      Cookie: `${cookieOf(signedIn)}; ${deviceCookieOf(signedIn)}`,
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.getSetCookie()).toEqual([
      "nothing_admin=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict",
    ]);
    await limitAddress(url);
    expect((await fromLimited(url, deviceCookieOf(signedIn))).status).toBe(303);
  });

  it('revokes every device with "Sign out everywhere"', async () => {
    const logLines: Record<string, unknown>[] = [];
    const { service } = await openConsoleWithStore("pglite", {}, logLines);
    const url = service.httpUrl;
    const first = await signInTo(url, PASSWORD);
    const second = await signInTo(url, PASSWORD);
    const session = cookieOf(second);
    expect((await consolePost(url, "/admin/logout/everywhere", "", { Cookie: session })).status).toBe(303);
    expect(logLines.filter((line) => line.msg === "operator signed out every session")).toEqual([
      expect.objectContaining({ revoked: 2, devices: 2 }),
    ]);
    await limitAddress(url);
    for (const device of [deviceCookieOf(first), deviceCookieOf(second)]) {
      expect(await fromLimited(url, device)).toMatchObject({ status: 429, alert: TOO_MANY });
    }
  });

  it("trusts no device cookie once the service restarts with a new ADMIN_PASSWORD_HASH, with no write to the database", async () => {
    const { service, start } = await openConsoleWithStore("pglite", {});
    const device = deviceCookieOf(await signInTo(service.httpUrl, PASSWORD));
    await limitAddress(service.httpUrl);
    expect((await fromLimited(service.httpUrl, device)).status).toBe(303);
    const kept = deviceCookieOf(await signInTo(service.httpUrl, PASSWORD));
    await service.stop();
    // The same password, hashed anew (a new salt): what `npm run admin:hash` gives for a change.
    const rehashed = parsePasswordHash(await hashPassword(PASSWORD, { logN: 14, r: 8, p: 1 }));
    const restarted = await start({ admin: { ...ADMIN, passwordHash: rehashed } });
    expect(await fromLimited(restarted.httpUrl, kept)).toMatchObject({ status: 429, alert: TOO_MANY });
    // A device that signs in under the new hash is trusted again.
    const fresh = deviceCookieOf(await signInTo(restarted.httpUrl, PASSWORD));
    expect((await fromLimited(restarted.httpUrl, fresh)).status).toBe(303);
  });

  it("treats a forged or tampered device cookie as an untrusted client's", async () => {
    const service = await openConsole("pglite", {});
    const url = service.httpUrl;
    const signedIn = await signInTo(url, PASSWORD);
    const token = deviceCookieOf(signedIn).replace("nothing_admin_device=", "");
    const [id, signature] = token.split(".") as [string, string];
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${alphabet[(alphabet.indexOf(text[at] as string) + 1) % 64]}${text.slice(at + 1)}`;
    const key = deviceKey(SESSION_SECRET, ADMIN.passwordHash);
    const forged = [
      `${id}.${flip(signature, 5)}`,
      `${flip(id, 5)}.${signature}`,
      `${id}.${signature}=`,
      `${id}.${signature}.`,
      `${id}.${signature.replaceAll("-", "+").replaceAll("_", "/")}x`,
      deviceToken(deviceKey("another secret of at least thirty-two bytes", ADMIN.passwordHash), id),
      // Signed with the right key, but never issued: the database does not know it.
      deviceToken(key, newDeviceId()),
      // The session cookie's value in the device cookie.
      cookieOf(signedIn).replace("nothing_admin=", ""),
      "garbage",
      "",
    ];
    await limitAddress(url);
    for (const value of forged) {
      expect(await fromLimited(url, `nothing_admin_device=${value}`), value).toMatchObject({
        status: 429,
        alert: TOO_MANY,
      });
    }
    expect((await fromLimited(url, `nothing_admin_device=${token}`)).status).toBe(303);
  });

  it("never tells a device it is busy while strangers keep the check slot busy (1 slot, the production cost)", async () => {
    const productionHash = parsePasswordHash(await hashPassword(PASSWORD));
    const service = await openConsole("pglite", {
      admin: { ...ADMIN, passwordHash: productionHash, clock: fastClock(), signIn: { maxConcurrentChecks: 1 } },
    });
    const url = service.httpUrl;
    let device = deviceCookieOf(await signInTo(url, PASSWORD, fromAddress("198.51.100.7")));
    const strangers = rotatingGuesses(url, 12, 5_000);
    const took: number[] = [];
    try {
      await waitFor("strangers told the checks are busy", () => strangers.statuses.filter((s) => s === 503).length > 5);
      for (let n = 0; n < 3; n++) {
        const operator = await operatorSignsIn(url, { ...fromAddress(`192.0.2.${70 + n}`), Cookie: device });
        expect(operator.statuses).toEqual([303]);
        took.push(Math.round(operator.ms));
        device = deviceCookieOf(operator.response as Response);
      }
    } finally {
      await strangers.stop();
    }
    console.info(`the operator's device sign-ins while strangers kept the slot busy took ${took.join(", ")} ms`);
    for (const ms of took) expect(ms).toBeLessThan(OPERATOR_PATIENCE_MS);
    expect(await metric(service, /admin_sign_ins_refused_total\{reason="busy"\}/)).toBeGreaterThan(0);
    expect(await metric(service, /admin_sign_ins_total\{client="device"\}/)).toBe(3);
  });
});
