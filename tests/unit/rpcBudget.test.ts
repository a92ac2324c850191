import type { Address, Blockhash } from "@solana/kit";
import { describe, expect, it } from "vitest";
import type { ChainClient } from "../../service/payments/chain.ts";
import {
  ACCOUNT_READ_MS,
  BLOCKHASH_SHARE_MS,
  createRequestReads,
  READ_BATCH_WINDOW_MS,
  RpcBudgetSpent,
} from "../../service/payments/requestReads.ts";
import { createRpcBudget, REQUEST_FLOOR } from "../../service/payments/rpcBudget.ts";
import { ManualTimers } from "../harness/manualTimers.ts";

describe("the RPC budget", () => {
  it("grants the watcher what the bucket holds, and refills it at the rate", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(3, () => clock.ms);
    expect(budget.grantWatcher(50)).toBe(3);
    expect(budget.grantWatcher(50)).toBe(0);
    clock.ms += 1_000;
    expect(budget.grantWatcher(2)).toBe(2);
    expect(budget.grantWatcher(2)).toBe(1);
    // A long pause refills one bucket, never more.
    clock.ms += 60_000;
    expect(budget.grantWatcher(50)).toBe(3);
  });

  it("keeps the watcher's reserve from transaction requests, and says when to ask again", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(4, () => clock.ms);
    expect(budget.tryRequest(1)).toBe(true);
    expect(budget.tryRequest(1)).toBe(true);
    // 2 of 4 left: that half is the watcher's.
    expect(budget.tryRequest(1)).toBe(false);
    // From the level, at the two thirds of the rate the floor leaves it: 1 call in 375 ms.
    expect(budget.requestRetryAfterMs(1)).toBe(375);
    expect(budget.grantWatcher(5)).toBe(2);
    clock.ms += 250;
    expect(budget.tryRequest(1)).toBe(false);
    // The floor set aside a third of a call in 250 ms: the rest comes in 500 ms more.
    expect(budget.requestRetryAfterMs(1)).toBe(500);
    clock.ms += 500;
    expect(budget.tryRequest(1)).toBe(true);
  });

  it("keeps a third of the rate for transaction requests while a watcher catching up takes every whole call", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(3, () => clock.ms);
    const answered = { watcher: 0, requests: 0, refused: 0 };
    // A minute of the watcher asking for 50 lookups every 100 ms, and a request every 100 ms.
    for (let tick = 0; tick < 600; tick++) {
      clock.ms += 100;
      answered.watcher += budget.grantWatcher(50);
      if (budget.tryRequest(1)) answered.requests++;
      else answered.refused++;
    }
    // Before the floor: requests 0, watcher 183. Now a third of 180 calls, less the first wait.
    expect(answered.requests).toBeGreaterThanOrEqual(60 * 3 * REQUEST_FLOOR - 2);
    expect(answered.watcher).toBeGreaterThanOrEqual(60 * 3 * (1 - REQUEST_FLOOR) - 2);
    expect(answered.watcher + answered.requests).toBeLessThanOrEqual(3 * 60 + 3);
  });

  it("gives the watcher the whole rate again once no request has asked for a while", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(3, () => clock.ms);
    expect(budget.tryRequest(1)).toBe(true);
    expect(budget.grantWatcher(50)).toBe(2);
    // Requests wait 2 s from the last ask (the floor sets a call aside in 1 s); then nothing is set aside.
    clock.ms += 10_000;
    let watcher = 0;
    for (let tick = 0; tick < 100; tick++) {
      clock.ms += 100;
      watcher += budget.grantWatcher(50);
    }
    // 10 s at 3 a second, after a bucket the floor kept a call of (2 s of waiting: 2 calls set aside, 1 kept).
    expect(watcher).toBeGreaterThanOrEqual(3 * 10 + 3 - 1 - 1);
  });

  it("lets the watcher owe at most one bucket, repaid before it is granted again", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(2, () => clock.ms);
    budget.spendWatcher(100);
    clock.ms += 1_000;
    expect(budget.grantWatcher(5)).toBe(0);
    clock.ms += 1_000;
    expect(budget.grantWatcher(5)).toBe(2);
  });

  it("bounds calls over time whatever is asked: 60 s of a flood cost at most rate x 60 + one bucket", () => {
    const clock = { ms: 0 };
    const budget = createRpcBudget(3, () => clock.ms);
    let calls = 0;
    for (let tick = 0; tick < 600; tick++) {
      clock.ms += 100;
      calls += budget.grantWatcher(50);
      for (let request = 0; request < 20; request++) if (budget.tryRequest(1)) calls++;
    }
    expect(calls).toBeLessThanOrEqual(3 * 60 + 3);
    expect(calls).toBeGreaterThanOrEqual(3 * 60 - 3);
  });
});

const address = (n: number) => `Acct${String(n).padStart(40, "1")}` as Address;

