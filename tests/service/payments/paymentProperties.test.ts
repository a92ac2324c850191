/**
 * The payment watcher against a model (docs/design.md#8): fast-check interleaves payment requests,
 * real transfers on the local chain (exact, over, under, failed, with two references, with an
 * unknown one), spam on the store's token account (zero-amount transfers, floods of failed ones),
 * RPC faults (429, 500, a refused port), the clock moving past expiries, and watcher steps. Whatever the order, once the faults stop every request ends as the model says: the first
 * open request among a successful transfer's references is credited by it (confirmed, underpaid,
 * or recorded after its end), no signature credits two requests, nothing is lost, and every
 * request left unpaid expires. On PostgreSQL and PGlite, seeded, the seed printed.
 */
import type { Address } from "@solana/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EXPIRY_GRACE_MS, HEARTBEAT_MS } from "../../../service/payments/watcher.ts";
import { scaled } from "../../harness/timeBudgets.ts";
import { createPaymentBench, type PaymentBench } from "../harness/paymentBench.ts";
import { BACKENDS, cleanUpAfter, createTestLocation, openTestStore } from "../harness/stores.ts";

const SEED = Number(process.env.PAYMENT_PROPERTY_SEED ?? 22_0022);
const RUNS = 40;
const MAX_COMMANDS = 30;
const UNIT = 1_000_000n;
const MAX_MINUTES = 10;

type Command =
  | { kind: "request"; price: number; minutes: number }
  | { kind: "pay"; target: number; second: number | null; unknown: boolean; delta: -1 | 0 | 1; fails: boolean }
  | { kind: "advance"; minutes: number }
  | { kind: "fault"; fault: "429" | "500" | "refuse" }
  | { kind: "spam"; failed: number }
  | { kind: "step" };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      price: fc.integer({ min: 1, max: 5 }),
      minutes: fc.integer({ min: 1, max: MAX_MINUTES }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("pay" as const),
      target: fc.nat(20),
      second: fc.option(fc.nat(20), { nil: null, freq: 4 }),
      unknown: fc.integer({ min: 0, max: 5 }).map((draw) => draw === 0),
      delta: fc.constantFrom(-1 as const, 0 as const, 0 as const, 1 as const),
      fails: fc.integer({ min: 0, max: 5 }).map((draw) => draw === 0),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("advance" as const), minutes: fc.integer({ min: 0, max: 8 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("fault" as const),
      fault: fc.constantFrom("429" as const, "500" as const, "refuse" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("spam" as const),
      // 0: one zero-amount transfer; more: that many failed transactions.
      failed: fc.constantFrom(0, 1, 2_000),
    }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: "step" as const }) },
);

interface ModelRequest {
  reference: Address;
  price: bigint;
  expiresAt: number;
}

interface ModelTransfer {
  signature: string;
  references: Address[];
  amount: bigint;
  blockTimeMs: number;
  failed: boolean;
}

type Expected = { status: string; signature: string | null; amountReceived: bigint | null };

/** What every request must end as, from the transfers in chain order. */
function expectedOutcomes(requests: ModelRequest[], transfers: ModelTransfer[]): Map<Address, Expected> {
  const outcome = new Map<Address, Expected>(
    requests.map((request) => [request.reference, { status: "expired", signature: null, amountReceived: null }]),
  );
  for (const transfer of transfers) {
    if (transfer.failed) continue;
    // Candidates in the order they were created, as the store reads them.
    const open = requests.find(
      (request) =>
        transfer.references.includes(request.reference) && outcome.get(request.reference)?.signature === null,
    );
    if (!open) continue;
    const status =
      transfer.blockTimeMs > open.expiresAt ? "expired" : transfer.amount >= open.price ? "confirmed" : "underpaid";
    outcome.set(open.reference, { status, signature: transfer.signature, amountReceived: transfer.amount });
  }
  return outcome;
}

/** How the runs' requests ended, to see that the interleavings reach every outcome. */
const tally = new Map<string, number>();

