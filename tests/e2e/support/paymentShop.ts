/**
 * A shop that takes real payments (docs/design.md#8), for the browser: the service in a child
 * process on the site `npm run build` left in dist/, its SOLANA_RPC_URL the JSON-RPC server of a
 * local chain (LiteSVM) in this process, with a mint and a funded payer. Shared by
 * tests/e2e/payments.spec.ts and `npm run bench:payments`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { stopChild, waitForOk } from "../../../scripts/support/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "../../../scripts/support/liftedLimits.ts";
import { freePort } from "../../../scripts/support/ports.ts";
import type { PaymentsConfigBody } from "../../../src/lib/payments.ts";
import { type ChainRpcServer, startChainRpcServer } from "../../realtime/support/chainRpcServer.ts";
import { LocalChain } from "../../realtime/support/localChain.ts";

/** Deluxe Nothing: 100 $ZN, +7 spins; the mint has 6 decimals. */
const DELUXE_BASE_UNITS = 100_000_000n;

export interface PaymentShop {
  /** The service: http://127.0.0.1:<port>. */
  origin: string;
  chain: LocalChain;
  /** The $ZN mint and the wallet paid, as the service was configured with them. */
  mint: Address;
  recipient: Address;
  /** Pays `amount` base units of the mint to the recipient, carrying the reference, as a wallet would. */
  pay(reference: string, amount?: bigint): Promise<string>;
  stop(): Promise<void>;
}

export async function startPaymentShop({ pollMs }: { pollMs: number }): Promise<PaymentShop> {
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
    const recipient = (await generateKeyPairSigner()).address;
    const payer = await chain.wallet();
    await chain.mintTo(mint, payer.address, 10n ** 15n);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, ["realtime/main.ts"], {
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
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    await waitForOk(`${origin}/readyz`, service, "the realtime service with payments on", 150_000);
    await waitUntilAvailable(origin);
    return {
      origin,
      chain,
      mint,
      recipient,
      pay: (reference, amount = DELUXE_BASE_UNITS) =>
        chain.pay({ payer, recipient, mint, amount, references: [reference as Address] }),
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