function countingChain() {
  const calls = { accounts: [] as Address[][], blockhash: 0 };
  const chain: ChainClient = {
    signaturesFor: () => Promise.reject(new Error("not read here")),
    transaction: () => Promise.reject(new Error("not read here")),
    abortAll() {},
    accounts(addresses) {
      calls.accounts.push([...addresses]);
      return Promise.resolve(addresses.map((a) => ({ owner: a, data: new Uint8Array([1]) })));
    },
    latestBlockhash() {
      calls.blockhash++;
      return Promise.resolve({ blockhash: `hash${calls.blockhash}` as Blockhash, lastValidBlockHeight: 100n });
    },
  };
  return { chain, calls };
}

describe("the transaction requests' reads", () => {
  function reads(callsPerSecond = 1_000) {
    const timers = new ManualTimers();
    const { chain, calls } = countingChain();
    const budget = createRpcBudget(callsPerSecond, () => timers.now);
    return { timers, calls, reads: createRequestReads({ chain, budget, timers, now: () => timers.now }) };
  }

  it("share one blockhash for a few seconds, and ask once for concurrent askers", async () => {
    const { timers, calls, reads: shared } = reads();
    const first = await Promise.all([shared.latestBlockhash(), shared.latestBlockhash(), shared.latestBlockhash()]);
    expect(calls.blockhash).toBe(1);
    expect(new Set(first.map((lifetime) => lifetime.blockhash))).toEqual(new Set(["hash1"]));
    timers.advance(BLOCKHASH_SHARE_MS - 1);
    expect((await shared.latestBlockhash()).blockhash).toBe("hash1");
    timers.advance(1);
    expect((await shared.latestBlockhash()).blockhash).toBe("hash2");
  });

  it("join the accounts asked together into one call, and read each once per interval", async () => {
    const { timers, calls, reads: shared } = reads();
    const asked = Promise.all([shared.accounts([address(1), address(2)]), shared.accounts([address(2), address(3)])]);
    timers.advance(READ_BATCH_WINDOW_MS);
    const [first, second] = await asked;
    expect(calls.accounts).toEqual([[address(1), address(2), address(3)]]);
    expect(first.map((state) => state?.owner)).toEqual([address(1), address(2)]);
    expect(second.map((state) => state?.owner)).toEqual([address(2), address(3)]);
    // Remembered: no call within the interval.
    expect((await shared.accounts([address(3)]))[0]?.owner).toBe(address(3));
    expect(calls.accounts).toHaveLength(1);
    timers.advance(ACCOUNT_READ_MS);
    const again = shared.accounts([address(3)]);
    timers.advance(READ_BATCH_WINDOW_MS);
    await again;
    expect(calls.accounts).toHaveLength(2);
  });

  it("let one network cause at most its share of the reads, and leave the others theirs", async () => {
    const timers = new ManualTimers();
    const { chain, calls } = countingChain();
    const budget = createRpcBudget(10, () => timers.now);
    const shared = createRequestReads({
      chain,
      budget,
      timers,
      now: () => timers.now,
      callsPerSecond: 10,
      networkSharePercent: 10,
    });
    // Accounts asked together are one call: the network's one call a second.
    const first = Promise.all([
      shared.accounts([address(1)], "2001:db8:48::/48"),
      shared.accounts([address(4)], "2001:db8:48::/48"),
    ]);
    const other = shared.accounts([address(3)], "198.51.100.0/24");
    timers.advance(READ_BATCH_WINDOW_MS);
    await Promise.all([first, other]);
    expect(calls.accounts).toEqual([[address(1), address(4), address(3)]]);
    // Its share spent, a new account waits for the next; another network's does not.
    await expect(shared.accounts([address(2)], "2001:db8:48::/48")).rejects.toMatchObject({ retryAfterMs: 980 });
    // What is already read costs the network nothing.
    expect((await shared.accounts([address(1)], "2001:db8:48::/48"))[0]?.owner).toBe(address(1));
    timers.advance(980);
    const later = shared.accounts([address(2)], "2001:db8:48::/48");
    timers.advance(READ_BATCH_WINDOW_MS);
    expect((await later)[0]?.owner).toBe(address(2));
  });

  it("refuse with a Retry-After, calling nothing, when the budget is spent", async () => {
    const { timers, calls, reads: shared } = reads(2);
    // A bucket of 2 keeps 1 for the watcher: one call for requests, then a refusal.
    await shared.latestBlockhash();
    const refused = shared.accounts([address(9)]);
    timers.advance(READ_BATCH_WINDOW_MS);
    await expect(refused).rejects.toBeInstanceOf(RpcBudgetSpent);
    // The level's call at two thirds of the rate (750 ms), less what came in the batch's window.
    await expect(refused).rejects.toMatchObject({ retryAfterMs: 730 });
    expect(calls.accounts).toHaveLength(0);
  });
});
