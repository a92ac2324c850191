/**
 * Real purchases in the browser (docs/design.md#8, docs/product.md#4-purchase): a service of its
 * own with payments on, its SOLANA_RPC_URL the JSON-RPC server of a local chain (LiteSVM) in this
 * process, on the site `npm run build` left in dist/. The suite's shared server keeps payments off
 * (purchase.spec.ts checks the alert there). The test pays on the chain with the reference the page
 * got, as a wallet would; or a test wallet registered through Wallet Standard pays from the dialog.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page, test, type WebSocketRoute } from "@playwright/test";
import type { Address } from "@solana/kit";
import { type PaymentShop, startPaymentShop } from "../../scripts/harness/paymentShop.ts";
import { TRANSACTION_REQUEST_REFUSALS } from "../../service/payments/transactionRequestRoutes.ts";
import type { CreatedPayment, PaymentStatusBody } from "../../src/lib/payments.ts";
import { WALLET_ANSWER_MS, walletName } from "../../src/lib/walletPayment.ts";
import { scaled } from "../harness/timeBudgets.ts";
import { toast } from "./fixtures.ts";
import { consoleErrorsThroughPage } from "./harness/consoleErrors.ts";
import { watchViolations } from "./harness/cspViolations.ts";
import {
  HANGING_WALLET_NAME,
  installMisbehavingWallets,
  installTestWallet,
  TEST_WALLET_NAME,
} from "./harness/testWallet.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];

// One shop for the file (beforeAll), its tests in order on one worker; a failed test does not skip
// the ones after it (Playwright starts them on a new worker, with a new shop).
test.describe.configure({ mode: "default" });

let shop: PaymentShop;
let origin: string;
let recipient: Address;
let mint: Address;

test.beforeAll(async () => {
  test.setTimeout(scaled(180_000));
  shop = await startPaymentShop({ pollMs: 200 });
  ({ origin, recipient, mint } = shop);
});

test.afterAll(async () => {
  await shop?.stop();
});

const card = (page: Page, tierName: string) =>
  page.locator("#products article").filter({ has: page.getByRole("heading", { name: tierName, exact: true }) });

function pay(reference: string, amount?: bigint) {
  return shop.pay(reference, amount);
}

/** Presses "Buy Nothing" on Deluxe Nothing with the keyboard; the dialog it opens. */
async function openBuyDialog(page: Page) {
  const buy = card(page, "Deluxe Nothing").getByRole("button", { name: "Buy Nothing" });
  await buy.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Buy Deluxe Nothing" });
  await expect(dialog).toBeVisible();
  return { buy, dialog };
}

/** Types a name (or none) and submits with Enter; the created request, as the page read it. */
async function requestPayment(page: Page, name: string): Promise<CreatedPayment> {
  const created = page.waitForResponse(
    (response) => response.url().endsWith("/payments") && response.request().method() === "POST",
  );
  const field = page.getByLabel("Name for the Wall of Fame (optional)");
  await expect(field).toBeFocused();
  if (name) await page.keyboard.type(name);
  await page.keyboard.press("Enter");
  const response = await created;
  expect(response.status()).toBe(201);
  return (await response.json()) as CreatedPayment;
}

async function expectAxeClean(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  expect(
    results.violations.map((violation) => ({ id: violation.id, targets: violation.nodes.map((node) => node.target) })),
  ).toEqual([]);
}

/** The wheel's counter, scrolled to: its island hydrates when visible (the server HTML says 1). */
async function spinsShown(page: Page) {
  const counter = page.locator("#lottery [data-spin-counter]");
  await counter.scrollIntoViewIfNeeded();
  return counter;
}

/**
 * A confirmed request as the dialog shows it: the outcome at the top, focused (so a screen reader
 * says it), with the certificate; nothing left to pay with.
 */
