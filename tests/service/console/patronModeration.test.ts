/**
 * The console's payments and patron moderation (docs/design.md#8, docs/product-behaviour.md#4-console) through
 * the real service on both backends, paid over a local chain: the newest payments listed, a patron
 * hidden (every payment of its name, any spelling) and restored, each audited with the session and
 * reason; Verified Patrons follows once its 5 s cache has passed. Refused without a session (401)
 * and from another origin (403), absent while payments are off.
 */
import type { Address } from "@solana/kit";
import { beforeEach, describe, expect, it } from "vitest";
import { TIERS } from "../../../src/data/tiers.ts";
import type { CreatedPayment } from "../../../src/lib/payments.ts";
import type { PatronsBody } from "../../../src/lib/verifiedPatrons.ts";
import { type AuctionService, startAuctionService } from "../harness/auctionService.ts";
import { cheapAdmin, consolePost, cookieOf, PASSWORD, signInTo } from "../harness/operatorConsole.ts";
import { localPaymentChain, paymentSettingsOver, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import {
  BACKENDS,
  cleanUpAfter,
  locationForThisTest,
  openTestStore,
  type TestLocation,
  testLogger,
  waitFor,
} from "../harness/stores.ts";

const DECIMALS = 6;
const ADMIN = await cheapAdmin(14);
const DELUXE = TIERS.find((tier) => tier.id === 2);
if (!DELUXE) throw new Error("no Deluxe tier");

interface Shop {
  service: AuctionService;
  url: string;
  /** Moves the payments' clock (the patrons cache's) on. */
  advance(ms: number): void;
  logs: Record<string, unknown>[];
  /** Requests a Deluxe payment for `name` and, unless `pay` is false, pays it in full and waits for the confirmation. */
  buy(name: string | null, pay?: boolean): Promise<{ reference: string; signature: string | null }>;
  /** Requests a Deluxe payment and pays it, the chain's answer for it poisoned (a block time no block has); its signature. */
  buyPoisoned(): Promise<{ reference: string; signature: string }>;
}

async function openShop(location: TestLocation, options: { payments?: boolean } = {}): Promise<Shop> {
  const store = await openTestStore(location);
  cleanUpAfter(() => store.close());
  const local = await localPaymentChain(DECIMALS);
  const clock = { offsetMs: 0 };
  const logs: Record<string, unknown>[] = [];
  const service = await startAuctionService(
    store,
    { admin: ADMIN, payments: options.payments === false ? null : paymentSettingsOver(local) },
    testLogger((line) => logs.push(line)),
    { paymentOptions: { now: () => Date.now() + clock.offsetMs, rpcTimeoutMs: 2_000 } },
  );
  cleanUpAfter(() => service.stop());
  const url = service.httpUrl;
  const payer = await local.chain.wallet();
  await local.chain.mintTo(local.mint, payer.address, 10n ** 15n);
  const request = async (name: string | null) => {
    const response = await fetch(`${url}/payments`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ tierId: String(DELUXE?.id), name }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as CreatedPayment).reference;
  };
  const pay = (reference: string) =>
    local.chain.pay({
      payer,
      recipient: local.recipient,
      mint: local.mint,
      amount: BigInt(DELUXE?.price ?? 0) * 10n ** BigInt(DECIMALS),
      references: [reference as Address],
    });
  return {
    service,
    url,
    logs,
    advance: (ms) => {
      clock.offsetMs += ms;
    },
    async buyPoisoned() {
      const reference = await request(null);
      local.rpc.tamper(reference, (answer) => ({ ...answer, blockTime: 9e15 }));
      return { reference, signature: await pay(reference) };
    },
    async buy(name, andPay = true) {
      const reference = await request(name);
      if (!andPay) return { reference, signature: null };
      const signature = await pay(reference);
      await waitFor("the confirmation", async () => {
        const body = (await (await fetch(`${url}/payments/${reference}`)).json()) as { status: string };
        return body.status === "confirmed";
      });
      return { reference, signature };
    },
  };
}

/** A console form posted with the console's own Origin unless `headers` says otherwise. */
function post(shop: Shop, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return consolePost(shop.url, path, new URLSearchParams(form).toString(), headers);
}

async function signIn(shop: Shop): Promise<string> {
  const response = await signInTo(shop.url, PASSWORD);
  expect(response.status).toBe(303);
  return cookieOf(response);
}

const consoleHtml = async (shop: Shop, cookie: string) =>
  (await fetch(`${shop.url}/admin`, { headers: { Cookie: cookie } })).text();

const patronNames = async (shop: Shop) =>
  ((await (await fetch(`${shop.url}/payments/patrons`)).json()) as PatronsBody).patrons.map((patron) => patron.name);

