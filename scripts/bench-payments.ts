/**
 * Two measures of real purchases (docs/design.md#8). First, a payment beside spam on the store's
 * token account: 0 transfers, 5,000 zero-amount transfers before the payment, 60,000 failed
 * transactions after it (as an RPC lists them): the seconds from the payment to its request's
 * "confirmed" and the service's RPC calls meanwhile, at the default PAYMENT_POLL_MS. Then, from a
 * payment's confirmation on the chain to the toast on the buyer's page. Starts the service with payments on against a local chain (LiteSVM behind a
 * JSON-RPC server in this process: scripts/harness/paymentShop.ts), opens `/` in Debian's
 * Chromium, and for each payment: "Buy Nothing" on Deluxe Nothing, "Create payment request", then
 * pays on the chain with the page's reference, as a wallet would. The transaction is confirmed when
 * the chain's `pay` returns (LiteSVM executes it at once); the page records when the "Payment
 * Confirmed!" toast enters the document (a MutationObserver, on the same machine clock). Prints
 * p50, p99 and max per `PAYMENT_POLL_MS`: the default 2,000 and 200.
 *
 * First of all, what the RPC costs (docs/decisions/2026-11-28-the-rpc-is-a-budget.md): calls per
 * transaction-request POST (500 from 50 wallets in 5 s, at the default PAYMENT_RPC_CALLS_PER_SECOND
 * and unbudgeted) and per open request per poll (100 and 700 waiting, nothing landing).
 *
 * Usage: npm run bench:payments [-- --payments N]   (50 by default)
 * Needs a site built with a real payment address (dist/): run `npm run build:e2e` first. All traffic goes to 127.0.0.1; every wait
 * is bounded; the service is stopped on exit.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { chromium, type Page } from "@playwright/test";
import { latencyText } from "./bench-realtime/format.ts";
import { LatencyHistogram } from "./bench-realtime/latencyHistogram.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";
import { describeMachine } from "./harness/machine.ts";
import { type PaymentShop, startPaymentShop } from "./harness/paymentShop.ts";

const POLL_INTERVALS_MS = [2_000, 200];
const TOAST_WITHIN_MS = 10_000;
const CONFIRMED_TOAST = "Payment Confirmed!";
const WATCHES_PER_PAGE = 15;

const SPAM_POLL_MS = 2_000;
/** Deluxe Nothing, 100 $ZN in 6 decimals: what each transaction request's wallet holds. */
const DELUXE_PRICE_BASE_UNITS = 100_000_000n;
const CONFIRMED_WITHIN_MS = 60_000;

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
      // A socket may start 16 payment watches a minute (service/payments/sockets.ts): a new page, a new socket.
      if (done > 0 && done % WATCHES_PER_PAGE === 0) await page.reload();
      latencies.record(await onePayment(page, shop));
    }
    return `PAYMENT_POLL_MS ${pollMs}: ${payments} payments, confirmation to toast ${latencyText(latencies.summary())}`;
  } finally {
    await browser.close();
    await shop.stop();
  }
}

