/**
 * The store as a blink (issue 44, docs/decisions/2026-11-28-the-store-as-a-blink.md) in a client the
 * project did not write: Dialect's `Blink` (@dialectlabs/blinks 0.22.5, blinks-core 0.20.7) on a
 * page of another origin, reading the service's action (payments on, on a local chain, as
 * payments.spec.ts) and paying with a test wallet: a button's POST answers the store's transfer,
 * the wallet signs and sends it, the chain executes it, the callback answers the receipt Dialect
 * shows as completed, and the payment request is confirmed; through a tier's own blink, a tier's
 * button alone (Miniblink) and the store's named-purchase form. Nothing leaves 127.0.0.1: Dialect's
 * registry is answered empty (the action is unregistered, so the blink runs at securityLevel
 * "all"), its proxy is off. The answers' shapes are typed with @solana/actions-spec where the
 * service makes them (service/actions/routes.ts) and checked in tests/service/actions/actions.test.ts.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, type Locator, type Page, test } from "@playwright/test";
import type { CompletedAction, TransactionResponse } from "@solana/actions-spec";
import { AccountRole, type Address, type KeyPairSigner } from "@solana/kit";
import { getTransferCheckedInstructionDataDecoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { type PaymentShop, startPaymentShop } from "../../scripts/harness/paymentShop.ts";
import { TIERS } from "../../src/data/tiers.ts";
import { BUY_ACTION_PATH } from "../../src/lib/blink.ts";
import type { PaymentStatusBody } from "../../src/lib/payments.ts";
import { parseSiteConfig } from "../../src/lib/siteConfig.ts";
import { scaled } from "../harness/timeBudgets.ts";
import { type BlinkClient, installBlinkWallet, keepOnThisMachine, startBlinkClient } from "./harness/blinkClient.ts";

// One shop and one client for the file, its tests in order on one worker.
test.describe.configure({ mode: "default" });

const DECIMALS = 6;
const TINY = TIERS.find((tier) => tier.id === 1);
const DELUXE = TIERS.find((tier) => tier.id === 2);
const PREMIUM = TIERS.find((tier) => tier.id === 3);
const baseUnits = (price: number) => BigInt(price) * 10n ** BigInt(DECIMALS);
/** A tier's button, as the action labels it. */
const tierLabel = (tier: { name: string; price: number }) => `${tier.name} · ${tier.price.toLocaleString("en-US")} $ZN`;

let shop: PaymentShop;
let client: BlinkClient;
let actionUrl: string;
/** The buyers, each holding its tier's price. */
let tinyBuyer: KeyPairSigner;
let deluxeBuyer: KeyPairSigner;
let premiumBuyer: KeyPairSigner;

test.beforeAll(async () => {
  test.setTimeout(scaled(180_000));
  [shop, client] = await Promise.all([startPaymentShop({ pollMs: 200 }), startBlinkClient()]);
  actionUrl = `${shop.origin}${BUY_ACTION_PATH}`;
  // Funded before any purchase: the service shares the latest blockhash for 5 s
  // (BLOCKHASH_SHARE_MS) and the local chain honours only its latest, which each transaction of
  // its own (a mint) replaces; a mint between two purchases would void the second's transfer.
  const funded = async (price: number) => {
    const buyer = await shop.chain.wallet();
    await shop.chain.mintTo(shop.mint, buyer.address, baseUnits(price));
    return buyer;
  };
  tinyBuyer = await funded(TINY?.price ?? 0);
  deluxeBuyer = await funded(DELUXE?.price ?? 0);
  premiumBuyer = await funded(PREMIUM?.price ?? 0);
});

test.afterAll(async () => {
  await Promise.all([shop?.stop(), client?.stop()]);
});

/** Dialect's card: the one `.blink` the library renders. */
const blinkCard = (page: Page) => page.locator(".blink");

/** The page's errors and warnings, but Dialect's own notice that its proxy is off. */
function consoleProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (!["error", "warning"].includes(message.type())) return;
    if (message.text().includes("Proxy URL is not set, proxy will be disabled")) return;
    problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(String(error)));
  return problems;
}

async function expectStoreAction(page: Page) {
  const card = blinkCard(page);
  await expect(card.locator(".blink-title")).toHaveText("The Nothing Store");
  await expect(card.locator(".blink-description")).toContainText("Buy absolutely nothing, paid in $ZN.");
  await expect(card.getByRole("img", { name: "action-image" })).toHaveAttribute("src", `${shop.origin}/favicon.svg`);
  // Unregistered with Dialect: its warning, the blink still usable.
  await expect(card).toContainText("This Action has not yet been registered.");
  await expect(card).not.toContainText("This action is not supported");
  // Buttons alone: Dialect's layout (@dialectlabs/blinks 0.22.5) would show a form of two fields in
  // their place, so the store's action has none; every tier's button is there and enabled.
  await expect(card.getByRole("button")).toHaveText(TIERS.map(tierLabel));
  for (const button of await card.getByRole("button").all()) await expect(button).toBeEnabled();
  await expect(card.getByRole("textbox")).toHaveCount(0);
}