/** The console's audit list, newest first: what, reason, session (the rows of auction_moderation_log). */
async function auditRows(shop: Shop, cookie: string) {
  const page = await consoleHtml(shop, cookie);
  const audit = page.slice(page.indexOf('<section id="audit"'));
  return [
    ...audit.matchAll(/<tr><td><time[^>]*>[^<]*<\/time><\/td><td>(.*?)<\/td><td>(.*?)<\/td><td>(.*?)<\/td><\/tr>/g),
  ].map(([, what, reason, session]) => ({ what, reason, session }));
}

/** Each listed payment's name and whether it is hidden, newest first. */
async function paymentStates(shop: Shop, cookie: string) {
  const page = await consoleHtml(shop, cookie);
  return [...page.matchAll(/<tr id="payment-[^"]+" class="(hidden-bid)?"><td>.*?<\/tr>/g)].map(([row, hidden]) => ({
    name: row.match(/<td><span>(.*?)<\/span>/)?.[1] ?? null,
    hidden: hidden !== undefined,
  }));
}

/** A shop whose payments are on and available (the chain's facts read), so requests are taken. */
async function openAvailableShop(location: TestLocation): Promise<Shop> {
  const shop = await openShop(location);
  await waitForPaymentsAvailable(shop.url);
  return shop;
}

