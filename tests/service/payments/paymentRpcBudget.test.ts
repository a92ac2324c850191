/**
 * The RPC budget from outside (docs/decisions/2026-11-28-the-rpc-is-a-budget.md): a flood of
 * transaction requests, which any web page can make its visitors send, costs the store's RPC quota
 * at most PAYMENT_RPC_CALLS_PER_SECOND, watcher included; what the budget cannot spare is answered
 * 503 with a Retry-After, and the watcher still confirms a payment made meanwhile. While the
 * watcher catches up (after an outage, every request due a lookup) requests keep a third of the rate.
 */
import { getBase64Encoder, getTransactionDecoder, type KeyPairSigner, signTransaction } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { TIERS } from "../../../src/data/tiers.ts";
import type { CreatedPayment } from "../../../src/lib/payments.ts";
import { openPaymentService, type PaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import { locationForThisTest, waitFor } from "../harness/stores.ts";

const DECIMALS = 6;
const DELUXE = (() => {
  const tier = TIERS.find((candidate) => candidate.id === 2);
  if (!tier) throw new Error("no tier 2");
  return tier;
})();
const PRICE = BigInt(DELUXE.price) * 10n ** BigInt(DECIMALS);
const CALLS_PER_SECOND = 3;
const BUYERS = 50;
const WAVES = 10;
const WAVE_MS = 500;
/** Open requests all due a lookup: 20 s of the budget's whole rate, 30 s of the watcher's two thirds. */
const CATCHING_UP_REQUESTS = 60;
/** PAYMENT_POLL_MS's least. */
const QUICKEST_POLL_MS = 100;

interface Flood {
  seconds: number;
  calls: Record<string, number>;
  statuses: Map<number, number>;
  built: { base64: string; buyer: KeyPairSigner; reference: string } | null;
}

async function openShop(requestCount: number, pollMs = 1_000) {
  const shop = await openPaymentService(await locationForThisTest("pglite"), {
    decimals: DECIMALS,
    settings: { rpcCallsPerSecond: CALLS_PER_SECOND, pollMs },
    // Every wallet here is 127.0.0.1: one network, which may otherwise cause a tenth of the reads.
    config: { networkSharePercent: 100 },
    prepare: async ({ chain, mint, recipient }) => {
      await chain.mintTo(mint, recipient, 0n);
    },
  });
  await waitForPaymentsAvailable(shop.url);
  const requests: CreatedPayment[] = [];
  for (let made = 0; made < requestCount; made++) {
    const response = await shop.post("/payments", { tierId: String(DELUXE.id) });
    expect(response.status).toBe(201);
    requests.push((await response.json()) as CreatedPayment);
  }
  const buyers: KeyPairSigner[] = [];
  for (let made = 0; made < BUYERS; made++) {
    const buyer = await shop.chain.wallet();
    await shop.chain.mintTo(shop.mint, buyer.address, PRICE);
    buyers.push(buyer);
  }
  return { shop, requests, buyers };
}

/** WAVES waves of a transaction request from every buyer, WAVE_MS apart, counted from a reset of the RPC's calls. */
async function flood(shop: PaymentService, requests: CreatedPayment[], buyers: KeyPairSigner[]): Promise<Flood> {
  shop.rpc.resetCalls();
  const startedAt = performance.now();
  const statuses = new Map<number, number>();
  let built: Flood["built"] = null;
  for (let wave = 0; wave < WAVES; wave++) {
    const waveStart = performance.now();
    await Promise.all(
      buyers.map(async (buyer, index) => {
        const reference = (requests[index % requests.length] as CreatedPayment).reference;
        const response = await shop.post(`/payments/${reference}/transaction`, { account: buyer.address });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const body = (await response.json()) as { transaction?: string; error?: string };
        if (response.status === 200 && body.transaction && !built)
          built = { base64: body.transaction, buyer, reference };
        if (response.status === 503) {
          expect(body.error).toBe("busy");
          expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        } else expect(response.status).toBe(200);
      }),
    );
    const rest = WAVE_MS - (performance.now() - waveStart);
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const calls = Object.fromEntries(shop.rpc.calls);
  const total = Object.values(calls).reduce((sum, count) => sum + count, 0);
  console.log(
    `${BUYERS * WAVES} transaction requests in ${seconds.toFixed(1)} s: ${total} RPC calls ` +
      `(${(total / seconds).toFixed(2)}/s; ${JSON.stringify(calls)}); answers ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  // One bucket (a second of calls) may be spent at once; beyond it, the rate.
  expect(total).toBeLessThanOrEqual(CALLS_PER_SECOND * seconds + CALLS_PER_SECOND);
  expect(calls.getLatestBlockhash ?? 0).toBeLessThanOrEqual(Math.ceil(seconds / 5) + 1);
  return { seconds, calls, statuses, built };
}

describe("the RPC budget", () => {
  it(`holds ${BUYERS * WAVES} transaction requests from ${BUYERS} wallets to ${CALLS_PER_SECOND} calls a second, watcher included`, async () => {
    const { shop, requests, buyers } = await openShop(10);
    // The watcher's first lookups, then a bucket refilled: the flood on a watcher at rest.
    await waitFor(
      "the watcher's first lookups",
      () => (shop.rpc.calls.get("getSignaturesForAddress") ?? 0) >= requests.length + 1,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const { statuses, built } = await flood(shop, requests, buyers);
    // How many the budget serves depends on when the watcher's polls fall; some always are.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);

    // The watcher's share came first: a payment signed from one of the answers is confirmed.
    const answer = built as Flood["built"];
    if (!answer) throw new Error("no transaction was built");
    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(answer.base64));
    await shop.chain.submit(await signTransaction([answer.buyer.keyPair], transaction));
    await waitFor("the payment's confirmation", async () => {
      const status = (await (await shop.get(`/payments/${answer.reference}`)).json()) as { status: string };
      return status.status === "confirmed";
    });
  });

  it(`answers transaction requests from their floor while the watcher catches up with ${CATCHING_UP_REQUESTS} requests`, async () => {
    // As after a long outage: every request is due a lookup, more than the flood lasts at the rate,
    // and the watcher polls at its quickest, taking every whole call the bucket holds each time.
    const { shop, requests, buyers } = await openShop(CATCHING_UP_REQUESTS, QUICKEST_POLL_MS);
    const lookedUpBefore = shop.rpc.calls.get("getSignaturesForAddress") ?? 0;
    const { statuses, calls } = await flood(shop, requests, buyers);
    // Still catching up when the flood ended (each request looked up once, and the account once).
    expect(lookedUpBefore + (calls.getSignaturesForAddress ?? 0)).toBeLessThan(CATCHING_UP_REQUESTS + 1);
    // Before the floor every one of them answered 503 until the watcher was done.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
  });
});