test("Dialect's blink renders the store's action from its solana-action: URL and from the home page's actions.json; each tier's button alone", async ({
  page,
}) => {
  const refused = await keepOnThisMachine(page);
  const problems = consoleProblems(page);
  await page.goto(client.pageFor(`solana-action:${actionUrl}`));
  await expectStoreAction(page);

  // The home page's link, as shared: unfurled through GET /actions.json to the same action.
  const rules = page.waitForResponse(`${shop.origin}/actions.json`);
  await page.goto(client.pageFor(`${shop.origin}/`));
  expect((await rules).status()).toBe(200);
  await expectStoreAction(page);

  // Each tier's button, alone as Dialect's Miniblink shows one: there, and enabled.
  for (const tier of TIERS) {
    await page.goto(client.pageFor(`solana-action:${actionUrl}`, tierLabel(tier)));
    await expect(blinkCard(page).getByRole("button")).toHaveText([tierLabel(tier)]);
    await expect(blinkCard(page).getByRole("button")).toBeEnabled();
  }
  expect(refused).toEqual([]);
  expect(problems).toEqual([]);
});

/**
 * Opens `blinkPage` with `buyer`'s wallet, holding `price`, and presses `press` there: the service's
 * transaction answer and the callback's, checked as they pass; the wallet's one transaction, the
 * store's, executed on the chain; the request confirmed by it.
 */
async function buyThroughTheBlink(
  page: Page,
  { buyer, price }: { buyer: KeyPairSigner; price: bigint },
  blinkPage: string,
  press: (card: Locator) => Promise<void>,
) {
  const wallet = await installBlinkWallet(page, shop.chain, buyer);
  const refused = await keepOnThisMachine(page);
  const problems = consoleProblems(page);
  const received = await shop.chain.balance(shop.recipient, shop.mint);
  const answered = page.waitForResponse(
    (response) => response.url().startsWith(`${actionUrl}?`) && response.request().method() === "POST",
  );
  const calledBack = page.waitForResponse(
    (response) => response.url().startsWith(`${actionUrl}/`) && response.request().method() === "POST",
  );
  await page.goto(blinkPage);
  await press(blinkCard(page));

  const answer = await answered;
  expect(answer.status()).toBe(200);
  const transaction = (await answer.json()) as TransactionResponse;
  const next = transaction.links?.next;
  expect(next?.type).toBe("post");
  const href = next?.type === "post" ? next.href : "";
  const reference = href.slice(BUY_ACTION_PATH.length + 1) as Address;
  expect(href).toBe(`${BUY_ACTION_PATH}/${reference}`);

  // The callback: asked with the signature the wallet got, it answers once the watcher confirmed.
  const callback = await calledBack;
  expect(callback.url()).toBe(`${shop.origin}${href}`);
  expect(callback.request().postDataJSON()).toEqual({ account: buyer.address, signature: wallet.sent[0]?.signature });
  expect(callback.status()).toBe(200);
  const receipt = (await callback.json()) as CompletedAction;

  // The wallet signed and sent one transaction, the store's, and the chain executed it.
  expect(wallet.sent.map((sent) => sent.transaction)).toEqual([transaction.transaction]);
  const signature = wallet.sent[0]?.signature ?? "";
  const message = wallet.decode(transaction.transaction);
  expect(message.feePayer.address).toBe(buyer.address);
  const transfer = message.instructions.find((instruction) => instruction.programAddress === TOKEN_PROGRAM_ADDRESS);
  expect(transfer?.accounts?.at(-1)).toEqual({ address: reference, role: AccountRole.READONLY });
  expect(getTransferCheckedInstructionDataDecoder().decode(transfer?.data ?? new Uint8Array())).toMatchObject({
    amount: price,
    decimals: DECIMALS,
  });
  expect(shop.chain.executed.find((executed) => executed.signature === signature)?.meta?.err).toBeNull();
  expect(await shop.chain.balance(shop.recipient, shop.mint)).toBe(received + price);
  expect(await shop.chain.balance(buyer.address, shop.mint)).toBe(0n);

  // The request, as the pages read it: confirmed by that transaction (its status is cached a second).
  const statusOf = async () =>
    (await (await fetch(`${shop.origin}/payments/${reference}`)).json()) as PaymentStatusBody;
  await expect.poll(async () => (await statusOf()).status).toBe("confirmed");
  const status = await statusOf();
  expect(status.signature).toBe(signature);
  expect(refused).toEqual([]);
  expect(problems).toEqual([]);
  return { receipt, signature, status };
}

