/**
 * A bench for the payment watcher (docs/design.md#8): a store on a test location, a LocalChain with
 * a mint and a recipient, the chain's JSON-RPC server, and the watcher over the real chain client,
 * driven step by step. Its timers are manual (the RPC calls' deadlines fire when the test says)
 * and one clock, moved by the test, is both the service's time and the chain's block time.
 *
 *   const bench = await openPaymentBench(location, { program: "token-2022" });
 *   const reference = await bench.request({ price: 25_000_000n });
 *   await bench.pay(payer, 25_000_000n, [reference]);
 *   await bench.step(); // → (await bench.find(reference)).status === "confirmed"
 */
import {
  type Address,
  generateKeyPairSigner,
  getAddressDecoder,
  type KeyPairSigner,
  type Signature,
} from "@solana/kit";
import { type ChainRpcServer, startChainRpcServer } from "../../../scripts/harness/chainRpcServer.ts";
import { LocalChain, type TokenProgramName } from "../../../scripts/harness/localChain.ts";
import type { Logger } from "../../../service/logger.ts";
import { createMetrics, type Metrics } from "../../../service/metrics.ts";
import { type ChainClient, type ChainInfo, createChainClient, readChainInfo } from "../../../service/payments/chain.ts";
import { createRpcBudget } from "../../../service/payments/rpcBudget.ts";
import { createPaymentWatcher, type PaymentWatcher } from "../../../service/payments/watcher.ts";
import type { StoredPayment } from "../../../service/storage/payments.ts";
import type { StoreWithPayments } from "../../../service/storage/types.ts";
import { ManualTimers } from "../../harness/manualTimers.ts";
import { cleanUpAfter, openTestStore, type TestLocation, testLogger } from "./stores.ts";

export const RPC_TIMEOUT_MS = 5_000;
export const POLL_MS = 2_000;
/** The bench's PAYMENT_RPC_UNREACHABLE_AFTER_MS (the service's default is two minutes). */
export const UNREACHABLE_AFTER_MS = 120_000;
/** The bench's PAYMENT_RETENTION_DAYS, in ms. */
export const RETENTION_MS = 7 * 24 * 60 * 60_000;
export const REQUEST_MINUTES = 30;

export interface PaymentBench {
  store: StoreWithPayments;
  chain: LocalChain;
  rpc: ChainRpcServer;
  mint: Address;
  recipient: Address;
  decimals: number;
  info: ChainInfo;
  client: ChainClient;
  watcher: PaymentWatcher;
  /** Another watcher over the same store and chain (to take over from the first). */
  spawnWatcher(): PaymentWatcher;
  metrics: Metrics;
  /** The service's clock and the chain's block time, in ms. */
  clock: { ms: number };
  /** The RPC calls' deadlines: they fire only when the test says. */
  timers: ManualTimers;
  /** A new waiting request of this mint and recipient (as POST /payments stores one); its reference. */
  request(options: { price: bigint; name?: string | null; minutes?: number }): Promise<Address>;
  find(reference: string): Promise<StoredPayment>;
  /** A payer holding `tokens` base units of the mint. */
  payer(tokens?: bigint): ReturnType<typeof generateKeyPairSigner>;
  /** A transfer of `amount` base units of the mint from `payer` to the recipient, carrying `references`; its signature. */
  pay(payer: KeyPairSigner, amount: bigint, references: readonly Address[], decimals?: number): Promise<Signature>;
  /** One watcher step (a lease claim or a poll); its pause before the next. */
  step(): Promise<number>;
  /** Stops the watchers and the chain's server (the store stays open). */
  close(): Promise<void>;
}

type BenchOptions = {
  program?: TokenProgramName;
  decimals?: number;
  logger?: Logger;
  seed?: number;
  /** The watcher's RPC budget (calls a second on the bench's clock); unbounded unless a test sets it. */
  rpcCallsPerSecond?: number;
};

/** A bench on a store of its own, all of it closed when the test ends. */
export async function openPaymentBench(location: TestLocation, options: BenchOptions = {}): Promise<PaymentBench> {
  const store = await openTestStore(location, { logger: options.logger });
  cleanUpAfter(() => store.close());
  const bench = await createPaymentBench(store, options);
  cleanUpAfter(() => bench.close());
  return bench;
}

/** A bench on an open store: a new chain, mint and recipient each time, so benches can share a store. */
export async function createPaymentBench(store: StoreWithPayments, options: BenchOptions = {}): Promise<PaymentBench> {
  const clock = { ms: Date.UTC(2026, 0, 1, 12) };
  const logger = options.logger ?? testLogger();
  const chain = await LocalChain.create({ now: () => clock.ms });
  const rpc = await startChainRpcServer(chain);
  const decimals = options.decimals ?? 6;
  const mint = await chain.createMint({ decimals, program: options.program ?? "token" });
  const recipient = (await generateKeyPairSigner()).address;
  const metrics = createMetrics();
  const timers = new ManualTimers();
  const client = createChainClient({
    rpcUrl: rpc.url,
    commitment: "confirmed",
    metrics,
    timers,
    timeoutMs: RPC_TIMEOUT_MS,
    now: () => clock.ms,
  });
  const info = await readChainInfo(client, mint, recipient);
  const watchers: PaymentWatcher[] = [];
  const budget = createRpcBudget(options.rpcCallsPerSecond ?? 1_000_000_000, () => clock.ms);
  const spawnWatcher = () => {
    const watcher = createPaymentWatcher({
      store: store.payments,
      chain: client,
      budget,
      account: { tokenAccount: info.tokenAccount, recipient, mint },
      pollMs: POLL_MS,
      unreachableAfterMs: UNREACHABLE_AFTER_MS,
      retentionMs: RETENTION_MS,
      logger,
      metrics,
      timers,
      now: () => clock.ms,
    });
    watchers.push(watcher);
    return watcher;
  };
  const watcher = spawnWatcher();
  const references = getAddressDecoder();
  let counter = options.seed ?? 1;
  return {
    store,
    chain,
    rpc,
    mint,
    recipient,
    decimals,
    info,
    client,
    watcher,
    spawnWatcher,
    metrics,
    clock,
    timers,
    async request({ price, name = null, minutes = REQUEST_MINUTES }) {
      // Distinct, reproducible references: a counter in 32 bytes.
      const bytes = new Uint8Array(32);
      new DataView(bytes.buffer).setUint32(0, counter++);
      bytes[31] = 7;
      const reference = references.decode(bytes);
      const stored = await store.payments.create({
        reference,
        tierId: 1,
        priceBaseUnits: price,
        decimals,
        mint,
        recipient,
        name,
        createdAt: new Date(clock.ms),
        expiresAt: new Date(clock.ms + minutes * 60_000),
      });
      if (stored === "name_not_allowed") throw new Error(`the name ${name} is blocked`);
      return reference;
    },
    async find(reference) {
      const payment = await store.payments.find(reference);
      if (!payment) throw new Error(`no payment ${reference}`);
      return payment;
    },
    async payer(tokens = 1_000_000_000_000n) {
      const signer = await chain.wallet();
      await chain.mintTo(mint, signer.address, tokens);
      return signer;
    },
    pay: (payer, amount, references, transferDecimals) =>
      chain.pay({ payer, recipient, mint, amount, references, decimals: transferDecimals }),
    step: () => watcher.step(),
    async close() {
      for (const spawned of watchers) await spawned.stop();
      await rpc.stop();
    },
  };
}
