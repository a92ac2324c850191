/**
 * The operator console across two service instances on one PostgreSQL (docs/design.md#9), each on
 * a store of its own as separate processes would be, behind a trusted proxy that forwards many
 * client addresses: a sign-out through one refuses the cookie on the other at once and ends its
 * event stream; "Sign out everywhere" through one ends the sessions the other signed in; a new
 * session secret or password hash ends them all; the per-address limit and the console-wide delay count the attempts
 * of both instances together, the delay on a clock the test moves (nothing sleeps); a device's
 * failures lock it on both, and "Sign out everywhere" through one revokes the devices of both.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { withTimeout } from "../../../scripts/harness/childProcess.ts";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import type { AdminSettings } from "../../../service/config.ts";
import { FAILURE_WINDOW_MS } from "../../../service/console/signInLimits.ts";
import { formatPasswordHash } from "../../../service/passwordHash.ts";
import { type Instance, startInstances } from "../harness/auctionService.ts";
import {
  cheapAdmin,
  consoleAnswer,
  consolePost,
  consoleState,
  cookieOf,
  deviceCookieOf,
  fromAddress,
  manualAdminClock,
  nthAddress,
  PASSWORD,
  SLOWED,
  signInTo,
} from "../harness/operatorConsole.ts";
import { locationForThisTest, type TestLocation, waitFor } from "../harness/stores.ts";

const ADMIN = await cheapAdmin(10);

function instancesOn(location: TestLocation, count: number, admin: AdminSettings): Promise<Instance[]> {
  return startInstances(location, count, { overrides: { ...LIFTED_LIMITS, admin, trustProxy: 1 } });
}

async function twoInstances(admin: AdminSettings = ADMIN) {
  const location = await locationForThisTest("postgres");
  const [a, b] = (await instancesOn(location, 2, admin)).map((instance) => instance.service.httpUrl) as [
    string,
    string,
  ];
  return { location, a, b };
}

/** The n-th client's wrong guess, through `httpUrl`. */
const wrongGuess = (httpUrl: string, n: number, signal?: AbortSignal) =>
  signInTo(httpUrl, `wrong guess ${n}`, fromAddress(nthAddress(n)), signal);

/** 20 failures from 20 addresses, through the two instances in turn: the console-wide delay's threshold. */
async function failTwentyTimes(urls: string[]): Promise<void> {
  for (let n = 0; n < 20; n++) expect((await wrongGuess(urls[n % urls.length] as string, n)).status).toBe(401);
}

/** Reads the event stream until it ends; the text it carried. */
async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += new TextDecoder().decode(value);
  }
}

describe("the operator console's sessions across two instances", () => {
  it("refuses a cookie signed out through the other instance at once, and ends its event stream there", async () => {
    const { a, b } = await twoInstances();
    const cookie = cookieOf(await signInTo(a, PASSWORD));
    expect(await consoleState(b, cookie)).toBe("console");
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const events = await fetch(`${b}/admin/events`, { headers: { Cookie: cookie }, signal: controller.signal });
    expect(events.status).toBe(200);
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const streamed = readToEnd(reader);

    expect((await consolePost(a, "/admin/logout", "", { Cookie: cookie })).status).toBe(303);
    // The very next request through B: no instance keeps a session of its own.
    expect(await consoleState(b, cookie)).toBe("sign-in");
    expect((await consolePost(b, "/admin/blocks", "name=Alice", { Cookie: cookie })).status).toBe(401);
    // B heard the revocation and ended the stream (its own re-check comes only every 25 s).
    expect(await withTimeout(streamed, 10_000, "B's event stream ending")).toBe(": live\n\n");
  });

  it('ends through "Sign out everywhere" on one instance the sessions signed in through the other', async () => {
    const { a, b } = await twoInstances();
    const onA = [cookieOf(await signInTo(a, PASSWORD)), cookieOf(await signInTo(a, PASSWORD))];
    const onB = cookieOf(await signInTo(b, PASSWORD));
    for (const cookie of onA) expect(await consoleState(b, cookie)).toBe("console");
    expect((await consolePost(b, "/admin/logout/everywhere", "", { Cookie: onB })).status).toBe(303);
    for (const url of [a, b]) {
      for (const cookie of [...onA, onB]) expect(await consoleState(url, cookie)).toBe("sign-in");
    }
  });

  it("ends every session when ADMIN_SESSION_SECRET changes, though their rows are live", async () => {
    const { location, a } = await twoInstances();
    const cookie = cookieOf(await signInTo(a, PASSWORD));
    // An instance started with a new secret, on the same database.
    const [rotated] = await instancesOn(location, 1, {
      ...ADMIN,
      sessionSecret: "a new session secret of at least thirty-two bytes",
    });
    const c = rotated?.service.httpUrl as string;
    expect(await consoleState(c, cookie)).toBe("sign-in");
    expect((await consolePost(c, "/admin/blocks", "name=Alice", { Cookie: cookie })).status).toBe(401);
    expect(await consoleState(a, cookie)).toBe("console");
    // And the other way round.
    const fresh = cookieOf(await signInTo(c, PASSWORD));
    expect(await consoleState(c, fresh)).toBe("console");
    expect(await consoleState(a, fresh)).toBe("sign-in");
  });

  it("ends every session when ADMIN_PASSWORD_HASH changes, though their rows are live", async () => {
    const { location, a, b } = await twoInstances();
    const cookies = [cookieOf(await signInTo(a, PASSWORD)), cookieOf(await signInTo(b, PASSWORD))];
    // Both instances restarted with the same password hashed anew (another salt), on the same database.
    const rehashed = await cheapAdmin(10);
    expect(formatPasswordHash(rehashed.passwordHash)).not.toBe(formatPasswordHash(ADMIN.passwordHash));
    const restarted = (await instancesOn(location, 2, rehashed)).map((instance) => instance.service.httpUrl);
    for (const url of restarted) {
      for (const cookie of cookies) {
        expect(await consoleState(url, cookie)).toBe("sign-in");
        expect((await consolePost(url, "/admin/blocks", "name=Alice", { Cookie: cookie })).status).toBe(401);
      }
    }
    // The same password signs in again, and that session holds on both restarted instances.
    const fresh = cookieOf(await signInTo(restarted[0] as string, PASSWORD));
    for (const url of restarted) expect(await consoleState(url, fresh)).toBe("console");
    expect(await consoleState(a, fresh)).toBe("sign-in");
  });
});

