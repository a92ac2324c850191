/**
 * A local chain for services that take payments (docs/design.md#8): a LocalChain with a mint and a
 * recipient, served over JSON-RPC until the current test ends, and the payment settings a
 * deployment would give a service over it.
 *
 *   const local = await localPaymentChain();
 *   const service = await startAuctionService(store, { payments: paymentSettingsOver(local) });
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import type { PaymentSettings } from "../../../realtime/payments/settings.ts";
import { type ChainRpcServer, startChainRpcServer } from "../../../scripts/support/chainRpcServer.ts";
import { LocalChain } from "../../../scripts/support/localChain.ts";
import { cleanUpAfter, waitFor } from "./stores.ts";

export interface LocalPaymentChain {
  chain: LocalChain;
  rpc: ChainRpcServer;
  /** A Token program mint of `decimals`. */
  mint: Address;
  recipient: Address;
}

export async function localPaymentChain(decimals: number): Promise<LocalPaymentChain> {
  const chain = await LocalChain.create();
  const rpc = await startChainRpcServer(chain);
  cleanUpAfter(() => rpc.stop());
  const mint = await chain.createMint({ decimals, program: "token" });
  const recipient = (await generateKeyPairSigner()).address;
  return { chain, rpc, mint, recipient };
}

/** Settings over `local`: quick polls (100 ms) and a rate limit no test reaches unless it lowers it. */
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