async function run(bench: PaymentBench, commands: Command[]): Promise<void> {
  const requests: ModelRequest[] = [];
  const transfers: ModelTransfer[] = [];
  const payer = await bench.payer();
  const stranger = (await bench.chain.wallet()).address;
  let refused = false;
  const step = async () => {
    await bench.step();
    if (refused) {
      await bench.rpc.accept();
      refused = false;
    }
    // Whatever happened, no request is credited twice or wrongly.
    for (const request of requests) {
      const stored = await bench.find(request.reference);
      if (stored.status === "confirmed") expect(stored.amountReceived ?? 0n).toBeGreaterThanOrEqual(request.price);
      if (stored.status === "underpaid") expect(stored.amountReceived ?? 0n).toBeLessThan(request.price);
    }
  };
  expect(await bench.step()).toBe(0);
  for (const next of commands) {
    if (next.kind === "request") {
      const reference = await bench.request({ price: BigInt(next.price) * UNIT, minutes: next.minutes });
      requests.push({ reference, price: BigInt(next.price) * UNIT, expiresAt: bench.clock.ms + next.minutes * 60_000 });
    } else if (next.kind === "pay") {
      const target = requests[next.target % Math.max(1, requests.length)];
      if (!target) continue;
      const second = next.second === null ? undefined : requests[next.second % requests.length];
      const first = next.unknown ? stranger : target.reference;
      const references = [first, ...(second && second.reference !== first ? [second.reference] : [])];
      const amount = target.price + BigInt(next.delta);
      const signature = await bench.pay(payer, amount, references, next.fails ? bench.decimals + 1 : undefined);
      transfers.push({
        signature,
        references,
        amount,
        blockTimeMs: Math.floor(bench.clock.ms / 1000) * 1000,
        failed: next.fails,
      });
    } else if (next.kind === "advance") {
      bench.clock.ms += next.minutes * 60_000;
    } else if (next.kind === "spam") {
      // To the store's token account, carrying no reference: it credits nothing, whatever it is.
      if (next.failed === 0) await bench.chain.pay({ payer, recipient: bench.recipient, mint: bench.mint, amount: 0n });
      else {
        const failed = await bench.pay(payer, 1n, [], bench.decimals + 1);
        bench.chain.repeatFailed(failed, next.failed - 1);
      }
    } else if (next.kind === "fault") {
      if (next.fault === "refuse") {
        if (!refused) await bench.rpc.refuse();
        refused = true;
      } else
        bench.rpc.failNext(1, { status: Number(next.fault), ...(next.fault === "429" ? { retryAfter: "1" } : {}) });
    } else {
      await step();
    }
  }
  // The faults end; the watcher catches up, then the clock passes every end.
  bench.rpc.clearFaults();
  if (refused) await bench.rpc.accept();
  refused = false;
  await step();
  bench.clock.ms += (MAX_MINUTES + 1) * 60_000 + EXPIRY_GRACE_MS;
  await step();
  // Nothing waits now: the heartbeat looks up the requests that ended unpaid, one a minute, and
  // records what was paid to them late.
  for (let heartbeat = 0; heartbeat < requests.length; heartbeat++) {
    bench.clock.ms += HEARTBEAT_MS;
    await step();
  }
  const expected = expectedOutcomes(requests, transfers);
  for (const request of requests) {
    const { status, signature, amountReceived } = await bench.find(request.reference);
    const kind = status === "expired" && signature !== null ? "expired, paid late" : status;
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
    expect({ reference: request.reference, status, signature, amountReceived }).toEqual({
      reference: request.reference,
      ...expected.get(request.reference),
    });
  }
}

describe.each(BACKENDS)("payments against the model on %s", (backend) => {
  it(
    "credit every request as the model does, whatever the interleaving of requests, transfers, faults, expiries and polls",
    async () => {
      console.log(`payment property seed (${backend}): ${SEED} (PAYMENT_PROPERTY_SEED=${SEED} to replay)`);
      const location = await createTestLocation(backend);
      cleanUpAfter(() => location.remove());
      const store = await openTestStore(location);
      cleanUpAfter(() => store.close());
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: MAX_COMMANDS }), async (commands) => {
          runs += 1;
          // A chain, mint and recipient of its own per run: its requests and cursor are its own.
          const bench = await createPaymentBench(store, { seed: runs * 1_000 });
          try {
            await run(bench, commands);
          } finally {
            await bench.close();
          }
        }),
        { seed: SEED, numRuns: RUNS },
      );
      console.log(`payment property outcomes (${backend}, ${runs} runs): ${JSON.stringify(Object.fromEntries(tally))}`);
      // Every outcome is reached, or the interleavings test less than they seem to.
      expect([...tally.keys()].sort()).toEqual(["confirmed", "expired", "expired, paid late", "underpaid"]);
      tally.clear();
    },
    scaled(300_000),
  );
});
