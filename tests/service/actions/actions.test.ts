/**
 * The store as a blink (docs/decisions/2026-11-28-the-store-as-a-blink.md) against the real service
 * on a local chain: actions.json and the action's shape, typed with @solana/actions-spec; a button's
 * POST answering the store's transfer, which a wallet signs and sends and the watcher confirms,
 * after which the callback answers the receipt; every refusal an ActionError with its status; the
 * spec's CORS, version and chain headers on every answer, preflights included; the fair shares of
 * POST /payments holding here too; the RPC budget's 503 busy coming through as an ActionError; and,
 * with payments off, a 404 a blink client shows as no blink.
 */
import type {
  ActionError,
  ActionGetResponse,
  ActionsJson,
  CompletedAction,
  NextAction,
  TransactionResponse,
} from "@solana/actions-spec";
import {
  AccountRole,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type KeyPairSigner,
  signTransaction,
} from "@solana/kit";
import { getTransferCheckedInstructionDataDecoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { describe, expect, it } from "vitest";
import { ACTION_REFUSALS, ACTIONS_JSON_PATH } from "../../../service/actions/routes.ts";
import { PAYMENT_TRANSACTION_REFUSALS } from "../../../service/payments/paymentTransaction.ts";
import { PAYMENT_REQUEST_REFUSALS } from "../../../service/payments/requestRoutes.ts";
import type { PaymentSettings } from "../../../service/payments/settings.ts";
import { TIERS } from "../../../src/data/tiers.ts";
import { BUY_ACTION_PATH } from "../../../src/lib/blink.ts";
import type { PaymentStatusBody } from "../../../src/lib/payments.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { openPaymentService, type PaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import { cleanUpAfter, locationForThisTest, openTestStore, waitFor } from "../harness/stores.ts";

const DECIMALS = 6;
const DELUXE = TIERS.find((tier) => tier.id === 2) ?? TIERS[0];
const PRICE = BigInt(DELUXE?.price ?? 0) * 10n ** BigInt(DECIMALS);
const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const BLINK_ORIGIN = "https://dial.to";

interface Shop extends PaymentService {
  wallet(tokens?: bigint): Promise<KeyPairSigner>;
}

async function openShop(settings: Partial<PaymentSettings> = {}): Promise<Shop> {
  const shop = await openPaymentService(await locationForThisTest("pglite"), {
    decimals: DECIMALS,
    settings,
    // The store's token account, as a deployment that was paid before has it.
    prepare: async ({ chain, mint, recipient }) => void (await chain.mintTo(mint, recipient, 0n)),
  });
  await waitForPaymentsAvailable(shop.url);
  return {
    ...shop,
    async wallet(tokens) {
      const wallet = await shop.chain.wallet();
      if (tokens !== undefined) await shop.chain.mintTo(shop.mint, wallet.address, tokens);
      return wallet;
    },
  };
}

/** Every Actions answer carries these (@solana/actions' ACTIONS_CORS_HEADERS, the version and the chain). */
function expectActionHeaders(response: Response) {
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
  expect(response.headers.get("access-control-allow-methods")).toBe("GET,POST,PUT,OPTIONS");
  expect(response.headers.get("access-control-allow-headers")).toBe(
    "Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Accept-Action-Version, X-Accept-Blockchain-Ids",
  );
  expect(response.headers.get("access-control-expose-headers")).toBe("X-Action-Version, X-Blockchain-Ids");
  expect(response.headers.get("x-action-version")).toBe("2.4");
  expect(response.headers.get("x-blockchain-ids")).toBe(MAINNET);
}

async function refusal(response: Response): Promise<[number, ActionError]> {
  expectActionHeaders(response);
  return [response.status, (await response.json()) as ActionError];
}

function decode(base64: string) {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(transaction.messageBytes));
  return { transaction, message };
}

async function statusOf(shop: Shop, reference: string): Promise<PaymentStatusBody> {
  return (await (await shop.get(`/payments/${reference}`)).json()) as PaymentStatusBody;
}