/** One payment beside spam: made before it, or landing after it before the next poll. */
async function paymentBesideSpam(shop: PaymentShop, spam: { before: number; failedAfter: number }): Promise<string> {
  const created = await fetch(`${shop.origin}/payments`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ tierId: "2" }),
  });
  if (created.status !== 201) throw new Error(`POST /payments answered ${created.status}`);
  const { reference } = (await created.json()) as { reference: string };
  for (let sent = 0; sent < spam.before; sent++) await shop.spam({ amount: 0n });
  shop.rpc.resetCalls();
  const paidAt = performance.now();
  await shop.pay(reference);
  if (spam.failedAfter > 0) shop.chain.repeatFailed(await shop.spam({ fails: true }), spam.failedAfter - 1);
  for (;;) {
    const status = (await (await fetch(`${shop.origin}/payments/${reference}`)).json()) as { status: string };
    if (status.status === "confirmed") break;
    if (performance.now() - paidAt > CONFIRMED_WITHIN_MS)
      throw new Error(`not confirmed within ${CONFIRMED_WITHIN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = ((performance.now() - paidAt) / 1000).toFixed(2);
  const calls = Object.fromEntries([...shop.rpc.calls].sort());
  return `| ${spam.before.toLocaleString("en")} zero-amount before | ${spam.failedAfter.toLocaleString("en")} failed after | ${seconds} s | ${JSON.stringify(calls)} |`;
}

async function measureSpam(): Promise<string[]> {
  const shop = await startPaymentShop({ pollMs: SPAM_POLL_MS });
  try {
    const rows = [
      "| spam before the payment | spam after it | payment to confirmed | RPC calls meanwhile |",
      "| --- | --- | --- | --- |",
    ];
    for (const spam of [
      { before: 0, failedAfter: 0 },
      { before: 5_000, failedAfter: 0 },
      { before: 0, failedAfter: 60_000 },
    ]) {
      rows.push(await paymentBesideSpam(shop, spam));
    }
    return rows;
  } finally {
    await shop.stop();
  }
}

async function createRequest(shop: PaymentShop): Promise<string> {
  const created = await fetch(`${shop.origin}/payments`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ tierId: "2" }),
  });
  if (created.status !== 201) throw new Error(`POST /payments answered ${created.status}`);
  return ((await created.json()) as { reference: string }).reference;
}

const totalCalls = (shop: PaymentShop) => [...shop.rpc.calls.values()].reduce((sum, count) => sum + count, 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** 500 transaction requests from 50 wallets to 10 requests, in 10 waves 500 ms apart: calls per POST. */
async function transactionRequestCost(budget: string): Promise<string> {
  const shop = await startPaymentShop({ pollMs: SPAM_POLL_MS, env: { PAYMENT_RPC_CALLS_PER_SECOND: budget } });
  try {
    const references = await Promise.all(Array.from({ length: 10 }, () => createRequest(shop)));
    const wallets = [];
    for (let made = 0; made < 50; made++) {
      const wallet = await shop.chain.wallet();
      await shop.chain.mintTo(shop.mint, wallet.address, DELUXE_PRICE_BASE_UNITS);
      wallets.push(wallet);
    }
    await sleep(1_000);
    shop.rpc.resetCalls();
    const answers = new Map<number, number>();
    const startedAt = performance.now();
    for (let wave = 0; wave < 10; wave++) {
      const waveAt = performance.now();
      await Promise.all(
        wallets.map(async (wallet, index) => {
          const response = await fetch(`${shop.origin}/payments/${references[index % references.length]}/transaction`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ account: wallet.address }),
          });
          await response.arrayBuffer();
          answers.set(response.status, (answers.get(response.status) ?? 0) + 1);
        }),
      );
      await sleep(Math.max(0, 500 - (performance.now() - waveAt)));
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const calls = totalCalls(shop);
    return `| transaction requests, budget ${budget}/s | 500 POSTs in ${seconds.toFixed(1)} s | ${calls} (${(calls / seconds).toFixed(2)}/s) | ${(calls / 500).toFixed(3)} per POST | ${JSON.stringify(Object.fromEntries(answers))} |`;
  } finally {
    await shop.stop();
  }
}

/** `waiting` open requests, nothing landing, for a minute of polls: calls per open request per poll. */
async function openRequestCost(waiting: number, budget: string): Promise<string> {
  const shop = await startPaymentShop({ pollMs: SPAM_POLL_MS, env: { PAYMENT_RPC_CALLS_PER_SECOND: budget } });
  try {
    for (let made = 0; made < waiting; made++) await createRequest(shop);
    // A minute holds every kind of call: a read of the store's account each poll, each request once.
    await sleep(5_000);
    shop.rpc.resetCalls();
    const seconds = 60;
    await sleep(seconds * 1000);
    const calls = totalCalls(shop);
    const polls = (seconds * 1000) / SPAM_POLL_MS;
    return `| ${waiting.toLocaleString("en")} open requests, budget ${budget}/s | ${seconds} s, ${polls} polls | ${calls} (${(calls / seconds).toFixed(2)}/s) | ${(calls / (waiting * polls)).toFixed(4)} per open request per poll | |`;
  } finally {
    await shop.stop();
  }
}

// The figures mean little while other work runs: the load average says how quiet it was.
console.log({ ...describeMachine(), loadAverage: os.loadavg() });
console.log(`The RPC's cost, PAYMENT_POLL_MS ${SPAM_POLL_MS} (the default budget is 3 calls a second):`);
console.log("| load | for | RPC calls | per unit | answers |");
console.log("| --- | --- | --- | --- | --- |");
for (const budget of ["3", "100000"]) console.log(await transactionRequestCost(budget));
// 700: one client's share of the 1,000 open requests (service/http/fairShares.ts), all this bench can open.
for (const waiting of [100, 700]) console.log(await openRequestCost(waiting, "3"));
console.log(`A payment beside spam on the store's token account, PAYMENT_POLL_MS ${SPAM_POLL_MS}:`);
for (const row of await measureSpam()) console.log(row);
for (const pollMs of POLL_INTERVALS_MS) console.log(await measure(pollMs));