describe("the sign-in limits across two instances", () => {
  it("limits one address to 5 failures in 15 minutes, whichever instance each attempt reaches", async () => {
    const { a, b } = await twoInstances();
    const address = fromAddress("2001:db8:7:7::1");
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await signInTo(attempt % 2 ? b : a, "wrong guess", address)).status).toBe(401);
    }
    for (const url of [b, a]) {
      const limited = await consoleAnswer(await signInTo(url, PASSWORD, fromAddress("2001:db8:7:7::2")));
      expect(limited.status).toBe(429);
      expect(limited.alert).toBe("Too many attempts");
      expect(Number(limited.retryAfter)).toBeGreaterThan(FAILURE_WINDOW_MS / 1000 - 60);
    }
    // Another /64 is another client.
    expect((await signInTo(b, PASSWORD, fromAddress("2001:db8:7:8::1"))).status).toBe(303);
  });

  it("holds every attempt after 20 failures from any addresses, 1 s doubling to 60 s, the turns shared by both instances", async () => {
    const time = manualAdminClock();
    const { a, b } = await twoInstances({ ...ADMIN, clock: time.clock });
    await failTwentyTimes([a, b]);
    expect(time.held).toHaveLength(0);
    // Each attempt from a new address, through A and B in turn, once the one before was answered.
    for (let n = 20; n < 29; n++) {
      const answering = wrongGuess(n % 2 ? b : a, n);
      await waitFor(`attempt ${n} held`, () => time.held.length === n - 19);
      const hold = time.held.at(-1);
      time.advance(hold?.ms ?? 0);
      hold?.release();
      expect((await answering).status).toBe(401);
    }
    expect(time.held.map((hold) => hold.ms)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it("holds at most 5 attempts sent at once to both instances, refuses the rest 503, and lets the operator in a turn later", async () => {
    const time = manualAdminClock();
    // A check slot for each, so that the delay alone decides (a held attempt gives its slot back).
    const { a, b } = await twoInstances({ ...ADMIN, clock: time.clock, signIn: { maxConcurrentChecks: 12 } });
    await failTwentyTimes([a, b]);
    const answered: string[] = [];
    const answers = Array.from({ length: 12 }, (_, i) =>
      wrongGuess(i % 2 ? b : a, 100 + i)
        .then(consoleAnswer)
        .then(({ status, alert }) => answered.push(`${status} ${alert}`)),
    );
    // Turns 1, 3, 7, 15 and 31 s away; the sixth would be 63 s away, past the minute: refused.
    await waitFor("five attempts held, the rest answered", () => time.held.length === 5 && answered.length === 7);
    const held = [...time.held].sort((x, y) => x.ms - y.ms);
    expect(held.map((hold) => hold.ms)).toEqual([1_000, 3_000, 7_000, 15_000, 31_000]);
    // Each at its turn, as time passes: one check at a time.
    let elapsed = 0;
    for (const [index, hold] of held.entries()) {
      time.advance(hold.ms - elapsed);
      elapsed = hold.ms;
      hold.release();
      await waitFor(`held attempt ${index + 1} answered`, () => answered.length === 8 + index);
    }
    await Promise.all(answers);
    const statuses = answered.sort();
    expect(statuses).toEqual([
      ...Array.from({ length: 5 }, () => "401 Wrong password"),
      ...Array.from({ length: 7 }, () => `503 ${SLOWED}`),
    ]);

    // The operator, now: refused for a while, never for good. The last turn was at 31 s, the next
    // is 32 s after it: within a minute, so held, then let in.
    const operator = signInTo(a, PASSWORD, fromAddress("192.0.2.1"));
    await waitFor("the operator held", () => time.held.length === 6);
    expect(time.held[5]?.ms).toBe(32_000);
    time.advance(32_000);
    time.held[5]?.release();
    expect((await operator).status).toBe(303);
  });

  it("counts a held attempt whose client leaves, without checking its password", async () => {
    const time = manualAdminClock();
    const location = await locationForThisTest("postgres");
    const [instance] = await instancesOn(location, 1, { ...ADMIN, clock: time.clock });
    const url = instance?.service.httpUrl as string;
    const registry = instance?.service.metrics.registry;
    const gauge = async (name: string) => (await registry?.getSingleMetric(name)?.get())?.values[0]?.value;
    await failTwentyTimes([url]);
    const leaving = new AbortController();
    const answer = wrongGuess(url, 20, leaving.signal).catch((error: unknown) => error);
    await waitFor("the attempt held", () => time.held.length === 1);
    expect(await gauge("admin_sign_ins_held")).toBe(1);
    leaving.abort();
    expect(await answer).toBeInstanceOf(Error);
    await waitFor("the hold given up", () => time.held[0]?.abandoned === true);
    await waitFor("nothing held", async () => (await gauge("admin_sign_ins_held")) === 0);
    expect(await gauge("admin_sign_in_failures")).toBe(21);
    expect(await gauge("admin_login_failures_total")).toBe(20);
  });
});

describe("the operator's devices across two instances", () => {
  it("takes a device locked by failures through both instances for a stranger, never worse, on either", async () => {
    const { a, b } = await twoInstances();
    const home = fromAddress("198.51.100.7");
    const mine = deviceCookieOf(await signInTo(a, PASSWORD, home));
    const other = deviceCookieOf(await signInTo(b, PASSWORD, home));
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await signInTo(attempt % 2 ? b : a, "wrong guess", { ...home, Cookie: mine })).status).toBe(401);
    }
    // Locked by the failures through both: on either instance the cookie is ignored, and the right
    // password from an address with no failures of its own gets in as a stranger would.
    for (const url of [a, b]) {
      expect((await signInTo(url, PASSWORD, { ...home, Cookie: mine })).status).toBe(303);
    }
    // The address is limited for untrusted clients, the locked device with them; the other device,
    // signed in through B, is let in through A.
    for (let attempt = 0; attempt < 5; attempt++) expect((await signInTo(b, "wrong guess", home)).status).toBe(401);
    expect((await signInTo(a, PASSWORD, home)).status).toBe(429);
    expect((await signInTo(a, PASSWORD, { ...home, Cookie: mine })).status).toBe(429);
    expect((await signInTo(a, PASSWORD, { ...home, Cookie: other })).status).toBe(303);
  });

  it('revokes through "Sign out everywhere" on one instance the devices signed in through the other', async () => {
    const { a, b } = await twoInstances();
    const onA = deviceCookieOf(await signInTo(a, PASSWORD));
    const signedInOnB = await signInTo(b, PASSWORD);
    expect((await consolePost(b, "/admin/logout/everywhere", "", { Cookie: cookieOf(signedInOnB) })).status).toBe(303);
    const limited = fromAddress("203.0.113.9");
    for (let attempt = 0; attempt < 5; attempt++) expect((await signInTo(a, "wrong guess", limited)).status).toBe(401);
    for (const url of [a, b]) {
      for (const device of [onA, deviceCookieOf(signedInOnB)]) {
        expect((await signInTo(url, PASSWORD, { ...limited, Cookie: device })).status).toBe(429);
      }
    }
  });
});