describe("the store as a blink", () => {
  it("maps the home page to the buy action, and answers the action with a button per tier", async () => {
    const shop = await openShop();
    const rules = await shop.get(ACTIONS_JSON_PATH, { Origin: BLINK_ORIGIN });
    expect(rules.status).toBe(200);
    expectActionHeaders(rules);
    expect((await rules.json()) as ActionsJson).toEqual({ rules: [{ pathPattern: "/", apiPath: BUY_ACTION_PATH }] });

    const answer = await shop.get(BUY_ACTION_PATH, { Origin: BLINK_ORIGIN });
    expect(answer.status).toBe(200);
    expectActionHeaders(answer);
    const action = (await answer.json()) as ActionGetResponse;
    expect(action).toMatchObject({ type: "action", title: "The Nothing Store", label: "Buy Nothing" });
    expect(action.description).toContain("$ZN");
    // Absolute, and a file the service serves (the square SVG icon).
    expect(action.icon).toBe(`${shop.url}/favicon.svg`);
    expect(action.disabled).toBeUndefined();
    const links = action.links?.actions ?? [];
    expect(links.slice(0, TIERS.length)).toEqual(
      TIERS.map((tier) => ({
        type: "transaction",
        label: `${tier.name} · ${tier.price.toLocaleString("en-US")} $ZN`,
        href: `${BUY_ACTION_PATH}?tier=${tier.id}`,
      })),
    );
    // Buttons alone: a form of two fields would take their place in Dialect's client.
    expect(links).toHaveLength(TIERS.length);

    // A tier's own action, as the buy dialog shares it: its button, and it named.
    const deluxe = (await (await shop.get(`${BUY_ACTION_PATH}?tier=2`)).json()) as ActionGetResponse;
    expect(deluxe.title).toBe("Deluxe Nothing · The Nothing Store");
    expect(deluxe.links?.actions.map((link) => [link.label, link.href])).toEqual([
      ["Deluxe Nothing · 100 $ZN", `${BUY_ACTION_PATH}?tier=2`],
      ["Buy as a Verified Patron", `${BUY_ACTION_PATH}?tier=2&name={name}`],
    ]);
    expect(await refusal(await shop.get(`${BUY_ACTION_PATH}?tier=99`))).toEqual([
      404,
      { message: ACTION_REFUSALS.unknownTier },
    ]);

    // HEAD as GET; the preflight of each path.
    const head = await fetch(`${shop.url}${BUY_ACTION_PATH}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    for (const path of [ACTIONS_JSON_PATH, BUY_ACTION_PATH, `${BUY_ACTION_PATH}/x`]) {
      const preflight = await fetch(`${shop.url}${path}`, {
        method: "OPTIONS",
        headers: { Origin: BLINK_ORIGIN, "Access-Control-Request-Method": "POST" },
      });
      expect(preflight.status).toBe(204);
      expectActionHeaders(preflight);
    }
    // The rest of the service keeps its origins: no CORS for a stranger on /payments.
    const elsewhere = await shop.get("/payments/config", { Origin: BLINK_ORIGIN });
    expect(elsewhere.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers a button with the store's transfer; signed and sent, the callback answers the receipt", async () => {
    const shop = await openShop();
    const buyer = await shop.wallet(PRICE * 2n);
    const answer = await shop.post(
      `${BUY_ACTION_PATH}?tier=${DELUXE?.id}&name=Nobody`,
      { account: buyer.address, type: "transaction" },
      { Origin: BLINK_ORIGIN },
    );
    expect(answer.status).toBe(200);
    expectActionHeaders(answer);
    const body = (await answer.json()) as TransactionResponse;
    expect(body.type).toBe("transaction");
    expect(body.message).toBe("Deluxe Nothing, 100 $ZN");
    const next = body.links?.next;
    expect(next?.type).toBe("post");
    const href = next?.type === "post" ? next.href : "";
    expect(href).toMatch(new RegExp(`^${BUY_ACTION_PATH}/[1-9A-HJ-NP-Za-km-z]{32,44}$`));
    const reference = href.slice(BUY_ACTION_PATH.length + 1);

    const { transaction, message } = decode(body.transaction);
    expect(message.feePayer.address).toBe(buyer.address);
    // Found by its program: whatever else the builder puts first (a compute budget) is its own test's.
    const transfer = message.instructions.find((instruction) => instruction.programAddress === TOKEN_PROGRAM_ADDRESS);
    expect(transfer?.accounts?.at(-1)).toEqual({ address: reference, role: AccountRole.READONLY });
    expect(getTransferCheckedInstructionDataDecoder().decode(transfer?.data ?? new Uint8Array())).toMatchObject({
      amount: PRICE,
      decimals: DECIMALS,
    });
    // The request is the pages' kind: the same status route, named as the parameter said.
    expect(await statusOf(shop, reference)).toMatchObject({ status: "waiting", tierId: "2" });

    // Asked before any transaction, the callback says to wait, at once.
    const early = await shop.post(href, { account: buyer.address });
    expectActionHeaders(early);
    expect((await early.json()) as NextAction).toMatchObject({
      type: "action",
      disabled: true,
      label: "Waiting for confirmation",
    });

    const signature = await shop.chain.submit(await signTransaction([buyer.keyPair], transaction));
    const callback = await shop.post(href, { account: buyer.address, signature }, { Origin: BLINK_ORIGIN });
    expect(callback.status).toBe(200);
    expectActionHeaders(callback);
    const receipt = (await callback.json()) as CompletedAction;
    expect(receipt).toMatchObject({ type: "completed", title: "Paid: Deluxe Nothing", label: "Bought" });
    expect(receipt.icon).toBe(`${shop.url}/favicon.svg`);
    expect(receipt.description).toContain("Nobody joins the Verified Patrons.");
    expect(receipt.description).toContain(`https://explorer.example/tx/${signature}`);
    // GET /payments/<reference> answers from a cache of a second.
    await waitFor("the status route to say so", async () => (await statusOf(shop, reference)).status === "confirmed");
    expect(await statusOf(shop, reference)).toMatchObject({ status: "confirmed", signature });
    expect(await shop.chain.balance(shop.recipient, shop.mint)).toBe(PRICE);
    const metrics = await (await fetch(shop.service.metricsUrl)).text();
    expect(metrics).toContain('payment_confirmations_total{outcome="confirmed"} 1\n');
  });

  it("refuses with an ActionError and its status", async () => {
    const shop = await openShop();
    const buyer = await shop.wallet(PRICE);
    const buy = (query: string, body: unknown, headers?: Record<string, string>) =>
      shop.post(`${BUY_ACTION_PATH}${query}`, body, headers);
    expect(await refusal(await buy("?tier=2", { account: "not-an-address" }))).toEqual([
      400,
      { message: ACTION_REFUSALS.badAccount },
    ]);
    expect(await refusal(await buy("?tier=2", {}))).toEqual([400, { message: ACTION_REFUSALS.badAccount }]);
    expect(await refusal(await buy("", { account: buyer.address }))).toEqual([
      400,
      { message: ACTION_REFUSALS.noTier },
    ]);
    expect(await refusal(await buy("?tier=99", { account: buyer.address }))).toEqual([
      422,
      { message: ACTION_REFUSALS.unknownTier },
    ]);
    expect(await refusal(await buy("?tier=2&name=%F0%9F%A4%96%E2%80%8B", { account: buyer.address }))).toEqual([
      422,
      { message: PAYMENT_REQUEST_REFUSALS.invalidName.message },
    ]);
    expect(await refusal(await buy("?tier=2", "{", {}))).toEqual([400, { message: "The request is not JSON." }]);
    expect(await refusal(await buy("?tier=2", "{}", { "Content-Type": "text/plain" }))).toEqual([
      415,
      { message: "Send JSON." },
    ]);
    const large = await buy("?tier=2", { account: buyer.address, pad: "x".repeat(4096) });
    expect((await refusal(large))[0]).toBe(413);
    // A wallet without $ZN: the transaction request's refusal, as an ActionError.
    const empty = await shop.wallet();
    expect(await refusal(await buy("?tier=2", { account: empty.address }))).toEqual([
      422,
      { message: "This wallet holds no $ZN." },
    ]);
    // Methods: 405 with Allow.
    const put = await fetch(`${shop.url}${BUY_ACTION_PATH}`, { method: "PUT" });
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST, OPTIONS");
    expect((await refusal(put))[0]).toBe(405);
    const rulesPost = await fetch(`${shop.url}${ACTIONS_JSON_PATH}`, { method: "POST" });
    expect(rulesPost.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await refusal(rulesPost))[0]).toBe(405);
    const callbackGet = await shop.get(`${BUY_ACTION_PATH}/${buyer.address}`);
    expect(callbackGet.headers.get("allow")).toBe("POST, OPTIONS");
    expect((await refusal(callbackGet))[0]).toBe(405);
    // A callback for no purchase of the store's.
    expect(await refusal(await shop.post(`${BUY_ACTION_PATH}/${buyer.address}`, { account: buyer.address }))).toEqual([
      404,
      { message: ACTION_REFUSALS.noPayment },
    ]);
    expect(await refusal(await shop.post(`${BUY_ACTION_PATH}/nope`, { account: "x" }))).toEqual([
      400,
      { message: ACTION_REFUSALS.badAccount },
    ]);
  });

  it("holds a client to its fair share of the open requests: 429 with Retry-After; a wallet that cannot pay holds none", async () => {
    // 20 open requests at most: a client's share is one.
    const shop = await openShop({ maxOpenRequests: 20 });
    const buyer = await shop.wallet(PRICE * 2n);
    // A wallet that cannot pay is refused before a request is made: it holds none of the share.
    const empty = await shop.wallet();
    for (let tries = 0; tries < 3; tries++) {
      const refused = await shop.post(`${BUY_ACTION_PATH}?tier=1`, { account: empty.address });
      expect(await refusal(refused)).toEqual([422, { message: "This wallet holds no $ZN." }]);
    }
    const first = await shop.post(`${BUY_ACTION_PATH}?tier=1`, { account: buyer.address });
    expect(first.status).toBe(200);
    const second = await shop.post(`${BUY_ACTION_PATH}?tier=1`, { account: buyer.address });
    expect(second.headers.get("retry-after")).toBe("60");
    expect(await refusal(second)).toEqual([429, { message: PAYMENT_REQUEST_REFUSALS.networkBusy.message }]);
    // The pages' POST /payments is held by the same share.
    expect((await shop.post("/payments", { tierId: "1" })).status).toBe(429);
  });
});

