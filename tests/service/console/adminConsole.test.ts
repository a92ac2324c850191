/**
 * The operator console's door through the real service (PGlite): sign-in, the session cookie and
 * its row in the database, sign-out and "Sign out everywhere", the failure limit, same-origin posts,
 * forged, unknown, revoked and expired sessions, a database out of reach, and no console at all
 * when it is not configured.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import type { ServiceConfig } from "../../../service/config.ts";
import { newSessionId, SESSION_MS, sessionKey, sessionToken } from "../../../service/console/session.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import { modelWinningAmounts } from "../harness/auctionModel.ts";
import { type AuctionService, startAuctionService } from "../harness/auctionService.ts";
import {
  cheapAdmin,
  consoleAnswer,
  consolePost,
  consoleState,
  cookieOf,
  manualAdminClock,
  PASSWORD,
  SESSION_SECRET,
  signInTo,
} from "../harness/operatorConsole.ts";
import { createTestLocation, openTestStore, testLogger } from "../harness/stores.ts";

const ADMIN = await cheapAdmin(14);

async function openConsoleWithStore(
  overrides: Partial<ServiceConfig> = {},
  logLines: Record<string, unknown>[] = [],
): Promise<{ service: AuctionService; store: BidStore }> {
  const location = await createTestLocation("pglite");
  onTestFinished(() => location.remove());
  const store = await openTestStore(location);
  onTestFinished(() => store.close());
  const service = await startAuctionService(
    store,
    { admin: ADMIN, ...overrides },
    testLogger((line) => logLines.push(line)),
  );
  onTestFinished(() => service.stop());
  return { service, store };
}

const openConsole = async (overrides: Partial<ServiceConfig> = {}, logLines: Record<string, unknown>[] = []) =>
  (await openConsoleWithStore(overrides, logLines)).service;

const post = (service: AuctionService, path: string, body: string, headers: Record<string, string> = {}) =>
  consolePost(service.httpUrl, path, body, headers);

const signIn = (service: AuctionService, password = PASSWORD, headers: Record<string, string> = {}) =>
  signInTo(service.httpUrl, password, headers);

describe("the operator console", () => {
  it("is absent when ADMIN_PASSWORD_HASH is not set: /admin is a 404 like any unknown path", async () => {
    const service = await openConsole({ admin: null });
    expect((await fetch(`${service.httpUrl}/admin`)).status).toBe(404);
    expect((await signIn(service)).status).toBe(404);
  });

  it("shows the sign-in page, strictly: no store, noindex, a policy that allows only its own style, script, stream and forms", async () => {
    const service = await openConsole();
    const response = await fetch(`${service.httpUrl}/admin`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("<h1>Operator console</h1>");
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toContain('<button type="submit">Sign in</button>');
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(response.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'sha256-[\w+/=]+'; script-src 'sha256-[\w+/=]+'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
  });

  it("signs in with the password: a strict cookie for /admin, 8 hours, then the console and sign-out", async () => {
    const service = await openConsole();
    const response = await signIn(service);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/admin");
    // The session's cookie first, then the device's (adminDevices.test.ts).
    const [sessionCookie, deviceCookie] = response.headers.getSetCookie();
    expect(sessionCookie).toMatch(
      /^nothing_admin=[\w-]+\.\d+\.[\w-]+; Path=\/admin; Max-Age=28800; HttpOnly; SameSite=Strict$/,
    );
    expect(deviceCookie).toMatch(/^nothing_admin_device=/);

    const cookie = cookieOf(response);
    const signedIn = await (await fetch(`${service.httpUrl}/admin`, { headers: { Cookie: cookie } })).text();
    expect(signedIn).toContain('<button type="submit">Sign out</button>');
    expect(signedIn).toContain(
      '<form method="post" action="/admin/logout/everywhere"><button type="submit">Sign out everywhere</button></form>',
    );
    const signedOut = await post(service, "/admin/logout", "", { Cookie: cookie });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toBe("/admin");
    expect(signedOut.headers.get("set-cookie")).toBe(
      "nothing_admin=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict",
    );
    // Out means out: the same cookie, kept by whoever had it, opens nothing any more.
    expect(await consoleState(service.httpUrl, cookie)).toBe("sign-in");
    expect((await post(service, "/admin/blocks", "name=Alice", { Cookie: cookie })).status).toBe(401);
    expect((await post(service, "/admin/logout", "", { Cookie: cookie })).status).toBe(401);
  });

  it("marks the cookie Secure behind https, as the trusted proxy reports it", async () => {
    const service = await openConsole({ trustProxy: 1 });
    const response = await signIn(service, PASSWORD, {
      "X-Forwarded-Proto": "https",
      Origin: service.httpUrl.replace("http:", "https:"),
    });
    expect(response.headers.getSetCookie()[0]).toMatch(/^nothing_admin=.*; HttpOnly; SameSite=Strict; Secure$/);
  });

  it("logs a sign-in refused for its Origin with the origin seen and the one expected, naming TRUST_PROXY", async () => {
    const logLines: Record<string, unknown>[] = [];
    // A proxy that ends TLS, the service not told to trust it: the browser's Origin is https.
    const service = await openConsole({}, logLines);
    const { host } = new URL(service.httpUrl);
    const overHttps = { "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7", Origin: `https://${host}` };
    expect((await signIn(service, PASSWORD, overHttps)).status).toBe(403);
    expect((await signIn(service, PASSWORD, { Origin: "https://evil.example" })).status).toBe(403);
    const refusals = logLines.filter((line) => String(line.msg).startsWith("refused a console form"));
    expect(refusals).toEqual([
      expect.objectContaining({
        level: 40,
        origin: `https://${host}`,
        expected: `http://${host}`,
        path: "/admin/login",
        client: "127.0.0.x",
        msg: "refused a console form sent over https while the service saw http: behind a proxy that ends TLS, set TRUST_PROXY to the number of proxies",
      }),
      expect.objectContaining({
        level: 40,
        origin: "https://evil.example",
        expected: `http://${host}`,
        msg: "refused a console form whose Origin is not this console's (behind a proxy that ends TLS, set TRUST_PROXY)",
      }),
    ]);
    expect(JSON.stringify(logLines)).not.toContain(PASSWORD);
  });

  it("answers a wrong password 401, and the sixth attempt within 15 minutes 429 with Retry-After, the right password included", async () => {
    const logLines: Record<string, unknown>[] = [];
    const service = await openConsole({}, logLines);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await signIn(service, `wrong guess ${attempt}`);
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('<p role="alert">Wrong password</p>');
    }
    const limited = await signIn(service);
    expect(limited.status).toBe(429);
    expect(await limited.text()).toContain("Too many attempts");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(890);
    expect(retryAfter).toBeLessThanOrEqual(900);
    const metrics = await (await fetch(service.metricsUrl)).text();
    expect(metrics).toMatch(/^admin_login_failures_total 5$/m);
    // Neither password appears in any log line.
    const logs = JSON.stringify(logLines);
    expect(logs).toContain("operator sign-in failed");
    expect(logs).not.toContain("wrong guess");
    expect(logs).not.toContain(PASSWORD);
  });

  it("refuses every admin route without a session (401), and a cross-origin post even with one (403)", async () => {
    const service = await openConsole();
    expect((await post(service, "/admin/logout", "")).status).toBe(401);
    expect((await fetch(`${service.httpUrl}/admin/audit`)).status).toBe(401);
    const cookie = cookieOf(await signIn(service));
    expect((await post(service, "/admin/logout", "", { Cookie: cookie, Origin: "https://evil.example" })).status).toBe(
      403,
    );
    expect((await post(service, "/admin/logout", "", { Cookie: cookie, Origin: "" })).status).toBe(403);
    expect((await signIn(service, PASSWORD, { Origin: "https://evil.example" })).status).toBe(403);
  });

  it("refuses a forged session, one signed with another secret, an unknown one and an expired one (401)", async () => {
    const clock = manualAdminClock();
    const { service } = await openConsoleWithStore({ admin: { ...ADMIN, clock: clock.clock } });
    const valid = cookieOf(await signIn(service)).replace("nothing_admin=", "");
    const [id, expires] = valid.split(".") as [string, string];
    const tampered = `${id}.${Number(expires) + 1}.${valid.split(".")[2]}`;
    const otherSecret = sessionToken(sessionKey("another secret of at least thirty-two bytes", ADMIN.passwordHash), {
      id,
      expiresAtMs: Number(expires),
    });
    // Signed with the right secret, but no sign-in ever made it: the database has no such session.
    const unknown = sessionToken(sessionKey(SESSION_SECRET, ADMIN.passwordHash), {
      id: newSessionId(),
      expiresAtMs: Number(expires),
    });
    const audit = (token: string) =>
      fetch(`${service.httpUrl}/admin/audit`, { headers: { Cookie: `nothing_admin=${token}` } });
    for (const token of [tampered, otherSecret, unknown, "garbage", ""]) {
      expect((await audit(token)).status, token).toBe(401);
    }
    expect((await audit(valid)).status).toBe(404);
    clock.advance(SESSION_MS - 1);
    expect((await audit(valid)).status).toBe(404);
    clock.advance(1);
    expect((await audit(valid)).status).toBe(401);
    expect(await consoleState(service.httpUrl, `nothing_admin=${valid}`)).toBe("sign-in");
  });

  it('signs out every session with "Sign out everywhere", then shows the sign-in form saying so', async () => {
    const logLines: Record<string, unknown>[] = [];
    const { service, store } = await openConsoleWithStore({}, logLines);
    const first = cookieOf(await signIn(service));
    const second = cookieOf(await signIn(service));
    expect(await consoleState(service.httpUrl, first)).toBe("console");
    const everywhere = await post(service, "/admin/logout/everywhere", "", { Cookie: second });
    expect(everywhere.status).toBe(303);
    expect(everywhere.headers.get("location")).toBe("/admin?done=signed_out_everywhere");
    expect(everywhere.headers.get("set-cookie")).toBe(
      "nothing_admin=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict",
    );
    for (const cookie of [first, second]) expect(await consoleState(service.httpUrl, cookie)).toBe("sign-in");
    const landing = await fetch(`${service.httpUrl}/admin?done=signed_out_everywhere`);
    expect(await consoleAnswer(landing)).toEqual({
      status: 200,
      retryAfter: null,
      alert: "Every session is signed out.",
    });
    // Not an action on the auction: the log has it, the audit list does not.
    expect(logLines.filter((line) => line.msg === "operator signed out every session")).toEqual([
      expect.objectContaining({ revoked: 2 }),
    ]);
    expect((await store.moderationView(null, 10)).audit).toEqual([]);
    // Signing in again works as ever.
    expect(await consoleState(service.httpUrl, cookieOf(await signIn(service)))).toBe("console");
  });

  it("answers 503 when its database cannot be reached: nobody signs in, no session opens the console", async () => {
    const { service, store } = await openConsoleWithStore();
    const cookie = cookieOf(await signIn(service));
    await store.close();
    for (const response of [
      await signIn(service),
      await fetch(`${service.httpUrl}/admin`, { headers: { Cookie: cookie } }),
    ]) {
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(await response.text()).toContain(
        "<p>The console cannot reach its database right now. Try again in a moment.</p>",
      );
    }
  });
});

describe("the operator console's session cookie (docs/design.md#11)", () => {
  it("is accepted in the one spelling the service writes: padding, stray characters, +/ for -_ and other trailing bits are 401", async () => {
    const service = await openConsole();
    // A session as signing in makes it, with a "-" or "_" in its signature (3 in 4 have one).
    let token: string | undefined;
    for (let attempt = 0; attempt < 20 && !token; attempt++) {
      const signedIn = cookieOf(await signIn(service)).replace("nothing_admin=", "");
      if (/[-_]/.test(signedIn.split(".")[2] as string)) token = signedIn;
    }
    const [id, expires, signature] = (token as string).split(".") as [string, string, string];
    const audit = (value: string) =>
      fetch(`${service.httpUrl}/admin/audit`, { headers: { Cookie: `nothing_admin=${value}` } });
    expect((await audit(`${id}.${expires}.${signature}`)).status).toBe(404);
    // 32 bytes in 43 characters leave the last character's two low bits unused.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const otherBits = alphabet[alphabet.indexOf(signature.at(-1) as string) ^ 1] as string;
    const spellings = [
      `${signature}=`,
      `${signature}==`,
      `${signature}!!`,
      `${signature.slice(0, 20)}!${signature.slice(20)}`,
      signature.replaceAll("-", "+").replaceAll("_", "/"),
      `${signature.slice(0, -1)}${otherBits}`,
    ];
    for (const spelling of spellings) {
      expect((await audit(`${id}.${expires}.${spelling}`)).status, spelling).toBe(401);
    }
  });
});

describe("the operator console's moderation routes", () => {
  async function openWithStore() {
    const { service, store } = await openConsoleWithStore();
    const cookie = cookieOf(await signIn(service));
    return { store, service, cookie };
  }

  it("answers 401 on every route without a session, and 403 to a cross-origin post with one, changing nothing", async () => {
    const { store, service, cookie } = await openWithStore();
    const placed = await store.placeBid("Alice", 100);
    const id = placed.accepted ? placed.bid.id : 0;
    expect((await fetch(`${service.httpUrl}/admin/events`)).status).toBe(401);
    for (const path of [
      `/admin/bids/${id}/hide`,
      `/admin/bids/${id}/restore`,
      "/admin/blocks",
      "/admin/blocks/remove",
    ]) {
      expect((await post(service, path, "name=Alice")).status, path).toBe(401);
      const foreign = await post(service, path, "name=Alice", { Cookie: cookie, Origin: "http://evil.example" });
      expect(foreign.status, path).toBe(403);
      const missing = await fetch(`${service.httpUrl}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
        body: "name=Alice",
      });
      expect(missing.status, `${path} without Origin`).toBe(403);
    }
    const view = await store.moderationView(null, 10);
    expect(view.audit).toEqual([]);
    expect(view.bids.every((bid) => !bid.hidden && !bid.nameBlocked)).toBe(true);
  });

  it("shows a name with HTML as text, and refuses a bad name or reason with a clear notice", async () => {
    const { store, service, cookie } = await openWithStore();
    const name = `<img src=x onerror="alert(1)">&`;
    const placed = await store.placeBid(name, 100);
    const id = placed.accepted ? placed.bid.id : 0;
    const page = await (await fetch(`${service.httpUrl}/admin`, { headers: { Cookie: cookie } })).text();
    expect(page).toContain("<td>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;</td>");
    expect(page).not.toContain("<img");
    expect(page).toContain(`<button type="submit" id="hide-${id}">Hide bid ${id}</button>`);

    const tooLong = await post(service, `/admin/bids/${id}/hide`, `reason=${"x".repeat(201)}`, { Cookie: cookie });
    expect(tooLong.headers.get("location")).toBe("/admin?done=invalid_reason");
    const shown = await (
      await fetch(`${service.httpUrl}${tooLong.headers.get("location")}`, { headers: { Cookie: cookie } })
    ).text();
    expect(shown).toContain("A reason has at most 200 characters, no control characters.");
    const badName = await post(service, "/admin/blocks", "name=%20%20", { Cookie: cookie });
    expect(badName.headers.get("location")).toBe("/admin?done=invalid_name");
    expect((await post(service, "/admin/bids/999/hide", "", { Cookie: cookie })).headers.get("location")).toBe(
      "/admin?done=no_such_bid&bid=999",
    );

    const blocked = await post(
      service,
      "/admin/blocks",
      new URLSearchParams({ name, reason: "<b>html</b>" }).toString(),
      {
        Cookie: cookie,
      },
    );
    expect(blocked.headers.get("location")).toBe("/admin?done=blocked");
    const after = await (await fetch(`${service.httpUrl}/admin`, { headers: { Cookie: cookie } })).text();
    expect(after).toContain("Unblock &lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;</button>");
    expect(after).toContain("<td>&lt;b&gt;html&lt;/b&gt;</td>");
    const metrics = await (await fetch(service.metricsUrl)).text();
    expect(metrics).toMatch(/admin_moderation_actions_total\{action="block",outcome="done"\} 1/);
    expect(metrics).toMatch(/admin_moderation_actions_total\{action="bid",outcome="invalid"\} 1/);
  });

  it("streams a change event to the console when a bid lands, and pages older bids", async () => {
    const { store, service, cookie } = await openWithStore();
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const events = await fetch(`${service.httpUrl}/admin/events`, {
      headers: { Cookie: cookie },
      signal: controller.signal,
    });
    expect(events.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const placing = store.placeBid("Alice", 100);
    while (!text.includes("event: change")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended");
      text += new TextDecoder().decode(value);
    }
    await placing;

    for (const cents of modelWinningAmounts(55, 100)) await store.placeBid(`B${cents}`, cents);
    const first = await (await fetch(`${service.httpUrl}/admin`, { headers: { Cookie: cookie } })).text();
    const older = /href="\/admin\?before=(\d+)">Older bids/.exec(first);
    expect(older).not.toBeNull();
    const second = await (
      await fetch(`${service.httpUrl}/admin?before=${older?.[1]}`, { headers: { Cookie: cookie } })
    ).text();
    expect(second).toContain("Newest bids");
    expect(second).toContain("<td>Alice</td>");
    expect(second).not.toContain("Older bids");
  });
});