test("a tier's own blink (?tier=2) in the full layout: its button pays the store's transfer, executed on the local chain; Dialect shows the receipt", async ({
  page,
}) => {
  if (!DELUXE) throw new Error("no tier 2");
  const label = tierLabel(DELUXE);
  const { receipt, signature, status } = await buyThroughTheBlink(
    page,
    { buyer: deluxeBuyer, price: baseUnits(DELUXE.price) },
    client.pageFor(`solana-action:${actionUrl}?tier=${DELUXE.id}`),
    async (card) => {
      await expect(card.locator(".blink-title")).toHaveText("Deluxe Nothing · The Nothing Store");
      // Its button, and the named purchase as one field with its own button.
      await expect(card.getByRole("button")).toHaveText([label, "Buy as a Verified Patron"]);
      await card.getByRole("button", { name: label }).click();
    },
  );
  expect(receipt).toMatchObject({ type: "completed", title: "Paid: Deluxe Nothing", label: "Bought" });
  expect(receipt.description).toContain(signature);
  expect(status).toMatchObject({ status: "confirmed", tierId: "2" });
  // The receipt as Dialect shows it: the completed blink, its title and text, its one button done.
  const card = blinkCard(page);
  await expect(card.locator(".blink-title")).toHaveText("Paid: Deluxe Nothing");
  await expect(card.locator(".blink-description")).toContainText("100 $ZN, confirmed on chain.");
  await expect(card.locator(".blink-description")).toContainText(signature);
  await expect(card.getByRole("button")).toHaveText(["Bought"]);
  await expect(card.getByRole("button", { name: "Bought" })).toBeDisabled();
});

test("a tier's button of the store's blink alone (Dialect's Miniblink) pays; then the receipt's button", async ({
  page,
}) => {
  if (!TINY) throw new Error("no tier 1");
  const label = tierLabel(TINY);
  const { receipt, status } = await buyThroughTheBlink(
    page,
    { buyer: tinyBuyer, price: baseUnits(TINY.price) },
    client.pageFor(`solana-action:${actionUrl}`, label),
    async (card) => {
      await expect(card.getByRole("button")).toHaveText([label]);
      await card.getByRole("button", { name: label }).click();
    },
  );
  expect(receipt).toMatchObject({ type: "completed", title: "Paid: A Tiny Bit of Nothing", label: "Bought" });
  expect(status).toMatchObject({ status: "confirmed", tierId: "1" });
  // The completed blink's one button, done.
  await expect(blinkCard(page).getByRole("button")).toHaveText(["Bought"]);
  await expect(blinkCard(page).getByRole("button", { name: "Bought" })).toBeDisabled();
});

test("a tier's own blink named: a name typed beside its button, paid; Dialect shows the completed receipt naming the patron", async ({
  page,
}) => {
  if (!PREMIUM) throw new Error("no tier 3");
  const { receipt, signature, status } = await buyThroughTheBlink(
    page,
    { buyer: premiumBuyer, price: baseUnits(PREMIUM.price) },
    client.pageFor(`solana-action:${actionUrl}?tier=${PREMIUM.id}`),
    async (card) => {
      await expect(card.locator(".blink-title")).toHaveText("Premium Nothing · The Nothing Store");
      // One field beside its button: Dialect shows it inline, its label as the placeholder.
      await card.getByRole("textbox").fill("Blinky Pat");
      await card.getByRole("button", { name: "Buy as a Verified Patron" }).click();
    },
  );
  expect(receipt).toMatchObject({ type: "completed", title: "Paid: Premium Nothing", label: "Bought" });
  expect(receipt.description).toContain("Blinky Pat joins the Verified Patrons.");
  expect(status).toMatchObject({ status: "confirmed", tierId: "3" });
  // The receipt as Dialect shows it: the completed blink, its title and text, its one button done.
  const card = blinkCard(page);
  await expect(card.locator(".blink-title")).toHaveText("Paid: Premium Nothing");
  await expect(card.locator(".blink-description")).toContainText("500 $ZN, confirmed on chain.");
  await expect(card.locator(".blink-description")).toContainText("Blinky Pat joins the Verified Patrons.");
  await expect(card.locator(".blink-description")).toContainText(signature);
  await expect(card.getByRole("button")).toHaveText(["Bought"]);
  await expect(card.getByRole("button", { name: "Bought" })).toBeDisabled();
});

test("the build writes actions.json for a static host: the action's absolute URL, readable from any origin", async () => {
  // The split shape: the pages on a static host, the service elsewhere (src/pages/actions.json.ts).
  const built = process.env.STATIC_DIR || "dist";
  const rules = JSON.parse(await readFile(join(built, "actions.json"), "utf8")) as {
    rules: { pathPattern: string; apiPath: string }[];
  };
  const site = process.env.PUBLIC_SITE_URL || "http://localhost:4321";
  const { realtimeUrl } = parseSiteConfig(process.env);
  const service = realtimeUrl ? new URL(realtimeUrl.replace(/^ws/, "http")).origin : new URL(site).origin;
  expect(rules).toEqual({ rules: [{ pathPattern: "/", apiPath: `${service}${BUY_ACTION_PATH}` }] });
  // Hosts that read _headers send it to any origin, as the spec asks.
  const headers = await readFile(join(built, "_headers"), "utf8");
  expect(headers).toMatch(/^\/actions\.json\n {2}Access-Control-Allow-Origin: \*$/m);
});
