/**
 * Where the buyers are (issue 44), on a service with payments on (as payments.spec.ts):
 * - Android's wallet app through Mobile Wallet Adapter (docs/decisions/2026-11-28-the-phones-wallet.md):
 *   listed in the buy dialog on an Android user agent, its chunk fetched only there. No wallet app
 *   runs here: the test sees the adapter open its `solana-wallet:` association link and, with no
 *   app to answer, the dialog say so.
 * - The store and a tier shared as a blink (docs/product-behaviour.md#share-as-a-blink): the links'
 *   hrefs, and Copy putting the dial.to link on the clipboard.
 */
import AxeBuilder from "@axe-core/playwright";
import { devices, expect, type Page, test } from "@playwright/test";
import { type PaymentShop, startPaymentShop } from "../../scripts/harness/paymentShop.ts";
import { scaled } from "../harness/timeBudgets.ts";
import { watchViolations } from "./harness/cspViolations.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const MOBILE_WALLET = "Mobile Wallet Adapter";
const MOBILE_WALLET_CHUNK = /\/mobileWallet\.[\w-]+\.js$/;

test.describe.configure({ mode: "default" });

let shop: PaymentShop;
let origin: string;

test.beforeAll(async () => {
  test.setTimeout(scaled(180_000));
  shop = await startPaymentShop({ pollMs: 200 });
  ({ origin } = shop);
});

test.afterAll(async () => {
  await shop?.stop();
});

const card = (page: Page, tierName: string) =>
  page.locator("#products article").filter({ has: page.getByRole("heading", { name: tierName, exact: true }) });

async function openBuyDialog(page: Page) {
  await card(page, "Deluxe Nothing").getByRole("button", { name: "Buy Nothing" }).click();
  const dialog = page.getByRole("dialog", { name: "Buy Deluxe Nothing" });
  await expect(dialog).toBeVisible();
  return dialog;
}

/** The origin the pages were built for (the canonical link's), where the action lives without PUBLIC_REALTIME_URL. */
async function builtOrigin(page: Page): Promise<string> {
  return new URL((await page.locator('link[rel="canonical"]').getAttribute("href")) ?? "").origin;
}

async function expectAxeClean(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  expect(results.violations.map(({ id, nodes }) => ({ id, targets: nodes.map((node) => node.target) }))).toEqual([]);
}

test.describe("on Android (Pixel 7's user agent)", () => {
  const { userAgent, viewport, deviceScaleFactor, isMobile, hasTouch } = devices["Pixel 7"];
  test.use({ userAgent, viewport, deviceScaleFactor, isMobile, hasTouch });

  test("the phone's wallet app is offered as Pay with Mobile Wallet Adapter, loaded only once the dialog opens", async ({
    page,
  }) => {
    const violations = await watchViolations(page.context());
    const chunks: string[] = [];
    page.on("request", (request) => {
      if (MOBILE_WALLET_CHUNK.test(request.url())) chunks.push(request.url());
    });
    await page.goto(`${origin}/`);
    await page.waitForLoadState("networkidle");
    expect(chunks).toEqual([]);
    const chunk = page.waitForResponse((response) => MOBILE_WALLET_CHUNK.test(response.url()));
    const dialog = await openBuyDialog(page);
    expect((await chunk).ok()).toBe(true);
    const pay = dialog.getByRole("button", { name: `Pay with ${MOBILE_WALLET}` });
    await expect(pay).toBeVisible();
    // The only wallet here, so the main button; the request by QR code the second way.
    await expect(dialog.getByRole("button", { name: "Pay by QR code or link instead" })).toBeVisible();
    await expectAxeClean(page);
    expect(await violations.events(page)).toEqual([]);
  });

  test("pressing it first has Chrome ask to reach apps on the phone, in the dialog, then to press again", async ({
    page,
  }) => {
    await page.goto(`${origin}/`);
    // Local Network Access not yet allowed: the page asks by one request to localhost, in the press.
    const asked = page.waitForRequest((request) => request.url() === "http://localhost/");
    const dialog = await openBuyDialog(page);
    await dialog.getByRole("button", { name: `Pay with ${MOBILE_WALLET}` }).click();
    await asked;
    await expect(dialog.locator("[data-payment-status]")).toHaveText(
      `Allow this page to connect to your wallet when Chrome asks, then press Pay with ${MOBILE_WALLET} again.`,
    );
  });

  test("once allowed, pressing it opens the wallet app's association link; with no app to answer, the dialog says so", async ({
    page,
    context,
  }) => {
    await context.grantPermissions(["local-network-access"], { origin });
    await page.goto(`${origin}/`);
    // Where the page asks to go: Chrome hands the solana-wallet: scheme to Android, which opens the wallet app.
    const cdp = await context.newCDPSession(page);
    await cdp.send("Page.enable");
    const navigations: string[] = [];
    cdp.on("Page.frameRequestedNavigation", ({ url }) => navigations.push(url));
    const dialog = await openBuyDialog(page);
    const pay = dialog.getByRole("button", { name: `Pay with ${MOBILE_WALLET}` });
    await pay.click();
    const status = dialog.locator("[data-payment-status]");
    await expect(status).toHaveText(`Connecting to ${MOBILE_WALLET}…`);
    await expect
      .poll(() => navigations.find((url) => url.startsWith("solana-wallet:")))
      .toMatch(/^solana-wallet:\/v1\/associate\/local\?association=[\w.-]+&port=\d+&v=v1$/);
    // No app took the link (the page never lost focus): the adapter gives up after 3 s, and the
    // buttons come back with a line naming the wallet; the request by QR code is still offered.
    await expect(status).toHaveText(
      /^Mobile Wallet Adapter could not send the payment \(Found no installed wallet .+\)\. Try again, or pay with the QR code or link\.$/,
      { timeout: scaled(15_000) },
    );
    await expect(pay).not.toHaveAttribute("aria-disabled");
    await expect(dialog.getByRole("button", { name: "Pay by QR code or link instead" })).toBeVisible();
  });
});