async function expectConfirmedOutcome(dialog: Locator) {
  const status = dialog.locator("[data-payment-status]");
  await expect(status).toHaveText("Payment confirmed!");
  await expect(status).toBeFocused();
  await expect(status).toBeInViewport();
  await expect(dialog).toContainText("Your +7 lottery spins are in the Nothing Lottery.");
  await expect(dialog.getByRole("button", { name: "View your certificate" })).toBeVisible();
  await expect(dialog.getByRole("img", { name: /QR code/ })).toBeHidden();
  await expect(dialog.getByRole("link", { name: /^Open/ })).toHaveCount(0);
  await expect(dialog.getByRole("button", { name: /^Pay |Create payment request/ })).toHaveCount(0);
  await expect(dialog.getByLabel("Name for the Wall of Fame (optional)")).toBeHidden();
  await expect(dialog.locator("[data-address]")).toBeHidden();
  await expect(dialog.getByText("Once payment is confirmed")).toBeHidden();
  await expect(dialog.getByText("Paid in $ZN on Solana")).toBeHidden();
}

test("Buy opens the payment dialog: the network and its terms, then a request with its QR code and wallet links, axe-clean", async ({
  page,
}) => {
  // The dialog, its QR code and the copy button all work under the service's CSP.
  const violations = await watchViolations(page.context());
  const walletCode = page.waitForResponse((response) => /\/walletPay\.[\w-]+\.js$/.test(response.url()));
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  await expect(dialog).toContainText("You chose Deluxe Nothing for 100 $ZN.");
  await expect(dialog).not.toContainText("Congratulations");
  await expect(dialog).toContainText(
    "Paid in $ZN on Solana mainnet. Your wallet also charges a small network fee in SOL. A payment cannot be undone.",
  );
  await expect(dialog).toContainText("Once payment is confirmed, you'll receive +7 lottery spins!");
  await expect(dialog).toContainText("Because nothing is worth everything.");
  // No wallet in this browser: the request is the way, and its button the main one.
  await expect(dialog.getByRole("button", { name: "Create payment request" })).toHaveClass(/btn-primary/);

  const created = await requestPayment(page, "");
  const qr = dialog.getByRole("img", { name: /QR code/ });
  await expect(qr).toBeVisible();
  const box = await qr.locator("svg").boundingBox();
  expect(box?.width).toBeGreaterThanOrEqual(256);
  await expect(qr).toHaveAttribute("data-url", created.url);
  const link = dialog.getByRole("link", { name: "Open in wallet" });
  await expect(link).toHaveAttribute("href", created.url);
  await expect(link).toBeFocused();
  expect(created.url).toMatch(
    new RegExp(`^solana:${recipient}\\?amount=100&spl-token=${mint}&reference=${created.reference}&`),
  );
  // The store's address to check in the wallet, in groups; nothing to copy and pay by hand.
  await expect(dialog.locator("[data-address]")).toHaveText(recipient);
  await expect(dialog.getByRole("button", { name: /^Copy/ })).toHaveCount(0);
  await expect(dialog).toContainText("$ZN sent to it other than through this request is not credited.");
  await expect(dialog.locator("[data-payment-status]")).toHaveText("Waiting for your payment…");
  // The second way, for a wallet that did not fill in the transfer: the same payment as a
  // Solana Pay transaction request, behind a line that says when to use it.
  const transaction = dialog.getByRole("link", { name: "Open as a Solana Pay transaction" });
  await expect(transaction).toBeHidden();
  await dialog.getByText("The wallet did not fill in the payment?").click();
  await expect(transaction).toBeVisible();
  await expect(transaction).toHaveAttribute("href", `solana:${origin}/payments/${created.reference}/transaction`);
  // With no wallet in this browser the wallets' block stays hidden, once its code has looked.
  await walletCode;
  await expect(dialog.locator("[data-payment-wallets]")).toBeHidden();
  await expect(dialog.getByRole("button", { name: /^Pay with/ })).toHaveCount(0);
  await expectAxeClean(page);
  expect(await violations.events(page)).toEqual([]);
  expect(violations.console).toEqual([]);
});

