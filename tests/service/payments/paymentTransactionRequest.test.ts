/**
 * Solana Pay transaction requests (docs/decisions/2026-11-27-transaction-requests.md) against an
 * in-process service on a local chain: GET's label and icon; POST's unsigned transaction, decoded
 * with @solana/kit to exactly the store's transfer (amount, accounts, reference, fee payer,
 * blockhash), which a wallet signs and sends and the real watcher confirms, credited once; each
 * refusal with its status and message; and CORS for any origin on this path only.
 */
import {
  AccountRole,
  type Address,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getUtf8Decoder,
  type Instruction,
  type KeyPairSigner,
  signTransaction,
} from "@solana/kit";
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
} from "@solana-program/compute-budget";
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  getTransferCheckedInstructionDataDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { describe, expect, it } from "vitest";
import { endedRefusal, insufficientTokensRefusal } from "../../../service/payments/paymentTransaction.ts";
import { BLOCKHASH_SHARE_MS } from "../../../service/payments/requestReads.ts";
import { COMMON_REFUSALS } from "../../../service/payments/routeShared.ts";
import type { PaymentSettings } from "../../../service/payments/settings.ts";
import { COMPUTE_UNIT_LIMIT, MEMO_PROGRAM_ADDRESS } from "../../../service/payments/transactionRequest.ts";
import { TRANSACTION_REQUEST_REFUSALS } from "../../../service/payments/transactionRequestRoutes.ts";
import { TIERS } from "../../../src/data/tiers.ts";
import type { CreatedPayment, PaymentStatusBody } from "../../../src/lib/payments.ts";
import { openPaymentService, type PaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import { BACKENDS, type Backend, locationForThisTest, waitFor } from "../harness/stores.ts";

const DECIMALS = 6;
function tier(id: number) {
  const found = TIERS.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no tier ${id}`);
  return found;
}
const DELUXE = tier(2);
const PRICE = BigInt(DELUXE.price) * 10n ** BigInt(DECIMALS);

/** The service over a local chain, with the test's clock skew and the calls it makes. */
interface Shop extends PaymentService {
  /** Ms added to the service's clock. */
  skew: { ms: number };
  /** POST /payments for the Deluxe tier: the 201's body. */
  request(): Promise<CreatedPayment>;
  /** A wallet holding `tokens` base units of the mint (none: no token account at all). */
  wallet(tokens?: bigint): Promise<KeyPairSigner>;
}

async function openShop(
  backend: Backend,
  options: { settings?: Partial<PaymentSettings>; allowedOrigins?: string[]; storeAccount?: boolean } = {},
): Promise<Shop> {
  const skew = { ms: 0 };
  const shop = await openPaymentService(await locationForThisTest(backend), {
    decimals: DECIMALS,
    settings: options.settings,
    config: { allowedOrigins: options.allowedOrigins ?? [] },
    paymentOptions: { now: () => Date.now() + skew.ms, rpcTimeoutMs: 2_000 },
    // The store's token account, as a deployment that was paid before has it.
    prepare: async ({ chain, mint, recipient }) => {
      if (options.storeAccount ?? true) await chain.mintTo(mint, recipient, 0n);
    },
  });
  await waitForPaymentsAvailable(shop.url);
  return {
    ...shop,
    skew,
    async request() {
      const response = await shop.post("/payments", { tierId: String(DELUXE.id) });
      expect(response.status).toBe(201);
      return (await response.json()) as CreatedPayment;
    },
    async wallet(tokens) {
      const wallet = await shop.chain.wallet();
      if (tokens !== undefined) await shop.chain.mintTo(shop.mint, wallet.address, tokens);
      return wallet;
    },
  };
}

const transactionPath = (reference: string) => `/payments/${reference}/transaction`;

/** The answer's transaction, decoded: its wire form and its message with every account's role. */
function decode(base64: string) {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const compiled = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  return { transaction, compiled, message: decompileTransactionMessage(compiled) };
}

async function statusOf(shop: Shop, reference: string): Promise<PaymentStatusBody> {
  return (await (await shop.get(`/payments/${reference}`)).json()) as PaymentStatusBody;
}

describe.each(BACKENDS)("a transaction request on %s", (backend) => {
  it("answers the store's transfer, unsigned, which a wallet signs and sends and the watcher confirms once", async () => {
    const shop = await openShop(backend);
    const buyer = await shop.wallet(PRICE * 3n);
    const created = await shop.request();
    const { reference } = created;
    expect(created.transactionUrl).toBe(`solana:${shop.url}${transactionPath(reference)}`);
    expect(created.url).toMatch(/^solana:[1-9A-HJ-NP-Za-km-z]+\?amount=100&/);

    const label = await shop.get(transactionPath(reference));
    expect(label.status).toBe(200);
    expect(await label.json()).toEqual({ label: "The Nothing Store", icon: `${shop.url}/favicon.svg` });

    const answer = await shop.post(transactionPath(reference), { account: buyer.address });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { transaction: string; message: string };
    expect(body.message).toBe("Deluxe Nothing, 100 $ZN");
    expect(Object.keys(body).sort()).toEqual(["message", "transaction"]);

    const { transaction, compiled, message } = decode(body.transaction);
    expect(compiled.version).toBe(0);
    // Unsigned: one signature slot, the buyer's, all zeros.
    expect(Object.entries(transaction.signatures)).toEqual([[buyer.address, null]]);
    expect(message.feePayer.address).toBe(buyer.address);
    expect(compiled.header.numSignerAccounts).toBe(1);
    // A blockhash the chain knows: its latest, nothing sent since.
    expect(compiled.lifetimeToken).toBe(shop.chain.svm.latestBlockhash());

    const buyerAccount = await shop.chain.tokenAccount(buyer.address, shop.mint);
    const storeAccount = await shop.chain.tokenAccount(shop.recipient, shop.mint);
    const [unitLimit, unitPrice, transfer, memo, ...rest] = message.instructions;
    expect(rest).toEqual([]);
    // The priority-fee policy: a unit limit sized to the transfer, the operator's price per unit.
    expect(unitLimit?.programAddress).toBe(COMPUTE_BUDGET_PROGRAM_ADDRESS);
    expect(getSetComputeUnitLimitInstructionDataDecoder().decode(unitLimit?.data ?? new Uint8Array())).toMatchObject({
      units: COMPUTE_UNIT_LIMIT.transfer,
    });
    expect(getSetComputeUnitPriceInstructionDataDecoder().decode(unitPrice?.data ?? new Uint8Array())).toMatchObject({
      microLamports: 50_000n,
    });
    expect(transfer?.programAddress).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(transfer?.accounts).toEqual([
      { address: buyerAccount, role: AccountRole.WRITABLE },
      { address: shop.mint, role: AccountRole.READONLY },
      { address: storeAccount, role: AccountRole.WRITABLE },
      { address: buyer.address, role: AccountRole.WRITABLE_SIGNER },
      // The reference: read-only, no signer, where the watcher finds the payment.
      { address: reference, role: AccountRole.READONLY },
    ]);
    expect(getTransferCheckedInstructionDataDecoder().decode(transfer?.data ?? new Uint8Array())).toEqual({
      discriminator: 12,
      amount: PRICE,
      decimals: DECIMALS,
    });
    expect(memo?.programAddress).toBe(MEMO_PROGRAM_ADDRESS);
    expect(memo?.accounts ?? []).toEqual([]);
    expect(getUtf8Decoder().decode(memo?.data ?? new Uint8Array())).toBe("Deluxe Nothing");

    // The wallet signs and sends it as it came.
    const signed = await signTransaction([buyer.keyPair], transaction);
    const signature = await shop.chain.submit(signed);
    const used = Number(shop.chain.executed.at(-1)?.meta?.computeUnitsConsumed ?? Number.NaN);
    console.log(`compute units: a Token transfer with its memo used ${used} of ${COMPUTE_UNIT_LIMIT.transfer}`);
    expect(used).toBeLessThanOrEqual(COMPUTE_UNIT_LIMIT.transfer);
    await waitFor("the confirmation", async () => (await statusOf(shop, reference)).status === "confirmed");
    expect(await statusOf(shop, reference)).toMatchObject({ status: "confirmed", receivedAmount: "100", signature });
    expect(await shop.chain.balance(buyer.address, shop.mint)).toBe(PRICE * 2n);
    expect(await shop.chain.balance(shop.recipient, shop.mint)).toBe(PRICE);
    // Credited once: one confirmation, and the request takes no second transaction.
    const metrics = await (await fetch(shop.service.metricsUrl)).text();
    expect(metrics).toContain('payment_confirmations_total{outcome="confirmed"} 1\n');
    const again = await shop.post(transactionPath(reference), { account: buyer.address });
    expect([again.status, await again.json()]).toEqual([410, endedRefusal("confirmed")]);
    expect(shop.logs.filter((line) => line.msg === "transaction requested")).toEqual([
      expect.objectContaining({ reference, address: "127.0.0.x", createsStoreAccount: false }),
    ]);
  });
});

describe("a transaction request", () => {
  it("creates the store's token account first while it does not exist, and the payment still lands", async () => {
    const shop = await openShop("pglite", { storeAccount: false });
    const buyer = await shop.wallet(PRICE);
    const { reference } = await shop.request();
    const body = (await (await shop.post(transactionPath(reference), { account: buyer.address })).json()) as {
      transaction: string;
    };
    const { transaction, message } = decode(body.transaction);
    const instructions: readonly Instruction[] = message.instructions;
    expect(instructions.map((instruction) => instruction.programAddress)).toEqual([
      COMPUTE_BUDGET_PROGRAM_ADDRESS,
      COMPUTE_BUDGET_PROGRAM_ADDRESS,
      ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
      TOKEN_PROGRAM_ADDRESS,
      MEMO_PROGRAM_ADDRESS,
    ]);
    expect(message.feePayer.address).toBe(buyer.address);
    expect(
      getSetComputeUnitLimitInstructionDataDecoder().decode(instructions[0]?.data ?? new Uint8Array()),
    ).toMatchObject({
      units: COMPUTE_UNIT_LIMIT.withStoreAccount,
    });
    await shop.chain.submit(await signTransaction([buyer.keyPair], transaction));
    const used = Number(shop.chain.executed.at(-1)?.meta?.computeUnitsConsumed ?? Number.NaN);
    console.log(
      `compute units: creating the store's account, then the transfer, used ${used} of ${COMPUTE_UNIT_LIMIT.withStoreAccount}`,
    );
    expect(used).toBeLessThanOrEqual(COMPUTE_UNIT_LIMIT.withStoreAccount);
    await waitFor("the confirmation", async () => (await statusOf(shop, reference)).status === "confirmed");
    expect(await shop.chain.balance(shop.recipient, shop.mint)).toBe(PRICE);
  });

  it("refuses what it cannot build, each with its status and a message a person understands", async () => {
    const shop = await openShop("pglite");
    const refusal = async (response: Response) => [response.status, await response.json()];
    const { reference } = await shop.request();
    const path = transactionPath(reference);
    const buyer = await shop.wallet(PRICE);

    const unknown = transactionPath((await shop.wallet()).address);
    const notFound = [404, TRANSACTION_REQUEST_REFUSALS.notFound];
    expect(await refusal(await shop.get(unknown))).toEqual(notFound);
    expect(await refusal(await shop.post(unknown, { account: buyer.address }))).toEqual(notFound);
    expect(await refusal(await shop.post(transactionPath("not-a-reference"), { account: buyer.address }))).toEqual(
      notFound,
    );

    const malformed = [400, TRANSACTION_REQUEST_REFUSALS.noAccount];
    expect(await refusal(await shop.post(path, { account: "not-an-address" }))).toEqual(malformed);
    expect(await refusal(await shop.post(path, { account: 42 }))).toEqual(malformed);
    expect(await refusal(await shop.post(path, {}))).toEqual(malformed);
    expect(await refusal(await shop.post(path, "[]"))).toEqual(malformed);
    expect(await refusal(await shop.post(path, "{not json"))).toEqual([400, COMMON_REFUSALS.notJson]);
    expect((await shop.post(path, { account: buyer.address }, { "Content-Type": "text/plain" })).status).toBe(415);

    const empty = await shop.wallet();
    expect(await refusal(await shop.post(path, { account: empty.address }))).toEqual([
      422,
      TRANSACTION_REQUEST_REFUSALS.noTokens,
    ]);
    const poor = await shop.wallet(3n * 10n ** BigInt(DECIMALS));
    expect(await refusal(await shop.post(path, { account: poor.address }))).toEqual([
      422,
      insufficientTokensRefusal("3", "Deluxe Nothing", "100"),
    ]);
    const almost = await shop.wallet(PRICE - 1n);
    expect(await refusal(await shop.post(path, { account: almost.address }))).toEqual([
      422,
      insufficientTokensRefusal("99.999999", "Deluxe Nothing", "100"),
    ]);
    expect(await refusal(await shop.post(path, { account: shop.recipient }))).toEqual([
      422,
      TRANSACTION_REQUEST_REFUSALS.ownWallet,
    ]);

    // The RPC limited or failing: 503 with when to ask again (its own Retry-After, else 5 s). Past
    // the shared blockhash, so that it is asked again.
    shop.skew.ms += BLOCKHASH_SHARE_MS;
    const accountReads = () => shop.rpc.calls.get("getMultipleAccounts") ?? 0;
    const readsBefore = accountReads();
    shop.rpc.failNext(1, { status: 429, retryAfter: "7" }, "getLatestBlockhash");
    const limited = await shop.post(path, { account: buyer.address });
    expect([limited.status, limited.headers.get("retry-after"), await limited.json()]).toEqual([
      503,
      "7",
      COMMON_REFUSALS.unavailable,
    ]);
    // The buyer's read, made beside the blockhash, reaches the chain in its own time; then a
    // wallet not read yet has a read of its own, which fails.
    await waitFor("the buyer's read beside the blockhash", () => accountReads() > readsBefore);
    const unread = await shop.wallet(PRICE);
    shop.rpc.failNext(1, { status: 500 }, "getMultipleAccounts");
    const failing = await shop.post(path, { account: unread.address });
    expect([failing.status, failing.headers.get("retry-after")]).toEqual([503, "5"]);
    expect((await shop.post(path, { account: buyer.address })).status).toBe(200);
    const metrics = await (await fetch(shop.service.metricsUrl)).text();
    expect(metrics).toContain('payment_rpc_errors_total{method="getLatestBlockhash",kind="rate_limited"} 1\n');
    expect(metrics).toContain('payment_rpc_errors_total{method="getMultipleAccounts",kind="server_error"} 1\n');
    expect(shop.logs).toContainEqual(
      expect.objectContaining({ msg: "a transaction request could not reach the Solana RPC", kind: "rate_limited" }),
    );

    // Ended: paid (by a transfer request here), then past its end.
    const paid = await shop.request();
    await shop.chain.pay({
      payer: buyer,
      recipient: shop.recipient,
      mint: shop.mint,
      amount: PRICE,
      references: [paid.reference as Address],
    });
    await waitFor("the confirmation", async () => (await statusOf(shop, paid.reference)).status === "confirmed");
    expect(await refusal(await shop.get(transactionPath(paid.reference)))).toEqual([410, endedRefusal("confirmed")]);
    shop.skew.ms = 31 * 60_000;
    const expired = [410, endedRefusal("expired")];
    expect(await refusal(await shop.post(path, { account: buyer.address }))).toEqual(expired);
    expect(await refusal(await shop.get(path))).toEqual(expired);
  });

  it("limits each client's POSTs as POST /payments is limited, in a bucket of their own", async () => {
    const shop = await openShop("pglite", { settings: { rateLimit: 3 } });
    const { reference } = await shop.request();
    const buyer = await shop.wallet(PRICE);
    const statuses = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      statuses.push((await shop.post(transactionPath(reference), { account: buyer.address })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await shop.post(transactionPath(reference), { account: buyer.address });
    expect(await refused.json()).toEqual(TRANSACTION_REQUEST_REFUSALS.rateLimited);
    // POST /payments counts apart: the page's two requests left are still there.
    expect((await shop.post("/payments", { tierId: "1" })).status).toBe(201);
  });

  it("answers any origin on its path only, without credentials, preflight included", async () => {
    const shop = await openShop("pglite", { allowedOrigins: ["https://pages.example"] });
    const { reference } = await shop.request();
    const path = transactionPath(reference);
    const wallet = { Origin: "https://wallet.example" };
    const buyer = await shop.wallet(PRICE);

    const label = await shop.get(path, wallet);
    expect(label.headers.get("access-control-allow-origin")).toBe("*");
    expect(label.headers.get("access-control-allow-credentials")).toBeNull();
    // The pages are elsewhere (no STATIC_DIR): the icon is on the pages' origin.
    expect(await label.json()).toEqual({ label: "The Nothing Store", icon: "https://pages.example/favicon.svg" });
    // No Origin at all (a wallet app's fetch) is answered the same.
    expect((await shop.get(path)).headers.get("access-control-allow-origin")).toBe("*");

    const preflight = await fetch(`${shop.url}${path}`, {
      method: "OPTIONS",
      headers: { ...wallet, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(Object.fromEntries([...preflight.headers].filter(([name]) => name.startsWith("access-control-")))).toEqual({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, HEAD, POST",
      "access-control-allow-headers": "Content-Type",
      "access-control-max-age": "600",
    });

    const posted = await shop.post(path, { account: buyer.address }, wallet);
    expect(posted.status).toBe(200);
    expect(posted.headers.get("access-control-allow-origin")).toBe("*");
    const refused = await shop.post(path, { account: "nope" }, wallet);
    expect([refused.status, refused.headers.get("access-control-allow-origin")]).toEqual([400, "*"]);
    const put = await fetch(`${shop.url}${path}`, { method: "PUT", headers: wallet });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"]);
    const head = await fetch(`${shop.url}${path}`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);

    // Every other payments route keeps its own origins.
    expect((await shop.post("/payments", { tierId: "1" }, wallet)).status).toBe(403);
    const status = await shop.get(`/payments/${reference}`, wallet);
    expect(status.headers.get("access-control-allow-origin")).toBeNull();
  });
});
