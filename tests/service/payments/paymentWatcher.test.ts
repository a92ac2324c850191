/**
 * The payment watcher against a local chain (docs/deploying.md, "Payments"): real signed transfers
 * executed by LiteSVM's Token and Token-2022 programs, read back through the JSON-RPC server as a
 * public RPC would serve them, found by their request's reference, judged and recorded on
 * PostgreSQL and on PGlite. The watcher is stepped by the test; one clock is the service's time and
 * the chain's block time.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { beforeEach, describe, expect, it } from "vitest";
import {
  EXPIRY_GRACE_MS,
  FORGET_EVERY_MS,
  HEARTBEAT_MS,
  LOOKUPS_PER_POLL,
  MAX_BACKOFF_MS,
  MAX_JUDGE_TRIES,
  QUIET_LOOKUP_MS,
} from "../../../service/payments/watcher.ts";
import type { RpcState } from "../../../service/storage/payments.ts";
import {
  openPaymentBench,
  type PaymentBench,
  POLL_MS,
  REQUEST_MINUTES,
  RETENTION_MS,
  RPC_TIMEOUT_MS,
  UNREACHABLE_AFTER_MS,
} from "../harness/paymentBench.ts";
import {
  BACKENDS,
  cleanUpAfter,
  createTestLocation,
  locationForThisTest,
  type TestLocation,
  waitFor,
} from "../harness/stores.ts";

const PRICE = 25_000_000n;

async function outcomeCount(bench: PaymentBench, outcome: string): Promise<number> {
  const metric = await bench.metrics.paymentOutcomes.get();
  return metric.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

function calls(bench: PaymentBench) {
  return Object.fromEntries(bench.rpc.calls);
}

/** Steps the watcher `polls` times, POLL_MS apart on the bench's clock. */
async function idle(bench: PaymentBench, polls: number) {
  for (let poll = 0; poll < polls; poll++) {
    bench.clock.ms += POLL_MS;
    await bench.step();
  }
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

  it("confirms an exact payment found by its reference once, tells every listener, then looks it up no more", async () => {
    const bench = await started();
    const heard: string[] = [];
    bench.store.payments.onOutcome((reference) => heard.push(reference));
    const reference = await bench.request({ price: PRICE, name: "Nobody" });
    const payer = await bench.payer();
    const signature = await bench.pay(payer, PRICE, [reference]);

    bench.rpc.resetCalls();
    expect(await bench.step()).toBe(POLL_MS);
    // The store's token account's newest transaction, then the reference's listing, then the transfer.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2, getTransaction: 1 });
    expect(await bench.find(reference)).toMatchObject({
      status: "confirmed",
      signature,
      amountReceived: PRICE,
      confirmedAt: new Date(bench.clock.ms).toISOString(),
    });
    await waitFor("the outcome's notification", () => heard.includes(reference));
    expect(await bench.chain.balance(bench.recipient, bench.mint)).toBe(PRICE);

    // Confirmed, it is no longer looked up: nothing more is fetched or credited.
    bench.rpc.resetCalls();
    await idle(bench, 5);
    expect(calls(bench)).toEqual({});
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
    expect(await outcomeCount(bench, "underpaid")).toBe(1);
  });

  it("judges once a transfer of another mint, one to another wallet and one that failed on chain, then confirms the right one", async () => {
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
    // Both carry the reference, neither paid the recipient's token account for the mint.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2, getTransaction: 2 });
    expect((await bench.find(reference)).status).toBe("waiting");
    expect(await outcomeCount(bench, "no_payment")).toBe(2);

    // Wrong decimals: TransferChecked fails on chain; its listing says so, and nothing is fetched.
    await bench.pay(payer, PRICE, references, 2);
    expect(bench.chain.executed.at(-1)?.meta?.err).toEqual({ InstructionError: [1, { Custom: 18 }] });
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 });
    expect((await bench.find(reference)).status).toBe("waiting");
    expect(await outcomeCount(bench, "failed")).toBe(1);

    // Each was judged once, and nothing new landed: the next poll reads the store's account alone.
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
    // A minute on, the reference is looked up anyway (an index may list late): listed, none fetched.
    bench.clock.ms += QUIET_LOOKUP_MS;
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 });

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

  it("lets one signature credit one request only, even listed under two references and looked up by a new watcher", async () => {
    const bench = await started();
    const payer = await bench.payer();
    const first = await bench.request({ price: PRICE });
    const second = await bench.request({ price: PRICE });
    // One transfer carrying both references, paying both prices.
    const signature = await bench.pay(payer, 2n * PRICE, [second, first]);
    bench.rpc.resetCalls();
    await bench.step();
    // Fetched once, under the first reference looked up; the second lists it as already credited.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 3, getTransaction: 1 });
    expect(await bench.find(first)).toMatchObject({ status: "confirmed", signature });
    expect(await bench.find(second)).toMatchObject({ status: "waiting", signature: null });

    // Another watcher takes over: the second request is looked up again and the transfer credits nothing more.
    await bench.watcher.stop();
    const next = bench.spawnWatcher();
    expect(await next.step()).toBe(0);
    bench.rpc.resetCalls();
    await next.step();
    // The new watcher has not seen the store's account yet: it reads it, and looks the request up.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 });
    expect(await bench.find(first)).toMatchObject({ status: "confirmed", signature });
    expect(await bench.find(second)).toMatchObject({ status: "waiting", signature: null });
    expect(await outcomeCount(bench, "confirmed")).toBe(1);
  });

  it("expires a request only after a lookup that started a minute past its end found nothing", async () => {
    const bench = await started();
    const heard: string[] = [];
    bench.store.payments.onOutcome((reference) => heard.push(reference));
    const unpaid = await bench.request({ price: PRICE });
    const end = bench.clock.ms + REQUEST_MINUTES * 60_000;

    bench.clock.ms = end + EXPIRY_GRACE_MS - 1;
    await bench.step();
    expect((await bench.find(unpaid)).status).toBe("waiting");

    // The lookup after the grace fails: the request waits for one that answers.
    bench.clock.ms = end + EXPIRY_GRACE_MS + 1;
    bench.rpc.failNext(1, { status: 503 }, "getSignaturesForAddress");
    await bench.step();
    expect((await bench.find(unpaid)).status).toBe("waiting");

    bench.rpc.resetCalls();
    await bench.step();
    // Nothing new on the store's account, but a lookup is owed to expire the request.
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 });
    expect((await bench.find(unpaid)).status).toBe("expired");
    await waitFor("the expiry's notification", () => heard.includes(unpaid));
    expect(await outcomeCount(bench, "expired")).toBe(1);
  });

  it("notices late payments by a heartbeat a minute: one after the end is recorded unconfirmed, one made in time is confirmed", async () => {
    const bench = await started();
    const late = await bench.request({ price: PRICE });
    const seenLate = await bench.request({ price: PRICE });
    const end = bench.clock.ms + REQUEST_MINUTES * 60_000;
    const payer = await bench.payer();
    // A block time before the end, though the RPC lists it only after the expiry (a lagging node).
    bench.clock.ms = end - 1_000;
    const inTimeSignature = await bench.pay(payer, PRICE, [seenLate]);
    bench.rpc.hide(inTimeSignature);
    bench.clock.ms = end + EXPIRY_GRACE_MS + 1;
    await bench.step();
    for (const reference of [late, seenLate]) expect((await bench.find(reference)).status).toBe("expired");

    const lateSignature = await bench.pay(payer, PRICE, [late]);
    bench.rpc.show(inTimeSignature);
    // Nothing waits: one lookup a minute, each of the ended requests in turn.
    bench.rpc.resetCalls();
    await idle(bench, 2 * (HEARTBEAT_MS / POLL_MS));
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2, getTransaction: 2 });
    expect(await bench.find(late)).toMatchObject({
      status: "expired",
      signature: lateSignature,
      amountReceived: PRICE,
    });
    expect(await bench.find(seenLate)).toMatchObject({ status: "confirmed", signature: inTimeSignature });
    expect(await outcomeCount(bench, "late")).toBe(1);
    expect(await outcomeCount(bench, "expired")).toBe(2);
  });

  it("costs no RPC call with nothing waiting and nothing ended, at most one a minute with ended requests, and two per payment", async () => {
    const bench = await started();
    const payer = await bench.payer();
    bench.rpc.resetCalls();
    const minute = HEARTBEAT_MS / POLL_MS;
    await idle(bench, 5 * minute);
    expect(calls(bench)).toEqual({});

    const ended = await bench.request({ price: PRICE, minutes: 1 });
    bench.clock.ms += 60_000 + EXPIRY_GRACE_MS + 1;
    await bench.step();
    expect((await bench.find(ended)).status).toBe("expired");
    bench.rpc.resetCalls();
    await idle(bench, 5 * minute);
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 5 });

    bench.rpc.resetCalls();
    const payments = 5;
    for (let paid = 0; paid < payments; paid++) {
      const reference = await bench.request({ price: PRICE });
      await bench.pay(payer, PRICE, [reference]);
      await bench.step();
      expect((await bench.find(reference)).status).toBe("confirmed");
    }
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 2 * payments, getTransaction: payments });
    console.log(
      `payment watcher RPC calls: none idle; ${HEARTBEAT_MS / 60_000} a minute with ended requests; ` +
        `per poll while requests wait 1 (the store's account), per payment 1 lookup and 1 getTransaction`,
    );
  });

  it("deletes the requests that ended unpaid once the retention has passed, with what was judged under them, and keeps every paid one", async () => {
    const bench = await started();
    const payer = await bench.payer();
    const unpaid = await bench.request({ price: PRICE, minutes: 1 });
    const failedUnder = await bench.request({ price: PRICE, minutes: 1 });
    const paid = await bench.request({ price: PRICE, minutes: 1 });
    const underpaid = await bench.request({ price: PRICE, minutes: 1 });
    await bench.pay(payer, PRICE, [failedUnder], 2);
    await bench.pay(payer, PRICE, [paid]);
    await bench.pay(payer, PRICE - 1n, [underpaid]);
    await bench.step();
    bench.clock.ms += 60_000 + EXPIRY_GRACE_MS + 1;
    await bench.step();
    expect((await bench.find(unpaid)).status).toBe("expired");
    expect((await bench.find(failedUnder)).status).toBe("expired");
    const ended = bench.clock.ms - EXPIRY_GRACE_MS;

    // A minute short of the retention, an hour after the last sweep: nothing is old enough.
    bench.clock.ms = ended + RETENTION_MS - 60_000;
    await bench.step();
    expect(await bench.store.payments.find(unpaid)).not.toBeNull();
    bench.clock.ms = ended + RETENTION_MS + FORGET_EVERY_MS;
    await bench.step();
    expect(await bench.store.payments.find(unpaid)).toBeNull();
    expect(await bench.store.payments.find(failedUnder)).toBeNull();
    expect((await bench.find(paid)).status).toBe("confirmed");
    expect((await bench.find(underpaid)).status).toBe("underpaid");
  });

  it(`looks up at most ${LOOKUPS_PER_POLL} requests a poll, least recently looked up first`, async () => {
    const bench = await started();
    const references: Address[] = [];
    for (let made = 0; made < LOOKUPS_PER_POLL + 10; made++) references.push(await bench.request({ price: PRICE }));
    const payer = await bench.payer();
    const last = references.at(-1) as Address;
    const signature = await bench.pay(payer, PRICE, [last]);
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 + LOOKUPS_PER_POLL });
    expect((await bench.find(last)).status).toBe("waiting");
    // The account is unchanged since: only the 10 never looked up are.
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 + 10, getTransaction: 1 });
    expect(await bench.find(last)).toMatchObject({ status: "confirmed", signature });
  });

  it("watches 120 waiting requests within an RPC budget of 3 calls a second, and still finds a payment", async () => {
    const callsPerSecond = 3;
    const bench = await started({ rpcCallsPerSecond: callsPerSecond });
    const waiting = 120;
    const references: Address[] = [];
    for (let made = 0; made < waiting; made++) references.push(await bench.request({ price: PRICE }));
    const total = () => Object.values(calls(bench)).reduce((sum, count) => sum + count, 0);

    // Ten minutes with nothing landing: unbudgeted, 50 lookups a poll would be 25 calls a second.
    bench.rpc.resetCalls();
    const seconds = 600;
    await idle(bench, (seconds * 1000) / POLL_MS);
    expect(total()).toBeLessThanOrEqual(callsPerSecond * seconds + callsPerSecond);
    // A quiet minute: the account read each poll, each request looked up about once.
    bench.rpc.resetCalls();
    await idle(bench, 60_000 / POLL_MS);
    const quietMinute = total();
    expect(quietMinute).toBeGreaterThanOrEqual(60_000 / POLL_MS + waiting / 2);
    expect(quietMinute).toBeLessThanOrEqual(callsPerSecond * 60 + callsPerSecond);

    // A payment to one of them is found within the budget: every lookup is taken from it.
    const payer = await bench.payer();
    const signature = await bench.pay(payer, PRICE, [references[77] as Address]);
    bench.rpc.resetCalls();
    let polls = 0;
    while ((await bench.find(references[77] as string)).status === "waiting" && polls < 60) {
      bench.clock.ms += POLL_MS;
      await bench.step();
      polls++;
    }
    const lookupsPerPoll = (callsPerSecond * POLL_MS) / 1000 - 1;
    expect(polls).toBeLessThanOrEqual(Math.ceil(waiting / lookupsPerPoll) + 1);
    expect(total()).toBeLessThanOrEqual(callsPerSecond * ((polls * POLL_MS) / 1000) + callsPerSecond + 1);
    expect(await bench.find(references[77] as string)).toMatchObject({ status: "confirmed", signature });
    console.log(
      `payment watcher, ${waiting} waiting, budget ${callsPerSecond}/s: ${quietMinute} calls in a quiet minute ` +
        `(${(quietMinute / 60).toFixed(1)}/s; 25/s before the budget); a payment found after ${polls} polls`,
    );
  });

  it("sets aside a transaction whose answer cannot be judged after a few tries, and confirms the others meanwhile", async () => {
    const bench = await started();
    const poisoned = await bench.request({ price: PRICE });
    const healthy = await bench.request({ price: PRICE });
    const payer = await bench.payer();
    const poison = await bench.pay(payer, PRICE, [poisoned]);
    bench.rpc.tamper(poison, (answer) => ({ ...answer, blockTime: 9e15 }));
    const good = await bench.pay(payer, PRICE, [healthy]);

    expect(await bench.step()).toBe(POLL_MS);
    expect(await bench.find(healthy)).toMatchObject({ status: "confirmed", signature: good });
    for (let tries = 1; tries < MAX_JUDGE_TRIES; tries++) {
      expect((await bench.find(poisoned)).status).toBe("waiting");
      expect(await bench.step()).toBe(POLL_MS);
    }
    expect(await bench.find(poisoned)).toMatchObject({ status: "waiting", signature: null });
    expect(await bench.store.payments.setAside(10)).toEqual([
      {
        signature: poison,
        reference: poisoned,
        detail: "blockTime 9000000000000000 is no time a block was made",
        judgedAt: new Date(bench.clock.ms).toISOString(),
      },
    ]);
    expect((await bench.metrics.paymentSetAside.get()).values[0]?.value).toBe(1);
    // Set aside, it is never fetched again.
    bench.rpc.resetCalls();
    await bench.step();
    expect(calls(bench)).toEqual({ getSignaturesForAddress: 1 });
    expect(await bench.store.payments.rpcState(bench.info.tokenAccount)).toBe("ok");
  });

  it("slows for a 429 without stopping purchases, calls the chain unreachable only after it failed for the set time, then confirms once", async () => {
    const bench = await started();
    const statesHeard: RpcState[] = [];
    bench.store.payments.onWatcherHealth((_account, state) => statesHeard.push(state));
    const state = () => bench.store.payments.rpcState(bench.info.tokenAccount);
    const reference = await bench.request({ price: PRICE });
    const payer = await bench.payer();
    const signature = await bench.pay(payer, PRICE, [reference]);

    bench.rpc.failNext(1, { status: 429, retryAfter: "7" });
    expect(await bench.step()).toBe(7_000);
    expect(await state()).toBe("limited");
    bench.rpc.failNext(1, { status: 429 });
    expect(await bench.step()).toBe(4 * POLL_MS);
    // The listing answers, the transaction's fetch fails: nothing is recorded.
    bench.rpc.failNext(1, { status: 503 }, "getTransaction");
    expect(await bench.step()).toBe(8 * POLL_MS);
    expect((await bench.find(reference)).status).toBe("waiting");
    expect(await state()).toBe("limited");

    bench.rpc.failNext(1, { hang: true }, "getTransaction");
    const hung = bench.step();
    await waitFor(
      "the hung call",
      () => bench.timers.pendingDelays().includes(RPC_TIMEOUT_MS) && bench.rpc.calls.get("getTransaction") === 2,
    );
    expect(bench.timers.fireSetFor(RPC_TIMEOUT_MS)).toBe(1);
    expect(await hung).toBe(16 * POLL_MS);

    await bench.rpc.refuse();
    bench.clock.ms += UNREACHABLE_AFTER_MS - 1;
    expect(await bench.step()).toBe(MAX_BACKOFF_MS);
    expect(await state()).toBe("limited");
    bench.clock.ms += 1;
    expect(await bench.step()).toBe(MAX_BACKOFF_MS);
    expect(await state()).toBe("unreachable");
    for (let failures = 0; failures < 3; failures++) expect(await bench.step()).toBe(MAX_BACKOFF_MS);
    await bench.rpc.accept();

    expect(await bench.step()).toBe(POLL_MS);
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
    expect(await state()).toBe("ok");
    await waitFor("the three changes of the chain's state", () => statesHeard.length === 3);
    expect(statesHeard).toEqual(["limited", "unreachable", "ok"]);
    expect(await outcomeCount(bench, "confirmed")).toBe(1);
    const errors = (await bench.metrics.paymentRpcErrors.get()).values;
    // Every method (the watcher's three, and getLatestBlockhash for transaction requests) and kind
    // has its series from the start, at zero until it happens.
    expect(errors).toHaveLength(4 * 6);
    expect(
      Object.fromEntries(
        errors
          .filter((value) => value.value > 0)
          .map((value) => [`${value.labels.method} ${value.labels.kind}`, value.value]),
      ),
    ).toEqual({
      "getSignaturesForAddress rate_limited": 2,
      "getTransaction server_error": 1,
      "getTransaction timeout": 1,
      "getSignaturesForAddress refused": 5,
    });
    const gauge = (await bench.metrics.paymentRpcState.get()).values;
    expect(Object.fromEntries(gauge.map((value) => [value.labels.state, value.value]))).toEqual({
      ok: 1,
      limited: 0,
      unreachable: 0,
    });
  });
});