test("the chain's payment confirms the request: the spins are credited once, and other visitors hear of it", async ({
  page,
  browser,
}) => {
  const otherVisitor = await (await browser.newContext()).newPage();
  await otherVisitor.goto(`${origin}/`);
  // Its socket opens when the page is idle, or at once when the auction card shows.
  await otherVisitor.locator("#auction").scrollIntoViewIfNeeded();
  await expect(otherVisitor.locator("#auction [data-connection]")).toHaveAttribute("data-connection", "live");
  // The confirmation and its toast work under the service's CSP, with no alert.
  const violations = await watchViolations(page.context());
  const alerts: string[] = [];
  page.on("dialog", (dialog) => {
    alerts.push(dialog.message());
    void dialog.accept();
  });
  await page.goto(`${origin}/`);
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");
  const { buy, dialog } = await openBuyDialog(page);
  const created = await requestPayment(page, "Patron Pat");
  const status = dialog.locator("[data-payment-status]");
  await expect(status).toHaveText("Waiting for your payment…");

  await pay(created.reference);
  // How soon it confirms is the product's promise, measured by npm run bench:payments; here it
  // only has to arrive.
  await expect(toast(page, "Payment Confirmed!")).toContainText(
    "+7 lottery spins. Because nothing is worth everything.",
  );
  await expect(status).toHaveText("Payment confirmed!");
  await expectConfirmedOutcome(dialog);
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
  await expect(toast(otherVisitor, "Patron Pat just bought Deluxe Nothing!")).toBeVisible();

  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(buy).toBeFocused();
  expect(alerts).toEqual([]);
  expect(await violations.events(page)).toEqual([]);
  expect(violations.console).toEqual([]);
  // A reload adds nothing more: the reference is credited on this browser.
  await page.reload();
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});

test.describe("on a phone, 390 x 844", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("the status line stays in view, the request fits, and the confirmed outcome replaces it at the top", async ({
    page,
  }) => {
    await page.goto(`${origin}/`);
    const { dialog } = await openBuyDialog(page);
    const created = await requestPayment(page, "");
    const status = dialog.locator("[data-payment-status]");
    await expect(status).toHaveText("Waiting for your payment…");
    await expect(status).toBeInViewport({ ratio: 1 });
    const size = await dialog.evaluate((box) => ({ content: box.scrollHeight, box: box.clientHeight }));
    test.info().annotations.push({ type: "request at 390x844", description: `${size.content} px in ${size.box} px` });
    expect(size.content).toBeLessThanOrEqual(size.box);
    // However far the dialog is scrolled, its head keeps the status in view.
    await dialog.evaluate((box) => box.scrollTo(0, box.scrollHeight));
    await expect(status).toBeInViewport({ ratio: 1 });

    await pay(created.reference);
    await expectConfirmedOutcome(dialog);
    await expect(status).toBeInViewport({ ratio: 1 });
    await expect(dialog.getByRole("button", { name: "View your certificate" })).toBeInViewport({ ratio: 1 });
    expect(await dialog.evaluate((box) => box.scrollHeight <= box.clientHeight)).toBe(true);
    await expectAxeClean(page);
    // The receipt: the tier's certificate, in place of the buy dialog.
    await dialog.getByRole("button", { name: "View your certificate" }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole("dialog", { name: "Certificate Preview - Deluxe Nothing" })).toBeVisible();
  });

  test("with a wallet in the browser, Pay with it is the main button, in view, above the request by QR code", async ({
    page,
  }) => {
    await installTestWallet(page, shop.chain, await shop.chain.wallet());
    await page.goto(`${origin}/`);
    const { dialog } = await openBuyDialog(page);
    const payWith = dialog.getByRole("button", { name: `Pay with ${TEST_WALLET_NAME}` });
    await expect(payWith).toHaveClass(/btn-primary/);
    await expect(payWith).toBeInViewport({ ratio: 1 });
    const byQr = dialog.getByRole("button", { name: "Pay by QR code or link instead" });
    await expect(byQr).toHaveClass(/btn-outline/);
    await expect(byQr).toBeInViewport({ ratio: 1 });
    expect((await payWith.boundingBox())?.y ?? Number.POSITIVE_INFINITY).toBeLessThan(
      (await byQr.boundingBox())?.y ?? 0,
    );
    await expectAxeClean(page);
  });
});