describe("the store as a blink, on a spent RPC budget", () => {
  it("answers the transaction request's 503 busy as an ActionError, with Retry-After", async () => {
    // One call a second, the watcher's first: transfers get what is left, and soon none.
    const shop = await openShop({ rpcCallsPerSecond: 1 });
    const buyers: KeyPairSigner[] = [];
    for (let made = 0; made < 8; made++) buyers.push(await shop.wallet(PRICE));
    const answers = await Promise.all(
      buyers.map((buyer) => shop.post(`${BUY_ACTION_PATH}?tier=2`, { account: buyer.address })),
    );
    const busy = answers.filter((answer) => answer.status === 503);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 503)).toBe(true);
    expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) {
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await refusal(answer)).toEqual([503, { message: PAYMENT_TRANSACTION_REFUSALS.rpcBusy.message }]);
    }
  });
});

describe("the store as a blink, with payments off", () => {
  it("answers 404 with an ActionError, and CORS, so a blink client shows the plain link", async () => {
    const store = await openTestStore(await locationForThisTest("pglite"));
    cleanUpAfter(() => store.close());
    const service = await startAuctionService(store, { allowedOrigins: [] });
    cleanUpAfter(() => service.stop());
    for (const path of [ACTIONS_JSON_PATH, BUY_ACTION_PATH]) {
      const answer = await fetch(`${service.httpUrl}${path}`, { headers: { Origin: BLINK_ORIGIN } });
      expect(await refusal(answer)).toEqual([404, { message: ACTION_REFUSALS.paymentsOff }]);
    }
    const preflight = await fetch(`${service.httpUrl}${BUY_ACTION_PATH}`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expectActionHeaders(preflight);
  });
});
