/**
 * Real purchases in the browser (docs/design.md#8, docs/product.md#4-purchase): a service of its
 * own with payments on, its SOLANA_RPC_URL the JSON-RPC server of a local chain (LiteSVM) in this
 * process, on the site `npm run build` left in dist/. The suite's shared server keeps payments off
 * (purchase.spec.ts checks the alert there). The test pays on the chain with the reference the page
 * got, as a wallet would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test, type WebSocketRoute } from "@playwright/test";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { stopChild, waitForOk } from "../../scripts/support/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "../../scripts/support/liftedLimits.ts";
import { freePort } from "../../scripts/support/ports.ts";
import type { CreatedPayment } from "../../src/lib/payments.ts";
import { type ChainRpcServer, startChainRpcServer } from "../realtime/support/chainRpcServer.ts";
import { LocalChain } from "../realtime/support/localChain.ts";
import { toast } from "./fixtures.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
/** Deluxe Nothing: 100 $ZN, +7 spins; the mint has 6 decimals. */
const DELUXE_BASE_UNITS = 100_000_000n;

test.describe.configure({ mode: "serial" });

let workDir: string;
let chain: LocalChain;
let rpc: ChainRpcServer;
let mint: Address;
let recipient: Address;
let payer: KeyPairSigner;
let service: ChildProcess;
let origin: string;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  workDir = await mkdtemp(join(tmpdir(), "nothing-payments-e2e-"));
  chain = await LocalChain.create();
  rpc = await startChainRpcServer(chain);
  mint = await chain.createMint({ decimals: 6, program: "token" });
  recipient = (await generateKeyPairSigner()).address;
  payer = await chain.wallet();
  await chain.mintTo(mint, payer.address, 10n ** 15n);
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = spawn(process.execPath, ["realtime/main.ts"], {
    env: {
      ...process.env,
      ...LIFTED_LIMITS_ENV,
      PORT: String(port),
      HOST: "127.0.0.1",
      // /metrics on a free port of its own: the suite's other services hold theirs.
      METRICS_PORT: "0",
      DATA_DIR: join(workDir, "data"),
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
      SOLANA_RPC_URL: rpc.url,
      PUBLIC_PAYMENT_ADDRESS: recipient,
      PUBLIC_CONTRACT_ADDRESS: mint,
      PAYMENT_POLL_MS: "200",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForOk(`${origin}/readyz`, service, "the realtime service with payments on", 150_000);
  await expect
    .poll(async () => ((await (await fetch(`${origin}/payments/config`)).json()) as { available: boolean }).available, {
      timeout: 20_000,
    })
    .toBe(true);
});

test.afterAll(async () => {
  if (service) await stopChild(service);
  await rpc?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const card = (page: Page, tierName: string) =>
  page.locator("#products article").filter({ has: page.getByRole("heading", { name: tierName, exact: true }) });

function pay(reference: string, amount = DELUXE_BASE_UNITS) {
  return chain.pay({ payer, recipient, mint, amount, references: [reference as Address] });
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

/** The wheel's counter, scrolled to: its island hydrates when visible (the server HTML says 1). */
async function spinsShown(page: Page) {
  const counter = page.locator("#lottery [data-spin-counter]");
  await counter.scrollIntoViewIfNeeded();
  return counter;
}

test("Buy opens the payment dialog, the chain's payment confirms it within 3 s, and the spins are credited", async ({
  page,
  browser,
}) => {
  const otherVisitor = await (await browser.newContext()).newPage();
  await otherVisitor.goto(`${origin}/`);
  // Its socket opens when the page is idle, or at once when the auction card shows.
  await otherVisitor.locator("#auction").scrollIntoViewIfNeeded();
  await expect(otherVisitor.locator("#auction [data-connection]")).toHaveAttribute("data-connection", "live", {
    timeout: 15_000,
  });
  const alerts: string[] = [];
  page.on("dialog", (dialog) => {
    alerts.push(dialog.message());
    void dialog.accept();
  });
  await page.goto(`${origin}/`);
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");
  const { buy, dialog } = await openBuyDialog(page);
  await expect(dialog).toContainText("Congratulations! You selected Deluxe Nothing for 100 $ZN!");
  await expect(dialog).toContainText("Once payment is confirmed, you'll receive +7 lottery spins!");
  await expect(dialog).toContainText("Because nothing is worth everything.");

  const created = await requestPayment(page, "Patron Pat");
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
  await expect(dialog.locator("[data-address]")).toHaveText(recipient);
  await expect(dialog.getByRole("button", { name: "Copy payment address" })).toHaveAttribute("data-copy", recipient);
  const status = dialog.locator("[data-payment-status]");
  await expect(status).toHaveText("Waiting for your payment…");
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  expect(
    results.violations.map((violation) => ({ id: violation.id, targets: violation.nodes.map((node) => node.target) })),
  ).toEqual([]);

  await pay(created.reference);
  const paidAt = Date.now();
  await expect(toast(page, "Payment Confirmed!")).toContainText(
    "+7 lottery spins. Because nothing is worth everything.",
    {
      timeout: 3_000,
    },
  );
  console.log(`payment on the local chain to the page's toast: ${Date.now() - paidAt} ms`);
  await expect(status).toHaveText("Payment confirmed!");
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
  await expect(toast(otherVisitor, "Patron Pat just bought Deluxe Nothing!")).toBeVisible();

  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(buy).toBeFocused();
  expect(alerts).toEqual([]);
  // A reload adds nothing more: the reference is credited on this browser.
  await page.reload();
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});

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
  await expect(toast(page, "Payment Confirmed!")).toBeVisible({ timeout: 3_000 });
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
  // that with an injected clock (tests/realtime/paymentWatcher.test.ts). Here the page's socket to
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
  await expect(await spinsShown(page)).toHaveText("1 Spin Remaining");

  // Expired is not final for the page: a payment made before the end may be confirmed after it.
  await pay(created.reference);
  await expect(toast(page, "Payment Confirmed!")).toBeVisible({ timeout: 3_000 });
  await expect(status).toHaveText("Payment confirmed!");
  await expect(await spinsShown(page)).toHaveText("8 Spins Remaining");
});
