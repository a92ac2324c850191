/**
 * The payment watcher against a local chain (docs/design.md#8): real signed transfers executed by
 * LiteSVM's Token and Token-2022 programs, read back through the JSON-RPC server as a public RPC
 * would serve them, judged and recorded on PostgreSQL and on PGlite. The watcher is stepped by the
 * test; one clock is the service's time and the chain's block time.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { beforeEach, describe, expect, it } from "vitest";
import { EXPIRY_GRACE_MS, MAX_BACKOFF_MS, RPC_UNHEALTHY_AFTER_MS } from "../../realtime/payments/watcher.ts";
import {
  openPaymentBench,
  type PaymentBench,
  POLL_MS,
  REQUEST_MINUTES,
  RPC_TIMEOUT_MS,
} from "./support/paymentBench.ts";
import {
  BACKENDS,
  cleanUpAfter,
  createTestLocation,
  locationForThisTest,
  type TestLocation,
  waitFor,
} from "./support/stores.ts";

const PRICE = 25_000_000n;

async function outcomeCount(bench: PaymentBench, outcome: string): Promise<number> {
  const metric = await bench.metrics.paymentOutcomes.get();
  return metric.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

function calls(bench: PaymentBench) {
  return Object.fromEntries(bench.rpc.calls);
}

describe.each(BACKENDS)("the payment watcher on %s", (backend) => {
  let location: TestLocation;

  beforeEach(async () => {
    location = await locationForThisTest(backend);
  });

  async function started(options: Parameters<typeof openPaymentBench>[1] = {}) {
    const bench = await openPaymentBench(location, options);
    expect(await bench.step()).toBe(0); // the lease
    expect(bench.watcher.isActive()).toBe(true);
    return bench;
  }

  it("confirms an exact payment once, records its signature and amount, and tells every listener", async () => {
    const bench = await started();
    const heard: string[] = [];
    bench.store.payments.onOutcome((reference) => heard.push(reference));
    const reference = await bench.request({ price: PRICE, name: "Nobody" });
    const payer = await bench.payer();
    const signature = await bench.pay(payer, PRICE, [reference]);

    expect(await bench.step()).toBe(POLL_MS);
    expect(await bench.find(reference)).toMatchObject({
      status: "confirmed",
      signature,
      amountReceived: PRICE,
      confirmedAt: new Date(bench.clock.ms).toISOString(),
    });
    await waitFor("the outcome's notification", () => heard.includes(reference));
    expect(await bench.chain.balance(bench.recipient, bench.mint)).toBe(PRICE);

    // Seen again on the next polls: nothing more is fetched or credited.
    bench.rpc.resetCalls();
    await bench.step();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 });
    expect(await outcomeCount(bench, "confirmed")).toBe(1);
    expect(heard).toEqual([reference]);
  });

  it("confirms an overpayment with what was received, and records an underpayment without confirming it", async () => {
    const bench = await started();
    const over = await bench.request({ price: PRICE });
    const under = await bench.request({ price: PRICE });
    const payer = await bench.payer();
    const pay = (reference: Address, amount: bigint) => bench.pay(payer, amount, [reference]);
    const overSignature = await pay(over, PRICE + 1n);
    const underSignature = await pay(under, PRICE - 1n);
    await bench.step();
    expect(await bench.find(over)).toMatchObject({
      status: "confirmed",
      signature: overSignature,
      amountReceived: PRICE + 1n,
    });
    expect(await bench.find(under)).toMatchObject({
      status: "underpaid",
      signature: underSignature,
      amountReceived: PRICE - 1n,
    });

    // A second transfer for the underpaid request credits nothing: the request has its transaction.
    await pay(under, 1n);
    await bench.step();
    expect((await bench.find(under)).status).toBe("underpaid");
    expect(await outcomeCount(bench, "not_open")).toBe(1);
  });

  it("ignores a transfer of another mint, one to another wallet and one that failed on chain, then confirms the right one", async () => {
    const bench = await started();
    const reference = await bench.request({ price: PRICE });
    const payer = await bench.payer();
    const otherMint = await bench.chain.createMint({ decimals: 6, program: "token" });
    await bench.chain.mintTo(otherMint, payer.address, PRICE);
    const otherWallet = (await generateKeyPairSigner()).address;
    const references = [reference];

    await bench.chain.pay({ payer, recipient: bench.recipient, mint: otherMint, amount: PRICE, references });
    await bench.chain.pay({ payer, recipient: otherWallet, mint: bench.mint, amount: PRICE, references });
    bench.rpc.resetCalls();
    await bench.step();
    // Neither touched the recipient's token account for the mint: nothing to fetch.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
    expect((await bench.find(reference)).status).toBe("waiting");

    // Wrong decimals: TransferChecked fails on chain, though the transaction is in the account's history.
    await bench.pay(payer, PRICE, references, 2);
    expect(bench.chain.executed.at(-1)?.meta?.err).toEqual({ InstructionError: [1, { Custom: 18 }] });
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
    expect((await bench.find(reference)).status).toBe("waiting");
    expect(await outcomeCount(bench, "failed")).toBe(1);

    const signature = await bench.pay(payer, PRICE, references);
    await bench.step();
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
  });

  it("confirms a payment in a Token-2022 mint, to the associated token account that program derives", async () => {
    const bench = await started({ program: "token-2022", decimals: 9 });
    expect(bench.info).toMatchObject({ decimals: 9, tokenProgram: "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" });
    expect(bench.info.tokenAccount).toBe(await bench.chain.tokenAccount(bench.recipient, bench.mint));
    const price = 1_000n * 10n ** 9n;
    const reference = await bench.request({ price });
    const payer = await bench.payer();
    const signature = await bench.pay(payer, price, [reference]);
    await bench.step();
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature, amountReceived: price });
  });

  it("lets one signature credit one request only, even offered for two or read twice", async () => {
    const bench = await started();
    const payer = await bench.payer();
    const stranger = (await generateKeyPairSigner()).address;
    const before = await bench.pay(payer, 1n, [stranger]);
    await bench.step();
    const first = await bench.request({ price: PRICE });
    const second = await bench.request({ price: PRICE });
    // One transfer carrying both references, paying both prices.
    const signature = await bench.pay(payer, 2n * PRICE, [second, first]);
    await bench.step();
    expect(await bench.find(first)).toMatchObject({ status: "confirmed", signature });
    expect(await bench.find(second)).toMatchObject({ status: "waiting", signature: null });

    // The cursor rewound (a lost write, an operator's repair): another watcher reads the transfer
    // again, and it credits nothing more.
    await bench.watcher.stop();
    const lease = await bench.store.payments.claimWatcher({
      tokenAccount: bench.info.tokenAccount,
      mint: bench.mint,
      recipient: bench.recipient,
    });
    if (!lease) throw new Error("no lease");
    await lease.skip(before, new Date(bench.clock.ms));
    await lease.release();
    const next = bench.spawnWatcher();
    expect(await next.step()).toBe(0);
    bench.rpc.resetCalls();
    await next.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1, getTransaction: 1 });
    expect(await bench.find(first)).toMatchObject({ status: "confirmed", signature });
    expect(await bench.find(second)).toMatchObject({ status: "waiting", signature: null });
    expect(await outcomeCount(bench, "already_recorded")).toBe(1);
    expect(await outcomeCount(bench, "confirmed")).toBe(1);
  });

  it("ignores a transfer whose reference is no request of ours, and moves past it", async () => {
    const bench = await started();
    const payer = await bench.payer();
    const stranger = (await generateKeyPairSigner()).address;
    await bench.pay(payer, PRICE, [stranger]);
    await bench.step();
    expect(await outcomeCount(bench, "unknown_reference")).toBe(1);
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
  });

  it("expires a request a minute after its end, records a payment after the end without confirming it, and confirms one made in time but seen late", async () => {
    const bench = await started();
    const heard: string[] = [];
    bench.store.payments.onOutcome((reference) => heard.push(reference));
    const unpaid = await bench.request({ price: PRICE });
    const late = await bench.request({ price: PRICE });
    const seenLate = await bench.request({ price: PRICE });
    const end = bench.clock.ms + REQUEST_MINUTES * 60_000;

    bench.clock.ms = end + EXPIRY_GRACE_MS - 1;
    await bench.step();
    expect((await bench.find(unpaid)).status).toBe("waiting");

    bench.clock.ms = end + EXPIRY_GRACE_MS + 1;
    await bench.step();
    for (const reference of [unpaid, late, seenLate]) expect((await bench.find(reference)).status).toBe("expired");
    await waitFor("the expiries' notifications", () => heard.length === 3);

    const payer = await bench.payer();
    const lateSignature = await bench.pay(payer, PRICE, [late]);
    // A block time before the end, though the watcher reads it only now (a lagging RPC node).
    const now = bench.clock.ms;
    bench.clock.ms = end - 1_000;
    const inTimeSignature = await bench.pay(payer, PRICE, [seenLate]);
    bench.clock.ms = now;
    await bench.step();
    expect(await bench.find(late)).toMatchObject({
      status: "expired",
      signature: lateSignature,
      amountReceived: PRICE,
    });
    expect(await bench.find(seenLate)).toMatchObject({ status: "confirmed", signature: inTimeSignature });
    expect(await outcomeCount(bench, "late")).toBe(1);
    expect(await outcomeCount(bench, "expired")).toBe(3);
  });

  it("backs off through 429 (as Retry-After asks), 500, a hung call and a refused connection, then confirms the payment once", async () => {
    const bench = await started();
    const healthHeard: boolean[] = [];
    bench.store.payments.onWatcherHealth((_account, ok) => healthHeard.push(ok));
    const reference = await bench.request({ price: PRICE });
    const payer = await bench.payer();
    const signature = await bench.pay(payer, PRICE, [reference]);

    bench.rpc.failNext(1, { status: 429, retryAfter: "7" });
    expect(await bench.step()).toBe(7_000);
    bench.rpc.failNext(1, { status: 429 });
    expect(await bench.step()).toBe(4 * POLL_MS);
    // The listing answers, the transaction's fetch fails: the cursor stays before it.
    bench.rpc.failNext(1, { status: 503 }, "getTransaction");
    expect(await bench.step()).toBe(8 * POLL_MS);
    expect((await bench.find(reference)).status).toBe("waiting");

    bench.rpc.failNext(1, { hang: true }, "getTransaction");
    const hung = bench.step();
    await waitFor(
      "the hung call",
      () => bench.timers.pendingDelays().includes(RPC_TIMEOUT_MS) && bench.rpc.calls.get("getTransaction") === 2,
    );
    expect(bench.timers.fireSetFor(RPC_TIMEOUT_MS)).toBe(1);
    expect(await hung).toBe(16 * POLL_MS);

    bench.clock.ms += RPC_UNHEALTHY_AFTER_MS;
    await bench.rpc.refuse();
    // The fifth failure in a row: POLL_MS x 2^5 is past the cap.
    expect(await bench.step()).toBe(MAX_BACKOFF_MS);
    expect(await bench.store.payments.rpcOk(bench.info.tokenAccount)).toBe(false);
    for (let failures = 0; failures < 3; failures++) expect(await bench.step()).toBe(MAX_BACKOFF_MS);
    await bench.rpc.accept();

    expect(await bench.step()).toBe(POLL_MS);
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
    expect(await bench.store.payments.rpcOk(bench.info.tokenAccount)).toBe(true);
    await waitFor("both changes of the chain's state", () => healthHeard.length === 2);
    expect(healthHeard).toEqual([false, true]);
    expect(await outcomeCount(bench, "confirmed")).toBe(1);
    const errors = await bench.metrics.paymentRpcErrors.get();
    expect(
      Object.fromEntries(errors.values.map((value) => [`${value.labels.method} ${value.labels.kind}`, value.value])),
    ).toEqual({
      "getSignaturesForAddress rate_limited": 2,
      "getTransaction server_error": 1,
      "getTransaction timeout": 1,
      "getSignaturesForAddress refused": 4,
    });
  });

  it("costs one RPC call a poll when idle, and one more per payment", async () => {
    const bench = await started();
    const payer = await bench.payer();
    bench.rpc.resetCalls();
    const idlePolls = 30; // a minute at the default PAYMENT_POLL_MS
    for (let poll = 0; poll < idlePolls; poll++) await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: idlePolls });

    bench.rpc.resetCalls();
    const payments = 5;
    for (let paid = 0; paid < payments; paid++) {
      const reference = await bench.request({ price: PRICE });
      await bench.pay(payer, PRICE, [reference]);
      await bench.step();
      expect((await bench.find(reference)).status).toBe("confirmed");
    }
    expect(calls(bench)).toEqual({ getSignaturesForAddress: payments, getTransaction: payments });
    console.log(
      `payment watcher RPC calls: idle ${(idlePolls * 60_000) / (idlePolls * POLL_MS)} a minute at PAYMENT_POLL_MS=${POLL_MS}; ` +
        `per payment 1 getTransaction (+ the poll's getSignaturesForAddress it shares with any other new transaction)`,
    );
  });

  it("on its first poll of an account skips the history from before its requests, unread", async () => {
    const bench = await openPaymentBench(location);
    const payer = await bench.payer();
    const stranger = (await generateKeyPairSigner()).address;
    await bench.pay(payer, PRICE, [stranger]);
    bench.clock.ms += 60 * 60_000;
    expect(await bench.step()).toBe(0);
    const reference = await bench.request({ price: PRICE });
    const signature = await bench.pay(payer, PRICE, [reference]);
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1, getTransaction: 1 });
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
  });
});

describe("the payment watcher behind a backlog", () => {
  it("pages through more than 1,000 new signatures and judges them oldest first", async () => {
    const location = await createTestLocation("postgres");
    cleanUpAfter(() => location.remove());
    const bench = await openPaymentBench(location);
    expect(await bench.step()).toBe(0);
    const payer = await bench.payer();
    const reference = await bench.request({ price: PRICE });
    // The request's transfer first, then 1,000 more: it sits on the second page.
    const signature = await bench.pay(payer, PRICE, [reference]);
    const stranger = (await generateKeyPairSigner()).address;
    for (let transfer = 0; transfer < 1_000; transfer++) {
      await bench.pay(payer, 1n, [stranger]);
    }
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2, getTransaction: 1_001 });
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
    expect(await outcomeCount(bench, "unknown_reference")).toBe(1_000);
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
  });
});
