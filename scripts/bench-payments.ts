/**
 * From a payment's confirmation on the chain to the toast on the buyer's page (issue 22;
 * docs/design.md#8). Starts the service with payments on against a local chain (LiteSVM behind a
 * JSON-RPC server in this process: tests/e2e/support/paymentShop.ts), opens `/` in Debian's
 * Chromium, and for each payment: "Buy Nothing" on Deluxe Nothing, "Create payment request", then
 * pays on the chain with the page's reference, as a wallet would. The transaction is confirmed when
 * the chain's `pay` returns (LiteSVM executes it at once); the page records when the "Payment
 * Confirmed!" toast enters the document (a MutationObserver, on the same machine clock). Prints
 * p50, p99 and max per `PAYMENT_POLL_MS`: the default 2,000 and 200.
 *
 * Usage: npm run bench:payments [-- --payments N]   (50 by default)
 * Needs a built site (dist/): run `npm run build` first. All traffic goes to 127.0.0.1; every wait
 * is bounded; the service is stopped on exit.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { chromium, type Page } from "@playwright/test";
import { type PaymentShop, startPaymentShop } from "../tests/e2e/support/paymentShop.ts";
import { latencyText } from "./bench-realtime/format.ts";
import { LatencyHistogram } from "./bench-realtime/latencyHistogram.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";
import { describeMachine } from "./support/machine.ts";

const POLL_INTERVALS_MS = [2_000, 200];
const TOAST_WITHIN_MS = 10_000;
const CONFIRMED_TOAST = "Payment Confirmed!";
const WATCHES_PER_PAGE = 15;

const { values } = parseArgs({ options: { payments: { type: "string", default: "50" } } });
const payments = Number(values.payments);
if (!Number.isInteger(payments) || payments < 1 || payments > 1_000) {
  throw new Error(`--payments must be a whole number from 1 to 1000, got ${values.payments}`);
}

/** Records, in the page, when each confirmed toast enters the document. */
function watchToasts(title: string) {
  const seen: number[] = [];
  (window as unknown as { confirmedToastsAt: number[] }).confirmedToastsAt = seen;
  new MutationObserver((changes) => {
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node instanceof HTMLElement && node.matches("[data-toast]") && node.textContent?.includes(title)) {
          seen.push(Date.now());
        }
      }
    }
  }).observe(document, { childList: true, subtree: true });
}

async function toastsSeen(page: Page): Promise<number[]> {
  return page.evaluate(() => (window as unknown as { confirmedToastsAt: number[] }).confirmedToastsAt);
}

/** One purchase: the request made through the dialog, paid on the chain; ms from confirmation to toast. */
async function onePayment(page: Page, shop: PaymentShop): Promise<number> {
  const card = page.locator("#products article").filter({ has: page.getByRole("heading", { name: "Deluxe Nothing" }) });
  await card.getByRole("button", { name: "Buy Nothing" }).click();
  const dialog = page.getByRole("dialog", { name: "Buy Deluxe Nothing" });
  const created = page.waitForResponse(
    (response) => response.url().endsWith("/payments") && response.request().method() === "POST",
  );
  await dialog.getByRole("button", { name: "Create payment request" }).click();
  const response = await created;
  if (response.status() !== 201) throw new Error(`POST /payments answered ${response.status()}`);
  const { reference } = (await response.json()) as { reference: string };
  await dialog.locator("[data-payment-status]").getByText("Waiting for your payment…").waitFor();
  const before = (await toastsSeen(page)).length;
  await shop.pay(reference);
  const confirmedAt = Date.now();
  await page.waitForFunction(
    (count) => (window as unknown as { confirmedToastsAt: number[] }).confirmedToastsAt.length > count,
    before,
    { timeout: TOAST_WITHIN_MS },
  );
  const shownAt = (await toastsSeen(page))[before] ?? Number.NaN;
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
  return shownAt - confirmedAt;
}

async function measure(pollMs: number): Promise<string> {
  const shop = await startPaymentShop({ pollMs });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.addInitScript(watchToasts, CONFIRMED_TOAST);
    await page.goto(`${shop.origin}/`);
    const latencies = new LatencyHistogram();
    for (let done = 0; done < payments; done += 1) {
      // A socket may start 16 payment watches a minute (realtime/payments/sockets.ts): a new page, a new socket.
      if (done > 0 && done % WATCHES_PER_PAGE === 0) await page.reload();
      latencies.record(await onePayment(page, shop));
    }
    return `PAYMENT_POLL_MS ${pollMs}: ${payments} payments, confirmation to toast ${latencyText(latencies.summary())}`;
  } finally {
    await browser.close();
    await shop.stop();
  }
}

// The figures mean little while other work runs: the load average says how quiet it was.
console.log({ ...describeMachine(), loadAverage: os.loadavg() });
for (const pollMs of POLL_INTERVALS_MS) console.log(await measure(pollMs));
