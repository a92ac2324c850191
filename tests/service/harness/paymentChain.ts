/**
 * A local chain for services that take payments (docs/design.md#8): a LocalChain with a mint and a
 * recipient, served over JSON-RPC until the current test ends, the payment settings a deployment
 * would give a service over it, and such a service on a store of its own (openPaymentService).
 *
 *   const local = await localPaymentChain();
 *   const service = await startAuctionService(store, { payments: paymentSettingsOver(local) });
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { type ChainRpcServer, startChainRpcServer } from "../../../scripts/harness/chainRpcServer.ts";
import { LocalChain, type TokenProgramName } from "../../../scripts/harness/localChain.ts";
import type { MintExtension } from "../../../scripts/harness/token2022Extensions.ts";
import type { ServiceConfig } from "../../../service/config.ts";
import type { Logger } from "../../../service/logger.ts";
import type { PaymentsOptions } from "../../../service/payments/index.ts";
import type { PaymentSettings } from "../../../service/payments/settings.ts";
import type { StoreWithPayments } from "../../../service/storage/types.ts";
import { type AuctionService, startAuctionService } from "./auctionService.ts";
import { cleanUpAfter, openTestStore, type TestLocation, testLogger, waitFor } from "./stores.ts";

export interface LocalPaymentChain {
  chain: LocalChain;
  rpc: ChainRpcServer;
  /** A mint of `decimals`: the Token program's unless the test asked for another. */
  mint: Address;
  recipient: Address;
}

/** The mint a test asks for: its program, and its extensions (Token-2022). */
export interface MintKind {
  program: TokenProgramName;
  extensions?: readonly MintExtension[];
}

export async function localPaymentChain(
  decimals: number,
  kind: MintKind = { program: "token" },
): Promise<LocalPaymentChain> {
  const chain = await LocalChain.create();
  const rpc = await startChainRpcServer(chain);
  cleanUpAfter(() => rpc.stop());
  const mint = await chain.createMint({ decimals, ...kind });
  const recipient = (await generateKeyPairSigner()).address;
  return { chain, rpc, mint, recipient };
}

/** Settings over `local`: quick polls (100 ms), and a rate limit and an RPC budget no test reaches unless it lowers them. */
export function paymentSettingsOver(
  local: LocalPaymentChain,
  overrides: Partial<PaymentSettings> = {},
): PaymentSettings {
  return {
    rpcUrl: local.rpc.url,
    recipient: local.recipient,
    mint: local.mint,
    commitment: "confirmed",
    pollMs: 100,
    rpcCallsPerSecond: 100_000,
    priorityFeeMicroLamports: 50_000,
    unreachableAfterMs: 120_000,
    requestMinutes: 30,
    explorerTxUrl: "https://explorer.example/tx/{signature}?cluster=local",
    rateLimit: 1_000,
    rateWindowMs: 60_000,
    maxOpenRequests: 1_000,
    retentionDays: 7,
    ...overrides,
  };
}

/** Waits until the service at `url` takes payments: the chain's facts read (GET /payments/config). */
export async function waitForPaymentsAvailable(url: string): Promise<void> {
  await waitFor("payments to be available", async () => {
    const body = (await (await fetch(`${url}/payments/config`)).json()) as { available: boolean };
    return body.available;
  });
}

/** A service taking payments over a local chain, on a store of its own, with what a test reads of it. */
export interface PaymentService extends LocalPaymentChain {
  url: string;
  store: StoreWithPayments;
  service: AuctionService;
  /** The service's log lines so far, its store's among them. */
  logs: Record<string, unknown>[];
  /** The logger of both (a test gives it a clock for its repeated warnings). */
  logger: Logger;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** POSTs `body` (JSON, or a string sent as it is) with Content-Type application/json unless `headers` say otherwise. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/**
 * Opens a store at `location` and starts a service taking payments over a new local chain, both
 * stopped after the test. `prepare` runs on the chain before the service starts.
 */
export async function openPaymentService(
  location: TestLocation,
  options: {
    decimals: number;
    mint?: MintKind;
    settings?: Partial<PaymentSettings>;
    config?: Partial<ServiceConfig>;
    /** The payments' clock, randomness and RPC deadline. */
    paymentOptions?: Pick<PaymentsOptions, "now" | "randomBytes" | "rpcTimeoutMs">;
    prepare?: (local: LocalPaymentChain) => Promise<void>;
  },
): Promise<PaymentService> {
  const logs: Record<string, unknown>[] = [];
  const logger = testLogger((line) => logs.push(line));
  const store = await openTestStore(location, { logger });
  cleanUpAfter(() => store.close());
  const local = await localPaymentChain(options.decimals, options.mint);
  await options.prepare?.(local);
  const service = await startAuctionService(
    store,
    { allowedOrigins: [], ...options.config, payments: paymentSettingsOver(local, options.settings) },
    logger,
    { paymentOptions: options.paymentOptions },
  );
  cleanUpAfter(() => service.stop());
  const url = service.httpUrl;
  return {
    ...local,
    url,
    store,
    service,
    logs,
    logger,
    get: (path, headers = {}) => fetch(`${url}${path}`, { headers }),
    post: (path, body, headers = {}) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
  };
}
