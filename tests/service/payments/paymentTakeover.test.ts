/**
 * One payment watcher per deployment (docs/design.md#8), with real service processes on one
 * PostgreSQL database and a local chain: the instance holding the watcher's lease is killed (or
 * frozen) in the middle of a poll, the other takes over within 10 s, and the payment is credited
 * exactly once. And a placeholder address, or pages built with another address than the one the
 * watcher watches, stop the service at start with exit code 2.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { startChainRpcServer } from "../../../scripts/harness/chainRpcServer.ts";
import { LocalChain } from "../../../scripts/harness/localChain.ts";
import type { CreatedPayment, PaymentStatusBody } from "../../../src/lib/payments.ts";
import { PLACEHOLDER_DEFAULTS } from "../../../src/lib/siteConfig.ts";
import { type ServiceProcess, serviceProcessEnv, startServiceProcess } from "../harness/serviceProcess.ts";
import { cleanUpAfter, createTestDatabase, waitFor, withDirectSql } from "../harness/stores.ts";

const TAKEOVER_LIMIT_MS = 10_000;
const HOLDS_LEASE = "payment watcher started: this instance holds the lease";

async function deployment() {
  const database = await createTestDatabase();
  cleanUpAfter(() => database.drop());
  const chain = await LocalChain.create();
  const rpc = await startChainRpcServer(chain);
  cleanUpAfter(() => rpc.stop());
  const mint = await chain.createMint({ decimals: 6, program: "token" });
  const recipient = (await generateKeyPairSigner()).address;
  const env = {
    SOLANA_RPC_URL: rpc.url,
    PUBLIC_PAYMENT_ADDRESS: recipient,
    PUBLIC_CONTRACT_ADDRESS: mint,
    PAYMENT_POLL_MS: "100",
  };
  const start = async () => {
    const service = await startServiceProcess({ databaseUrl: database.url, env });
    cleanUpAfter(() => service.stop());
    return service;
  };
  const services = [await start(), await start()];
  await waitFor("one instance to hold the watcher's lease", () =>
    services.some((service) => service.logs.some((line) => line.msg === HOLDS_LEASE)),
  );
  const holder = services.find((service) => service.logs.some((line) => line.msg === HOLDS_LEASE)) as ServiceProcess;
  const other = services.find((service) => service !== holder) as ServiceProcess;
  await waitFor("both instances to take payments", async () => {
    for (const service of services) {
      const config = (await (await fetch(`${service.httpUrl}/payments/config`)).json()) as { available: boolean };
      if (!config.available) return false;
    }
    return true;
  });
  const payer = await chain.wallet();
  await chain.mintTo(mint, payer.address, 10n ** 12n);
  const pay = (reference: string) =>
    chain.pay({ payer, recipient, mint, amount: 100_000_000n, references: [reference as Address] });
  const request = async (service: ServiceProcess) => {
    const response = await fetch(`${service.httpUrl}/payments`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ tierId: "2", name: "Survivor" }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as CreatedPayment;
  };
  const status = async (service: ServiceProcess, reference: string) =>
    ((await (await fetch(`${service.httpUrl}/payments/${reference}`)).json()) as PaymentStatusBody).status;
  const credits = () =>
    withDirectSql({ backend: "postgres", databaseUrl: database.url, dataDir: "", remove: async () => {} }, (query) =>
      query("SELECT reference, status, signature FROM payments WHERE signature IS NOT NULL"),
    );
  return { chain, rpc, holder, other, pay, request, status, credits };
}

describe("the payment watcher's lease on PostgreSQL", () => {
  it("passes to the other instance within 10 s when its holder is killed mid-poll, and the payment is credited once", async () => {
    const { rpc, holder, other, pay, request, status, credits } = await deployment();
    const { reference } = await request(other);
    // The holder lists the transfer, then its fetch of it hangs: it dies there.
    rpc.failNext(1, { hang: true }, "getTransaction");
    const fetchesBefore = rpc.calls.get("getTransaction") ?? 0;
    const signature = await pay(reference);
    await waitFor("the holder's hung fetch", () => (rpc.calls.get("getTransaction") ?? 0) > fetchesBefore);
    const killedAt = Date.now();
    holder.signal("SIGKILL");
    await holder.exited;
    await waitFor(
      "the other instance to take the lease",
      () => other.logs.some((line) => line.msg === HOLDS_LEASE),
      TAKEOVER_LIMIT_MS,
    );
    await waitFor("the confirmation", async () => (await status(other, reference)) === "confirmed", TAKEOVER_LIMIT_MS);
    const tookMs = Date.now() - killedAt;
    console.log(`payment watcher takeover after SIGKILL mid-poll: confirmed ${tookMs} ms after the kill`);
    expect(tookMs).toBeLessThan(TAKEOVER_LIMIT_MS);
    expect(await credits()).toEqual([{ reference, status: "confirmed", signature }]);
  });

  it("passes to the other instance within 10 s when its holder freezes, and the thawed holder writes nothing", async () => {
    const { holder, other, pay, request, status, credits } = await deployment();
    holder.signal("SIGSTOP");
    const frozenAt = Date.now();
    cleanUpAfter(async () => holder.child.kill("SIGCONT"));
    await waitFor(
      "the other instance to take the lease",
      () => other.logs.some((line) => line.msg === HOLDS_LEASE),
      TAKEOVER_LIMIT_MS,
    );
    const tookMs = Date.now() - frozenAt;
    console.log(`payment watcher takeover from a frozen holder: ${tookMs} ms`);
    expect(tookMs).toBeLessThan(TAKEOVER_LIMIT_MS);
    const { reference } = await request(other);
    const signature = await pay(reference);
    await waitFor("the confirmation", async () => (await status(other, reference)) === "confirmed");
    holder.child.kill("SIGCONT");
    // Thawed, the old holder finds its session gone and stops watching.
    await waitFor("the thawed holder to notice its lease is gone", () =>
      holder.logs.some((line) => line.msg === "payment watcher stopped: the lease is gone"),
    );
    expect(await credits()).toEqual([{ reference, status: "confirmed", signature }]);
  });
});

/** Starts the service with payments on (an RPC nobody answers) and `env`; its exit code and standard error. */
async function refusedStart(env: Record<string, string>, staticDir = ""): Promise<{ code: number; stderr: string }> {
  const child = spawn(process.execPath, ["service/main.ts"], {
    env: serviceProcessEnv({
      dataDir: "/nonexistent",
      env: { SOLANA_RPC_URL: "http://127.0.0.1:9", STATIC_DIR: staticDir, ...env },
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, "close");
  return { code, stderr };
}

it("refuses to start with a placeholder payment address: exit code 2, naming the variable", async () => {
  const { code, stderr } = await refusedStart({
    PUBLIC_PAYMENT_ADDRESS: PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS,
    PUBLIC_CONTRACT_ADDRESS: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  });
  expect(code).toBe(2);
  expect(stderr).toContain(
    `Configuration error: PUBLIC_PAYMENT_ADDRESS is still the placeholder "${PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS}"`,
  );
});

it("refuses to serve pages built with another payment address than the watcher's: exit code 2, naming both", async () => {
  const pages = await mkdtemp(join(tmpdir(), "nothing-other-address-"));
  cleanUpAfter(() => rm(pages, { recursive: true, force: true }));
  const built = PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS;
  // What a tier card of the built home page carries (src/components/TierCard.astro).
  await writeFile(
    join(pages, "index.html"),
    `<!doctype html><article><tier-actions class="grid" data-plan-id="1" data-payment-address="${built}"></tier-actions></article>`,
  );
  await writeFile(join(pages, "404.html"), "<!doctype html><h1>Oops</h1>");
  const watched = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
  const { code, stderr } = await refusedStart(
    { PUBLIC_PAYMENT_ADDRESS: watched, PUBLIC_CONTRACT_ADDRESS: "So11111111111111111111111111111111111111112" },
    pages,
  );
  expect(code).toBe(2);
  expect(stderr).toContain(
    `Configuration error: PUBLIC_PAYMENT_ADDRESS is ${watched} for the service, but the pages in STATIC_DIR (${pages}) were built with PUBLIC_PAYMENT_ADDRESS=${built}: rebuild them`,
  );
});