describe.each(BACKENDS)("the payment watcher beside spam on the store's token account on %s", (backend) => {
  it("reads one signature of the token account: a payment followed by 500 transfers and 60,000 failed transactions costs three calls", async () => {
    const location = await createTestLocation(backend);
    cleanUpAfter(() => location.remove());
    const bench = await openPaymentBench(location);
    const payer = await bench.payer();
    const reference = await bench.request({ price: PRICE });
    // The request's transfer first, then 500 transfers of 1 base unit and 60,000 failed
    // transactions after it, all to the store's token account, before the next poll.
    const signature = await bench.pay(payer, PRICE, [reference]);
    const stranger = (await generateKeyPairSigner()).address;
    for (let transfer = 0; transfer < 500; transfer++) await bench.pay(payer, 1n, [stranger]);
    bench.chain.repeatFailed(await bench.pay(payer, PRICE, [stranger], 2), 60_000 - 1);
    // The lease is claimed after the spam is made: making it can hold the event loop past the
    // lease's idle timeout on a busy machine (PostgreSQL then ends the holder's session).
    expect(await bench.step()).toBe(0);
    bench.rpc.resetCalls();
    const pause = await bench.step();
    expect({ pause, calls: calls(bench) }).toEqual({
      pause: POLL_MS,
      calls: { getSignaturesForAddress: 2, getTransaction: 1 },
    });
    expect(await bench.find(reference)).toMatchObject({ status: "confirmed", signature });
  });
});