/** A wallet of the local chain holding `amount` base units of $ZN (none: no token account at all). */
async function buyerWallet(amount: bigint) {
  const buyer = await shop.chain.wallet();
  if (amount > 0n) await shop.chain.mintTo(mint, buyer.address, amount);
  return buyer;
}

test("a browser wallet pays in two clicks, Buy and Pay with, through the transaction request: credited once, axe-clean", async ({
  page,
}) => {
  const violations = await watchViolations(page.context());
  const buyer = await buyerWallet(250_000_000n);
  const wallet = await installTestWallet(page, shop.chain, buyer);
  await page.goto(`${origin}/`);
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");
  const { dialog } = await openBuyDialog(page);
  // Beside the form, and its main button: the wallet's button makes the request itself; the
  // request by QR code or link comes after it, as the second way.
  const payWith = dialog.getByRole("button", { name: `Pay with ${TEST_WALLET_NAME}` });
  await expect(payWith).toBeVisible();
  await expect(payWith).toHaveClass(/btn-primary/);
  const byQr = dialog.getByRole("button", { name: "Pay by QR code or link instead" });
  await expect(byQr).toHaveClass(/btn-outline/);
  await expect(dialog.getByRole("button", { name: "Create payment request" })).toHaveCount(0);
  const payWithTop = (await payWith.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
  expect(payWithTop).toBeLessThan((await byQr.boundingBox())?.y ?? 0);
  // The wallet's own icon, a data: URI, loads under the page's CSP.
  await expect
    .poll(() => payWith.locator("img").evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth))
    .toBeGreaterThan(0);
  await expectAxeClean(page);

  const creation = page.waitForResponse(
    (response) => response.url().endsWith("/payments") && response.request().method() === "POST",
  );
  await payWith.click();
  const created = (await (await creation).json()) as CreatedPayment;
  await expect(toast(page, "Payment Confirmed!")).toContainText("+7 lottery spins.");
  // A paid request takes no second payment: the wallet's button goes, and the request shown
  // meanwhile (QR and links, should the wallet have failed) with it.
  await expect(payWith).toBeHidden();
  await expect(dialog.locator("[data-payment-qr]")).toHaveAttribute("data-url", created.url);
  await expectConfirmedOutcome(dialog);
  expect(wallet.requests).toEqual([{ chain: "solana:mainnet", account: buyer.address }]);
  expect(await shop.chain.balance(buyer.address, mint)).toBe(150_000_000n);
  const status = (await (await fetch(`${origin}/payments/${created.reference}`)).json()) as PaymentStatusBody;
  expect(status).toMatchObject({ status: "confirmed", receivedAmount: "100" });
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
  await page.reload();
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
  expect(await violations.events(page)).toEqual([]);
  expect(violations.console).toEqual([]);
});

test("a declined signature returns to the dialog with the QR, the links and the wallet, axe-clean; a second try pays", async ({
  page,
}) => {
  const buyer = await buyerWallet(100_000_000n);
  const wallet = await installTestWallet(page, shop.chain, buyer);
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  await requestPayment(page, "");
  const payWith = dialog.getByRole("button", { name: `Pay with ${TEST_WALLET_NAME}` });
  const status = dialog.locator("[data-payment-status]");
  wallet.declineNext();
  await payWith.click();
  await expect(status).toHaveText(
    `You declined the payment in ${TEST_WALLET_NAME}. Nothing was sent: pay with ${TEST_WALLET_NAME} again, or with the QR code or link.`,
  );
  // Said at the top of the dialog, in view without scrolling it.
  await expect(status).toBeInViewport();
  await expect(dialog.getByRole("img", { name: /QR code/ })).toBeVisible();
  await expect(dialog.getByRole("link", { name: "Open in wallet", exact: true })).toBeVisible();
  await expect(payWith).toBeFocused();
  await expect(payWith).not.toHaveAttribute("aria-disabled");
  await expectAxeClean(page);
  expect(await shop.chain.balance(buyer.address, mint)).toBe(100_000_000n);

  await page.keyboard.press("Enter");
  await expect(status).toHaveText("Payment confirmed!");
  expect(wallet.requests).toHaveLength(2);
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});