test("on a desktop, the mobile wallet is neither registered nor fetched", async ({ page }) => {
  const chunks: string[] = [];
  page.on("request", (request) => {
    if (MOBILE_WALLET_CHUNK.test(request.url())) chunks.push(request.url());
  });
  const walletCode = page.waitForResponse((response) => /\/walletPay\.[\w-]+\.js$/.test(response.url()));
  await page.goto(`${origin}/`);
  const dialog = await openBuyDialog(page);
  await walletCode;
  await page.waitForLoadState("networkidle");
  await expect(dialog.getByRole("button", { name: `Pay with ${MOBILE_WALLET}` })).toHaveCount(0);
  await expect(dialog.locator("[data-payment-wallets]")).toBeHidden();
  expect(chunks).toEqual([]);
});

test("the store shares as a blink: its links, and Copy puts the dial.to link on the clipboard", async ({
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  await page.goto(`${origin}/`);
  const action = `${await builtOrigin(page)}/api/actions/buy`;
  const dialTo = `https://dial.to/?action=solana-action:${encodeURIComponent(action)}`;
  const share = page.locator("[data-blink-share]");
  await expect(share.getByRole("heading", { name: "Share the store as a blink" })).toBeVisible();
  await expect(share.getByRole("link", { name: "Open on dial.to" })).toHaveAttribute("href", dialTo);
  // No query: the action's URL follows the scheme as it is.
  await expect(share.getByRole("link", { name: "Open in a wallet" })).toHaveAttribute(
    "href",
    `solana-action:${action}`,
  );
  const copy = share.getByRole("button", { name: "Copy the store's blink link" });
  await copy.focus();
  await page.keyboard.press("Enter");
  await expect(copy).toContainText("Copied!");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(dialTo);
});

test("a tier shares as a blink from the buy dialog: its links carry ?tier=, and Copy link copies it", async ({
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  await page.goto(`${origin}/`);
  const action = `${await builtOrigin(page)}/api/actions/buy?tier=2`;
  const dialTo = `https://dial.to/?action=solana-action:${encodeURIComponent(action)}`;
  const dialog = await openBuyDialog(page);
  await dialog.getByText("Share this tier as a blink").click();
  await expect(dialog.getByRole("link", { name: "Open on dial.to" })).toHaveAttribute("href", dialTo);
  // With a query, the Actions spec has the URL encoded after the scheme.
  await expect(dialog.getByRole("link", { name: "Open in a wallet" })).toHaveAttribute(
    "href",
    `solana-action:${encodeURIComponent(action)}`,
  );
  // Desktop Chromium here has no share sheet (navigator.share): the button copies.
  const copy = dialog.getByRole("button", { name: "Copy link" });
  await copy.focus();
  await page.keyboard.press("Enter");
  await expect(dialog.locator("[data-payment-share-status]")).toHaveText("Link copied.");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(dialTo);
  await expectAxeClean(page);
});