describe.each(BACKENDS)("patron moderation on %s", (backend) => {
  let location: TestLocation;
  beforeEach(async () => {
    location = await locationForThisTest(backend);
  });

  it("lists the payments, hides a patron (every spelling, every payment) and restores it, audited", async () => {
    const shop = await openAvailableShop(location);
    const nobody = await shop.buy("Mr. Nobody");
    await shop.buy("Ms. Somebody");
    const waiting = await shop.buy("MR. NOBODY", false);
    await shop.buy(null, false);
    const cookie = await signIn(shop);
    const session = shop.logs.find((line) => line.msg === "operator signed in")?.session;
    expect(session).toEqual(expect.any(String));

    const listed = await consoleHtml(shop, cookie);
    expect(listed).toContain('<h2 id="payments-heading">Payments</h2>');
    expect(listed).toContain("<caption>The newest 4 payments, newest first</caption>");
    const signature = nobody.signature ?? "";
    expect(listed).toContain(
      `<a href="https://explorer.example/tx/${signature}?cluster=local" rel="noopener noreferrer" target="_blank" title="${signature}">${signature.slice(0, 6)}…${signature.slice(-6)}</a>`,
    );
    const nobodyRow = listed.match(new RegExp(`<tr id="payment-${nobody.reference}".*?</tr>`))?.[0] ?? "";
    expect(nobodyRow).toContain("<td>Deluxe Nothing</td><td>100 $ZN</td><td>confirmed</td><td>100 $ZN</td>");
    expect(nobodyRow).toContain('<button type="submit" id="hide-patron-');
    expect(nobodyRow).toContain(">Hide patron Mr. Nobody</button>");
    const waitingRow = listed.match(new RegExp(`<tr id="payment-${waiting.reference}".*?</tr>`))?.[0] ?? "";
    expect(waitingRow).toContain("<td>waiting</td><td>—</td><td><span>MR. NOBODY</span></td><td>—</td>");
    // The anonymous request: "—" for its name and no button.
    expect(listed).toMatch(/<td>waiting<\/td><td>—<\/td><td>—<\/td><td>—<\/td><td><\/td><\/tr>/);
    expect(await patronNames(shop)).toEqual(["Mr. Nobody", "Ms. Somebody"]);

    const hidden = await post(
      shop,
      "/admin/patrons/hide",
      { name: "Mr. Nobody", reason: "asked to" },
      { Cookie: cookie },
    );
    expect(hidden.status).toBe(303);
    expect(hidden.headers.get("location")).toBe("/admin?done=patron_hidden");
    expect(await paymentStates(shop, cookie)).toEqual([
      { name: null, hidden: false },
      { name: "MR. NOBODY", hidden: true },
      { name: "Ms. Somebody", hidden: false },
      { name: "Mr. Nobody", hidden: true },
    ]);
    expect(await auditRows(shop, cookie)).toEqual([
      { what: "Hid patron <span>Mr. Nobody</span>", reason: "asked to", session },
    ]);
    expect(shop.logs).toContainEqual(
      expect.objectContaining({ msg: "moderation: hide_patron done", session, payments: 2, reason: "asked to" }),
    );
    // Verified Patrons is cached for 5 s: the old list until then.
    expect(await patronNames(shop)).toEqual(["Mr. Nobody", "Ms. Somebody"]);
    shop.advance(5_000);
    expect(await patronNames(shop)).toEqual(["Ms. Somebody"]);

    const after = await consoleHtml(shop, cookie);
    expect(after).toContain(">Restore patron Mr. Nobody</button>");
    expect(after).toContain(">Restore patron MR. NOBODY</button>");
    expect(after).toContain(">Hide patron Ms. Somebody</button>");
    expect(after).toContain("<td>Hid patron <span>Mr. Nobody</span></td><td>asked to</td>");

    // A hidden patron stays hidden: a new payment of the name is hidden as it is made.
    const later = await shop.buy("mr. nobody", false);
    const laterRow = (await consoleHtml(shop, cookie)).match(new RegExp(`<tr id="payment-${later.reference}".*?</tr>`));
    expect(laterRow?.[0]).toContain(">Restore patron mr. nobody</button>");

    const again = await post(shop, "/admin/patrons/hide", { name: "Mr. Nobody" }, { Cookie: cookie });
    expect(again.headers.get("location")).toBe("/admin?done=patron_already_hidden");
    const unknown = await post(shop, "/admin/patrons/hide", { name: "Nobody At All" }, { Cookie: cookie });
    expect(unknown.headers.get("location")).toBe("/admin?done=no_such_patron");
    const invalid = await post(shop, "/admin/patrons/hide", { name: "" }, { Cookie: cookie });
    expect(invalid.headers.get("location")).toBe("/admin?done=invalid_name");
    expect(await auditRows(shop, cookie)).toHaveLength(1);

    const restored = await post(shop, "/admin/patrons/restore", { name: "MR. NOBODY" }, { Cookie: cookie });
    expect(restored.headers.get("location")).toBe("/admin?done=patron_restored");
    expect((await paymentStates(shop, cookie)).map((row) => row.hidden)).toEqual([false, false, false, false, false]);
    expect((await auditRows(shop, cookie))[0]).toEqual({
      what: "Restored patron <span>MR. NOBODY</span>",
      reason: "",
      session,
    });
    const notHidden = await post(shop, "/admin/patrons/restore", { name: "Mr. Nobody" }, { Cookie: cookie });
    expect(notHidden.headers.get("location")).toBe("/admin?done=patron_not_hidden");
    shop.advance(5_000);
    expect(await patronNames(shop)).toEqual(["Mr. Nobody", "Ms. Somebody"]);
  });

  it("lists a transaction the watcher set aside, with why, above the payments, until then waiting", async () => {
    const shop = await openAvailableShop(location);
    const cookie = await signIn(shop);
    expect(await consoleHtml(shop, cookie)).not.toContain('<table id="set-aside">');
    const { reference, signature } = await shop.buyPoisoned();
    await waitFor("the transaction set aside", async () => (await consoleHtml(shop, cookie)).includes("set-aside-"));
    const page = await consoleHtml(shop, cookie);
    const table = page.match(/<table id="set-aside">.*?<\/table>/)?.[0] ?? "";
    expect(table).toContain("<caption>Transactions set aside: the watcher could not judge them");
    expect(table).toContain(`title="${signature}">${signature.slice(0, 6)}…${signature.slice(-6)}</a>`);
    expect(table).toContain(`<td id="set-aside-${signature}">${reference}</td>`);
    expect(table).toContain("<td>blockTime 9000000000000000 is no time a block was made</td>");
    expect(page.indexOf('<table id="set-aside">')).toBeLessThan(page.indexOf("<caption>The newest"));
    const status = (await (await fetch(`${shop.url}/payments/${reference}`)).json()) as { status: string };
    expect(status.status).toBe("waiting");
    expect(shop.logs.filter((line) => line.msg === "a transaction that cannot be judged")).toHaveLength(1);
  });

  it("refuses a patron action without a session (401) and from another origin (403), changing nothing", async () => {
    const shop = await openAvailableShop(location);
    await shop.buy("Mr. Nobody", false);
    const cookie = await signIn(shop);
    expect((await post(shop, "/admin/patrons/hide", { name: "Mr. Nobody" })).status).toBe(401);
    const foreign = await post(
      shop,
      "/admin/patrons/hide",
      { name: "Mr. Nobody" },
      { Cookie: cookie, Origin: "https://elsewhere.example" },
    );
    expect(foreign.status).toBe(403);
    expect((await post(shop, "/admin/patrons/restore", { name: "Mr. Nobody" }, { Origin: "null" })).status).toBe(401);
    expect(await paymentStates(shop, cookie)).toEqual([{ name: "Mr. Nobody", hidden: false }]);
    expect(await auditRows(shop, cookie)).toEqual([]);
  });
});

describe("patron moderation while payments are off", () => {
  it("has no Payments section and no patron actions (404)", async () => {
    const shop = await openShop(await locationForThisTest("pglite"), { payments: false });
    const cookie = await signIn(shop);
    const page = await consoleHtml(shop, cookie);
    expect(page).toContain("<h1>Operator console</h1>");
    expect(page).not.toContain("Payments");
    expect((await post(shop, "/admin/patrons/hide", { name: "Mr. Nobody" }, { Cookie: cookie })).status).toBe(404);
  });
});