test("a wallet without $ZN is told so before it is asked to sign anything", async ({ page }) => {
  const wallet = await installTestWallet(page, shop.chain, await buyerWallet(0n));
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  await requestPayment(page, "");
  await dialog.getByRole("button", { name: `Pay with ${TEST_WALLET_NAME}` }).click();
  await expect(dialog.locator("[data-payment-status]")).toHaveText(TRANSACTION_REQUEST_REFUSALS.noTokens.message);
  expect(wallet.requests).toEqual([]);
});

test("wallets that throw or never answer harm only themselves: the buttons come back, and the test wallet pays", async ({
  page,
}) => {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  const buyer = await buyerWallet(100_000_000n);
  await installMisbehavingWallets(page);
  const wallet = await installTestWallet(page, shop.chain, buyer);
  // The page's timers on a clock the test moves: the bound passes without waiting for it.
  await page.clock.install();
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  // The five that throw are left out; the hanging one is listed, its long name cut.
  const hanging = walletName(HANGING_WALLET_NAME);
  expect([...hanging]).toHaveLength(32);
  const payButtons = dialog.getByRole("button", { name: /^Pay with/ });
  await expect(payButtons).toHaveText([`Pay with ${hanging}`, `Pay with ${TEST_WALLET_NAME}`]);
  await expect(payButtons.first()).toHaveAccessibleName(`Pay with ${hanging}`);

  // Paused from here, the bound is measured on the test's clock alone: a running clock would add the
  // real seconds a busy machine takes between these steps, and pass the bound early.
  await page.clock.pauseAt(await page.evaluate(() => Date.now() + 1_000));
  await payButtons.first().click();
  const status = dialog.locator("[data-payment-status]");
  await expect(status).toHaveText(`Connecting to ${hanging}…`);
  await expect(payButtons.last()).toHaveAttribute("aria-disabled", "true");
  await page.clock.fastForward(WALLET_ANSWER_MS - 1_000);
  await expect(payButtons.last()).toHaveAttribute("aria-disabled", "true");
  await page.clock.fastForward(1_000);
  await expect(status).toHaveText(`${hanging} did not answer. Try again, or pay with the QR code or link.`);
  await page.clock.resume();
  for (const each of await payButtons.all()) await expect(each).not.toHaveAttribute("aria-disabled");
  await expect(payButtons.first()).toBeFocused();
  await expectAxeClean(page);

  await payButtons.last().click();
  await expect(toast(page, "Payment Confirmed!")).toContainText("+7 lottery spins.");
  await expect(status).toHaveText("Payment confirmed!");
  expect(wallet.requests).toEqual([{ chain: "solana:mainnet", account: buyer.address }]);
  expect(await shop.chain.balance(buyer.address, mint)).toBe(0n);
  expect(errors).toEqual([]);
});

test("a confirmed payment with a name shows on the Wall of Fame's Verified Patrons, with its total and transaction", async ({
  page,
}) => {
  await page.goto(`${origin}/`);
  await openBuyDialog(page);
  const created = await requestPayment(page, "Verified Vera");
  await pay(created.reference);
  await expect(toast(page, "Payment Confirmed!")).toBeVisible();
  const confirmed = (await (await fetch(`${origin}/payments/${created.reference}`)).json()) as PaymentStatusBody;
  expect(confirmed.status).toBe("confirmed");
  const signature = confirmed.signature ?? "";
  expect(signature).not.toBe("");

  const section = page.locator("section", { has: page.getByRole("heading", { level: 2, name: "Verified Patrons" }) });
  const row = section.getByRole("listitem").filter({ hasText: "Verified Vera" });
  // The service keeps its answer for up to 5 s (docs/design.md#8): a page loaded in between may miss it.
  await expect(async () => {
    await page.goto(`${origin}/leaderboard`);
    await expect(row).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: scaled(30_000) });
  await expect(section.locator("service-list")).toHaveAttribute("data-state", "ready");
  await expect(row).toContainText("100 $ZN");
  const link = row.getByRole("link", { name: "Latest transaction of Verified Vera (opens in a new tab)", exact: true });
  await expect(link).toHaveAttribute("href", `https://solscan.io/tx/${signature}`);
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(link).toHaveAttribute("rel", "noopener noreferrer");
  await expectAxeClean(page);
});

