/**
 * A shop that takes real payments (docs/design.md#8), for the browser: the service in a child
 * process on the site `npm run build:e2e` left in dist/, its SOLANA_RPC_URL the JSON-RPC server of a
 * local chain (LiteSVM) in this process, with a mint and a funded payer. The wallet paid is the
 * PUBLIC_PAYMENT_ADDRESS the pages were built with: the service refuses pages that show another.
 * Shared by tests/e2e/payments.spec.ts and `npm run bench:payments`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, isAddress, type Signature } from "@solana/kit";
import { builtPaymentAddress } from "../../service/config.ts";
import type { PaymentsConfigBody } from "../../src/lib/payments.ts";
import { PLACEHOLDER_DEFAULTS } from "../../src/lib/siteConfig.ts";
import { type ChainRpcServer, startChainRpcServer } from "./chainRpcServer.ts";
import { stopChild, waitForOk } from "./childProcess.ts";
import { LIFTED_LIMITS_ENV } from "./liftedLimits.ts";
import { LocalChain } from "./localChain.ts";
import { freePort } from "./ports.ts";

/** Deluxe Nothing: 100 $ZN, +7 spins; the mint has 6 decimals. */
const DELUXE_BASE_UNITS = 100_000_000n;

export interface PaymentShop {
  /** The service: http://127.0.0.1:<port>. */
  origin: string;
  chain: LocalChain;
  /** The chain's JSON-RPC server, which counts the service's calls. */
  rpc: ChainRpcServer;
  /** The $ZN mint and the wallet paid, as the service was configured with them. */
  mint: Address;
  recipient: Address;
  /** Pays `amount` base units of the mint to the recipient, carrying the reference, as a wallet would. */
  pay(reference: string, amount?: bigint): Promise<string>;
  /** A transfer to the recipient carrying no reference (`amount` 0: spam), or failing on chain (`fails`). */
  spam(options: { amount?: bigint; fails?: boolean }): Promise<Signature>;
  stop(): Promise<void>;
}

/** `env` is laid over the shop's own, e.g. to restore a default the lifted limits raise. */
export async function startPaymentShop({
  pollMs,
  env = {},
}: {
  pollMs: number;
  env?: Record<string, string>;
}): Promise<PaymentShop> {
  const workDir = await mkdtemp(join(tmpdir(), "nothing-payment-shop-"));
  const chain = await LocalChain.create();
  let rpc: ChainRpcServer | undefined;
  let service: ChildProcess | undefined;
  const stop = async () => {
    if (service) await stopChild(service);
    await rpc?.stop();
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    rpc = await startChainRpcServer(chain);
    const mint = await chain.createMint({ decimals: 6, program: "token" });
    // The pages the service serves: STATIC_DIR, as the service reads it from this environment.
    const pages = process.env.STATIC_DIR || "dist";
    const recipient = builtPaymentAddress(pages);
    if (recipient === null || !isAddress(recipient) || recipient === PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS) {
      throw new Error(
        `${pages}/ was built with PUBLIC_PAYMENT_ADDRESS ${recipient ?? "unset"}: build it with a real address (npm run build:e2e)`,
      );
    }
    const payer = await chain.wallet();
    await chain.mintTo(mint, payer.address, 10n ** 15n);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, ["service/main.ts"], {
      env: {
        ...process.env,
        ...LIFTED_LIMITS_ENV,
        PORT: String(port),
        HOST: "127.0.0.1",
        // /metrics on a free port of its own: the suite's other services hold theirs.
        METRICS_PORT: "0",
        DATA_DIR: join(workDir, "data"),
        DATABASE_URL: "",
        LOG_LEVEL: "warn",
        SOLANA_RPC_URL: rpc.url,
        PUBLIC_PAYMENT_ADDRESS: recipient,
        PUBLIC_CONTRACT_ADDRESS: mint,
        PAYMENT_POLL_MS: String(pollMs),
        // Every buyer here is 127.0.0.1: the default (10 requests an address) would stop the bench.
        PAYMENT_RATE_LIMIT: "1000000",
        ...env,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    await waitForOk(`${origin}/readyz`, service, "the realtime service with payments on", 150_000);
    await waitUntilAvailable(origin);
    const readyRpc = rpc;
    return {
      origin,
      chain,
      rpc: readyRpc,
      mint,
      recipient,
      pay: (reference, amount = DELUXE_BASE_UNITS) =>
        chain.pay({ payer, recipient, mint, amount, references: [reference as Address] }),
      spam: ({ amount = 0n, fails = false }) =>
        chain.pay({ payer, recipient, mint, amount, ...(fails ? { decimals: 0 } : {}) }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** How long the chain's facts may take to be read once the service is ready. */
const AVAILABLE_WITHIN_MS = 20_000;
const AVAILABLE_POLL_MS = 200;

async function waitUntilAvailable(origin: string): Promise<void> {
  for (let waited = 0; waited < AVAILABLE_WITHIN_MS; waited += AVAILABLE_POLL_MS) {
    const body = (await (await fetch(`${origin}/payments/config`)).json()) as PaymentsConfigBody;
    if (body.available) return;
    await new Promise((resolve) => setTimeout(resolve, AVAILABLE_POLL_MS));
  }
  throw new Error(`payments were not available within ${AVAILABLE_WITHIN_MS} ms`);
}