// content.spec.ts checks the pages with payments off.
for (const path of ["/", "/leaderboard"]) {
  test(`${path} logs no error in the console with payments on`, async ({ page }) => {
    expect(await consoleErrorsThroughPage(page, `${origin}${path}`)).toEqual([]);
  });
}

test("a reload while waiting comes back to the request: its confirmation still credits, once", async ({ page }) => {
  await page.goto(`${origin}/`);
  await openBuyDialog(page);
  const created = await requestPayment(page, "");
  await page.reload();
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");
  // The tier's open request is shown again, not a new one.
  const { dialog } = await openBuyDialog(page);
  await expect(dialog.getByRole("link", { name: "Open in wallet" })).toHaveAttribute("href", created.url);
  await page.keyboard.press("Escape");

  await pay(created.reference);
  await expect(toast(page, "Payment Confirmed!")).toBeVisible();
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
  await page.reload();
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});

test("an underpayment says what was received, and credits nothing", async ({ page }) => {
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  const created = await requestPayment(page, "");
  await pay(created.reference, 40_500_000n);
  await expect(dialog.locator("[data-payment-status]")).toHaveText("We received 40.5 $ZN, less than 100 $ZN.");
  await expect(dialog.locator("[data-payment-status]")).toBeFocused();
  await expect(dialog).toContainText("No spins were added for it. This request takes no more payments.");
  await expect(dialog.getByRole("img", { name: /QR code/ })).toBeHidden();
  await expect(dialog.getByRole("link", { name: "Open in wallet" })).toBeHidden();
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");
});

test("a refused name says Name Not Allowed and keeps the dialog's form", async ({ page }) => {
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  await page.keyboard.type("fuck");
  await page.keyboard.press("Enter");
  await expect(dialog.locator("[data-payment-status]")).toHaveText("Name Not Allowed");
  await expect(dialog.getByLabel("Name for the Wall of Fame (optional)")).toBeFocused();
});

test("an expired request says so, and a payment the service confirms later still credits", async ({ page }) => {
  // The service expires a request a minute past its end at the soonest: the watcher's tests cover
  // that with an injected clock (tests/service/payments/paymentWatcher.test.ts). Here the page's socket to
  // the real service carries, besides its messages, the expired status the service would send.
  const watched = new Set<string>();
  let toPage: WebSocketRoute | undefined;
  await page.routeWebSocket(/\/realtime(\?|$)/, (socket) => {
    toPage = socket;
    const server = socket.connectToServer();
    socket.onMessage((message) => {
      const sent = JSON.parse(String(message)) as { type: string; reference?: string };
      if (sent.type === "watchPayment" && sent.reference) watched.add(sent.reference);
      server.send(message);
    });
  });
  await page.goto(`${origin}/`);
  const { dialog } = await openBuyDialog(page);
  const created = await requestPayment(page, "");
  const status = dialog.locator("[data-payment-status]");
  await expect(status).toHaveText("Waiting for your payment…");
  await expect.poll(() => watched.has(created.reference)).toBe(true);
  const expired = {
    type: "payment",
    reference: created.reference,
    status: "expired",
    tierId: created.tierId,
    tierName: created.tierName,
    spins: created.spins,
    priceAmount: created.amount,
    expiresAt: created.expiresAt,
  };
  toPage?.send(JSON.stringify(expired));
  await expect(status).toHaveText("This payment request has expired. Start a new one.");
  await expect(status).toBeFocused();
  await expect(dialog.getByRole("img", { name: /QR code/ })).toBeHidden();
  await expect(dialog.getByRole("link", { name: "Open in wallet" })).toBeHidden();
  await expect(dialog.getByRole("button", { name: "Start a new payment request" })).toBeVisible();
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");

  // Expired is not final for the page: a payment made before the end may be confirmed after it.
  await pay(created.reference);
  await expect(toast(page, "Payment Confirmed!")).toBeVisible();
  await expect(status).toHaveText("Payment confirmed!");
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});
