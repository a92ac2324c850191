/**
 * The payment routes over HTTP (docs/design.md#8) against an in-process service on a local chain:
 * POST /payments and the transfer request it answers (checked by @solana/pay's own parseURL), the
 * status of a request as the watcher settles it, Verified Patrons, the refusals, CORS, and
 * payments off or unavailable. The service's watcher runs on its own timers here, polling every
 * PAYMENT_POLL_MS = 100 ms.
 */
import { type Address, generateKeyPairSigner, getAddressDecoder } from "@solana/kit";
import { parseURL, type TransferRequestURL } from "@solana/pay";
import { beforeEach, describe, expect, it } from "vitest";
import type { LocalChain } from "../../../scripts/harness/localChain.ts";
import { PATRON_REFUSALS } from "../../../service/payments/patronRoutes.ts";
import { PAYMENT_REQUEST_REFUSALS } from "../../../service/payments/requestRoutes.ts";
import { COMMON_REFUSALS } from "../../../service/payments/routeShared.ts";
import type { PaymentSettings } from "../../../service/payments/settings.ts";
import { TIERS } from "../../../src/data/tiers.ts";
import { REFUSAL_TEXTS } from "../../../src/lib/auction/refusalTexts.ts";
import type { CreatedPayment, PaymentStatusBody, PaymentsConfigBody } from "../../../src/lib/payments.ts";
import type { PatronsBody } from "../../../src/lib/verifiedPatrons.ts";
import { seededRandom } from "../../harness/seededRandom.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { openPaymentService, type PaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import {
  BACKENDS,
  cleanUpAfter,
  locationForThisTest,
  storeForThisTest,
  type TestLocation,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

const DECIMALS = 6;
const DELUXE = TIERS.find((tier) => tier.id === 2) ?? TIERS[0];
if (!DELUXE) throw new Error("no tiers");

function seededBytes(seed: number) {
  const random = seededRandom(seed);
  return (length: number) => Uint8Array.from({ length }, () => Math.floor(random() * 256));
}

/** The service over a local chain; `post` sends POST /payments. */
interface Shop extends Omit<PaymentService, "post"> {
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  payer(): Promise<Awaited<ReturnType<LocalChain["wallet"]>>>;
}

async function openShop(
  location: TestLocation,
  options: {
    seed?: number;
    settings?: Partial<PaymentSettings>;
    allowedOrigins?: string[];
    refuseAtStart?: boolean;
    rpcTimeoutMs?: number;
    trustProxy?: number;
    networkSharePercent?: number;
  } = {},
): Promise<Shop> {
  const shop = await openPaymentService(location, {
    decimals: DECIMALS,
    settings: options.settings,
    config: {
      allowedOrigins: options.allowedOrigins ?? [],
      trustProxy: options.trustProxy ?? 0,
      networkSharePercent: options.networkSharePercent ?? 10,
    },
    paymentOptions: { randomBytes: seededBytes(options.seed ?? 1), rpcTimeoutMs: options.rpcTimeoutMs ?? 2_000 },
    prepare: async ({ rpc }) => {
      if (options.refuseAtStart) await rpc.refuse();
    },
  });
  return {
    ...shop,
    post: (body, headers) => shop.post("/payments", body, headers),
    async payer() {
      const payer = await shop.chain.wallet();
      await shop.chain.mintTo(shop.mint, payer.address, 10n ** 15n);
      return payer;
    },
  };
}

async function waitAvailable(shop: Shop) {
  await waitForPaymentsAvailable(shop.url);
}

async function statusOf(shop: Shop, reference: string): Promise<PaymentStatusBody> {
  return (await (await shop.get(`/payments/${reference}`)).json()) as PaymentStatusBody;
}

describe("payments off", () => {
  it("answers /payments/config (enabled false) and /payments/patrons (404, readable cross-origin) only, and leaves every other /payments path as before", async () => {
    const store = await storeForThisTest(await locationForThisTest("pglite"));
    const service = await startAuctionService(store, { allowedOrigins: ["https://pages.example"] });
    cleanUpAfter(() => service.stop());
    const config = await fetch(`${service.httpUrl}/payments/config`);
    expect(config.status).toBe(200);
    expect(await config.json()).toEqual({ enabled: false, available: false });
    const post = await fetch(`${service.httpUrl}/payments`, { method: "POST", body: "{}" });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({ error: "not_found" });
    // Verified Patrons' one request (docs/design.md#8): a 404 a page on another origin can read.
    const patrons = await fetch(`${service.httpUrl}/payments/patrons`, {
      headers: { Origin: "https://pages.example" },
    });
    expect(patrons.status).toBe(404);
    expect(patrons.headers.get("access-control-allow-origin")).toBe("https://pages.example");
    expect(await patrons.json()).toEqual(PATRON_REFUSALS.paymentsOff);
  });
});

describe.each(BACKENDS)("the payment routes on %s", (backend) => {
  let location: TestLocation;

  beforeEach(async () => {
    location = await locationForThisTest(backend);
  });

  it("answers a purchase with a Solana Pay transfer request, then its status as the chain confirms it, then the patron", async () => {
    const shop = await openShop(location, { seed: 42 });
    await waitAvailable(shop);
    const before = Date.now();
    const response = await shop.post({ tierId: String(DELUXE.id), name: "  Mr. Nobody  " });
    const after = Date.now();
    expect(response.status).toBe(201);
    const created = (await response.json()) as CreatedPayment;
    const reference = getAddressDecoder().decode(seededBytes(42)(32));
    expect(created).toEqual({
      reference,
      url: expect.any(String),
      transactionUrl: `solana:${shop.url}/payments/${reference}/transaction`,
      recipient: shop.recipient,
      mint: shop.mint,
      amount: String(DELUXE.price),
      tierId: String(DELUXE.id),
      tierName: DELUXE.name,
      spins: DELUXE.spins,
      expiresAt: expect.any(String),
    });
    const expiresAt = Date.parse(created.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 30 * 60_000);
    expect(created.url).toBe(
      `solana:${shop.recipient}?amount=100&spl-token=${shop.mint}&reference=${reference}&label=The%20Nothing%20Store&message=Deluxe%20Nothing`,
    );
    // An independent reading of the URL: Solana Pay's own parser.
    const parsed = parseURL(created.url) as TransferRequestURL;
    expect(parsed.recipient.toBase58()).toBe(shop.recipient);
    expect(parsed.amount?.toFixed()).toBe(String(DELUXE.price));
    expect(parsed.splToken?.toBase58()).toBe(shop.mint);
    expect(parsed.reference?.map((key) => key.toBase58())).toEqual([reference]);
    expect(parsed.label).toBe("The Nothing Store");
    expect(parsed.message).toBe("Deluxe Nothing");

    expect(await statusOf(shop, reference)).toEqual({
      reference,
      status: "waiting",
      tierId: "2",
      tierName: DELUXE.name,
      spins: DELUXE.spins,
      priceAmount: "100",
      expiresAt: created.expiresAt,
    });

    const payer = await shop.payer();
    const signature = await shop.chain.pay({
      payer,
      recipient: shop.recipient,
      mint: shop.mint,
      amount: BigInt(DELUXE.price) * 10n ** BigInt(DECIMALS),
      references: [reference as Address],
    });
    await waitFor("the confirmation", async () => (await statusOf(shop, reference)).status === "confirmed");
    expect(await statusOf(shop, reference)).toMatchObject({ status: "confirmed", receivedAmount: "100", signature });

    // One log line for the request and one for its outcome; the metrics count both and the RPC's calls.
    expect(shop.logs.filter((line) => line.msg === "payment requested")).toEqual([
      expect.objectContaining({
        reference,
        tierId: 2,
        priceBaseUnits: "100000000",
        named: true,
        address: "127.0.0.x",
      }),
    ]);
    expect(shop.logs.filter((line) => line.msg === "payment confirmed")).toEqual([
      expect.objectContaining({ reference, signature, outcome: "confirmed", receivedBaseUnits: "100000000" }),
    ]);
    const metrics = await (await fetch(shop.service.metricsUrl)).text();
    expect(metrics).toContain('payment_requests_total{outcome="created"} 1');
    expect(metrics).toContain('payment_confirmations_total{outcome="confirmed"} 1');
    expect(metrics).toContain("payment_watcher_active 1");
    expect(metrics).toMatch(/payment_rpc_calls_total\{method="getTransaction"\} 1\n/);
    expect(metrics).toMatch(/payment_rpc_latency_seconds_count\{method="getSignaturesForAddress"\} [1-9]/);
    // Every outcome has its series from the start, at zero until it happens.
    for (const outcome of ["bad_request", "too_large", "rate_limited", "busy", "unavailable", "origin_not_allowed"]) {
      expect(metrics).toContain(`payment_requests_total{outcome="${outcome}"} 0\n`);
    }
    for (const outcome of ["underpaid", "late", "unknown_reference", "set_aside", "expired"]) {
      expect(metrics).toContain(`payment_confirmations_total{outcome="${outcome}"} 0\n`);
    }
    expect(metrics).toContain("payments_available 1\n");

    const patrons = await shop.get("/payments/patrons");
    expect(patrons.headers.get("cache-control")).toBe("public, max-age=5");
    expect((await patrons.json()) as PatronsBody).toEqual({
      patrons: [
        {
          name: "Mr. Nobody",
          total: "100",
          latestSignature: signature,
          explorerUrl: `https://explorer.example/tx/${signature}?cluster=local`,
        },
      ],
    });
  });

  it("refuses what it cannot take, each with its own answer, and stores nothing for it", async () => {
    const shop = await openShop(location, { settings: { rateLimit: 3 } });
    await waitAvailable(shop);
    await shop.store.moderate({ action: "block", bidderName: "Blocked Bob", reason: null, sessionId: "test" });
    const refusal = async (response: Response) => ({ status: response.status, body: await response.json() });

    expect(await refusal(await shop.post("{not json"))).toEqual({ status: 400, body: COMMON_REFUSALS.notJson });
    expect(await refusal(await shop.post({ tierId: "2" }, { "Content-Type": "text/plain" }))).toEqual({
      status: 415,
      body: COMMON_REFUSALS.unsupportedMediaType,
    });
    expect(await refusal(await shop.post({ tierId: 2 }))).toEqual({
      status: 400,
      body: PAYMENT_REQUEST_REFUSALS.tierIdNotAString,
    });
    const unknownTierId = String(Math.max(...TIERS.map((tier) => tier.id)) + 1);
    expect(await refusal(await shop.post({ tierId: unknownTierId }))).toEqual({
      status: 422,
      body: PAYMENT_REQUEST_REFUSALS.unknownTier,
    });
    expect(await refusal(await shop.post({ tierId: "2", name: "x".repeat(41) }))).toEqual({
      status: 422,
      body: { error: "invalid_name", message: REFUSAL_TEXTS.invalid_name },
    });
    const nameNotAllowed = { status: 422, body: PAYMENT_REQUEST_REFUSALS.nameNotAllowed };
    expect(await refusal(await shop.post({ tierId: "2", name: "fuck" }))).toEqual(nameNotAllowed);
    expect(await refusal(await shop.post({ tierId: "2", name: "nothing.store" }))).toEqual(nameNotAllowed);
    expect(await refusal(await shop.post({ tierId: "2", name: "BLOCKED BOB" }))).toEqual(nameNotAllowed);
    expect(await refusal(await shop.post({ tierId: "2", x: "y".repeat(3000) }))).toEqual({
      status: 413,
      body: COMMON_REFUSALS.tooLarge,
    });
    expect(await refusal(await shop.post({ tierId: "2" }, { Origin: "https://elsewhere.example" }))).toEqual({
      status: 403,
      body: COMMON_REFUSALS.originNotAllowed,
    });
    expect(await refusal(await shop.get("/payments/not-a-reference"))).toEqual({
      status: 404,
      body: PAYMENT_REQUEST_REFUSALS.notFound,
    });
    expect(await refusal(await shop.get(`/payments/${(await generateKeyPairSigner()).address}`))).toEqual({
      status: 404,
      body: PAYMENT_REQUEST_REFUSALS.notFound,
    });
    expect((await shop.get("/payments")).status).toBe(405);

    // The rate limit (three a window here) counts the requests that reach the store: the blocked
    // name's, whose block only the database knows, and two more.
    const accepted = [];
    for (let request = 0; request < 2; request++) accepted.push((await shop.post({ tierId: "1" })).status);
    expect(accepted).toEqual([201, 201]);
    expect(await refusal(await shop.post({ tierId: "1" }))).toEqual({
      status: 429,
      body: PAYMENT_REQUEST_REFUSALS.rateLimited,
    });
    if (backend === "postgres") {
      const rows = await withDirectSql(location, (query) => query("SELECT count(*)::int AS n FROM payments"));
      expect(rows[0]?.n).toBe(2);
    }
  });

  it("answers the read routes GET and HEAD only, and /payments POST only: 405 with Allow for the rest, nothing stored (docs/design.md#9)", async () => {
    const shop = await openShop(location);
    await waitAvailable(shop);
    const { reference } = (await (await shop.post({ tierId: "1", name: "Nobody" })).json()) as CreatedPayment;
    const before = await shop.store.payments.latest(10);
    const body = JSON.stringify({ tierId: "2", name: "Sneaky" });
    const send = (method: string, path: string) =>
      fetch(`${shop.url}${path}`, {
        method,
        headers: method === "GET" || method === "HEAD" ? {} : { "Content-Type": "application/json" },
        body: method === "GET" || method === "HEAD" ? undefined : body,
      });
    for (const path of ["/payments/config", "/payments/patrons", `/payments/${reference}`]) {
      for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
        const answer = await send(method, path);
        expect([answer.status, answer.headers.get("allow")], `${method} ${path}`).toEqual([405, "GET, HEAD"]);
        expect(await answer.json(), `${method} ${path}`).toEqual({ error: "method_not_allowed" });
      }
      const [get, head] = [await send("GET", path), await send("HEAD", path)];
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get("content-length"), path).toBe(get.headers.get("content-length"));
      expect(await head.text(), path).toBe("");
    }
    for (const method of ["GET", "HEAD", "PUT", "DELETE", "PATCH"]) {
      const answer = await send(method, "/payments");
      expect([answer.status, answer.headers.get("allow")], method).toEqual([405, "POST"]);
    }
    expect(await shop.store.payments.latest(10)).toEqual(before);
    expect(before).toHaveLength(1);
  });

  it("answers CORS for the allowed origins only, preflight included", async () => {
    const shop = await openShop(location, { allowedOrigins: ["https://pages.example"] });
    await waitAvailable(shop);
    const allowed = { Origin: "https://pages.example" };
    const preflight = await fetch(`${shop.url}/payments`, {
      method: "OPTIONS",
      headers: {
        ...allowed,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://pages.example");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("Content-Type");
    const created = await shop.post({ tierId: "1" }, allowed);
    expect(created.status).toBe(201);
    expect(created.headers.get("access-control-allow-origin")).toBe("https://pages.example");
    expect(created.headers.get("vary")).toBe("Origin");
    for (const path of ["/payments/config", "/payments/patrons"]) {
      const answer = await shop.get(path, { Origin: "https://elsewhere.example" });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("access-control-allow-origin")).toBeNull();
      expect((await shop.get(path, allowed)).headers.get("access-control-allow-origin")).toBe("https://pages.example");
    }
    const foreignPreflight = await fetch(`${shop.url}/payments`, {
      method: "OPTIONS",
      headers: { Origin: "https://elsewhere.example" },
    });
    expect(foreignPreflight.status).toBe(403);
  });

  it("says payments are unavailable while the chain cannot be reached, and takes them once it can", async () => {
    const shop = await openShop(location, { refuseAtStart: true });
    expect(await (await shop.get("/payments/config")).json()).toEqual({
      enabled: true,
      available: false,
      recipient: shop.recipient,
    });
    const refused = await shop.post({ tierId: "1" });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual(COMMON_REFUSALS.unavailable);
    await shop.rpc.accept();
    await waitAvailable(shop);
    expect((await shop.post({ tierId: "1" })).status).toBe(201);
  });
});

it("stops at once while a call to the RPC hangs, rather than after its deadline", async () => {
  const shop = await openShop(await locationForThisTest("pglite"), { rpcTimeoutMs: 60_000 });
  await waitAvailable(shop);
  const listings = shop.rpc.calls.get("getSignaturesForAddress") ?? 0;
  shop.rpc.failNext(1, { hang: true }, "getSignaturesForAddress");
  // The watcher calls the chain for a waiting request: the lookup of its reference hangs.
  expect((await shop.post({ tierId: "1" })).status).toBe(201);
  await waitFor("the hung listing", () => (shop.rpc.calls.get("getSignaturesForAddress") ?? 0) > listings);
  const started = performance.now();
  await shop.service.stop();
  expect(performance.now() - started).toBeLessThan(5_000);
});

describe("bounded requests", () => {
  const from = (address: string) => ({ "X-Forwarded-For": address });

  it("limits payment requests per client, an IPv6 client by its /64, and all clients together with a cap of open requests", async () => {
    // Every network may hold all five here: the per-client limit and the cap are what is tested.
    const shop = await openShop(await locationForThisTest("pglite"), {
      settings: { rateLimit: 2, maxOpenRequests: 5 },
      trustProxy: 1,
      networkSharePercent: 100,
    });
    await waitAvailable(shop);
    const post = async (address: string) => (await shop.post({ tierId: "1" }, from(address))).status;
    // Two from one /64 (any addresses in it), then it is refused as one client.
    expect(await post("2001:db8:85a3:1::1")).toBe(201);
    expect(await post("2001:db8:85a3:1:ffff::9")).toBe(201);
    const refused = await shop.post({ tierId: "1" }, from("2001:db8:85a3:1:1:2:3:4"));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual(PAYMENT_REQUEST_REFUSALS.rateLimited);
    // Another /64 is another client.
    expect(await post("2001:db8:85a3:2::1")).toBe(201);
    expect(await post("203.0.113.7")).toBe(201);
    expect(await post("192.0.2.8")).toBe(201);
    // Five wait: the sixth, from anyone, is told to come back.
    const busy = await shop.post({ tierId: "1" }, from("198.51.100.1"));
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("60");
    expect(await busy.json()).toEqual(PAYMENT_REQUEST_REFUSALS.busy);
    expect(shop.logs).toContainEqual(
      expect.objectContaining({ msg: "payment request refused: the open-request cap is reached", cap: 5 }),
    );
    const requests = await shop.service.metrics.paymentRequests.get();
    // Every outcome has its series from zero; these are the ones that happened.
    expect(requests.values).toHaveLength(12);
    const counted = requests.values.filter((value) => value.value > 0);
    expect(Object.fromEntries(counted.map((value) => [value.labels.outcome, value.value]))).toEqual({
      created: 5,
      rate_limited: 1,
      busy: 1,
    });
  });

  it("holds a /48 and a /24 to their share of the open requests, and a buyer elsewhere is served", async () => {
    // The issue as found: 100 /64s of one /48 ask 11 each, then 100 addresses of one /24 do.
    const shop = await openShop(await locationForThisTest("postgres"), {
      settings: { rateLimit: 11, maxOpenRequests: 1_000 },
      trustProxy: 1,
    });
    await waitAvailable(shop);
    const ask = async (addresses: string[]) => {
      const statuses = new Map<number, number>();
      for (const address of addresses) {
        const answers = await Promise.all(
          Array.from({ length: 11 }, () => shop.post({ tierId: "1" }, from(address)).then((answer) => answer.status)),
        );
        for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      return Object.fromEntries(statuses);
    };
    const subnets = Array.from({ length: 100 }, (_, index) => `2001:db8:4800:${(index * 256).toString(16)}::1`);
    // A tenth of the 1,000 for the /48; each /64 its 11 until then, each /56 its 75.
    expect(await ask(subnets)).toEqual({ 201: 100, 429: 1_000 });
    const hosts = Array.from({ length: 100 }, (_, index) => `203.0.113.${index + 1}`);
    expect(await ask(hosts)).toEqual({ 201: 100, 429: 1_000 });
    const refused = await shop.post({ tierId: "1" }, from("203.0.113.200"));
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(await refused.json()).toEqual(PAYMENT_REQUEST_REFUSALS.networkBusy);
    // A buyer elsewhere, over IPv4 and over IPv6.
    expect((await shop.post({ tierId: "2" }, from("198.51.100.7"))).status).toBe(201);
    expect((await shop.post({ tierId: "2" }, from("2001:db8:9999::1"))).status).toBe(201);
    // One line a minute per network, with what it held.
    const lines = shop.logs.filter(
      (line) => line.msg === "payment request refused: its network holds its share of the open requests",
    );
    expect(lines.map((line) => line.network)).toEqual(["2001:db8:4800::x", "203.0.113.x"]);
    expect(lines[0]).toMatchObject({ share: "wide", held: { wide: 100 } });
  });

  it("answers a request's status from a cache of a second, and at most 400 times a minute per client", async () => {
    const shop = await openShop(await locationForThisTest("pglite"), { trustProxy: 1 });
    await waitAvailable(shop);
    const { reference } = (await (await shop.post({ tierId: "1" })).json()) as CreatedPayment;
    const answers = await Promise.all(
      Array.from({ length: 400 }, () => shop.get(`/payments/${reference}`, from("2001:db8::1"))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(400).fill(200));
    const refused = await shop.get(`/payments/${reference}`, from("2001:db8::ffff"));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual(PAYMENT_REQUEST_REFUSALS.statusRateLimited);
    expect((await shop.get(`/payments/${reference}`, from("2001:db8:1::1"))).status).toBe(200);
  });

  it("says confirmations are slow while the provider rate limits the watcher, and keeps taking requests", async () => {
    const shop = await openShop(await locationForThisTest("pglite"));
    await waitAvailable(shop);
    const first = (await (await shop.post({ tierId: "1" })).json()) as CreatedPayment;
    expect(first.slow).toBeUndefined();
    // The watcher looks the request up, and is answered 429: the chain is "limited" for every instance.
    shop.rpc.failNext(1, { status: 429, retryAfter: "600" }, "getSignaturesForAddress");
    await waitFor("the limited state", async () => {
      const config = (await (await shop.get("/payments/config")).json()) as PaymentsConfigBody;
      return config.slow === true;
    });
    expect(await (await shop.get("/payments/config")).json()).toEqual({
      enabled: true,
      available: true,
      slow: true,
      recipient: shop.recipient,
    });
    const created = await shop.post({ tierId: "2" });
    expect(created.status).toBe(201);
    expect(((await created.json()) as CreatedPayment).slow).toBe(true);
    expect(shop.logs).toContainEqual(
      expect.objectContaining({
        msg: "the Solana RPC rate limits the watcher: confirmations are slower, purchases go on",
      }),
    );
  });
});

describe("Verified Patrons", () => {
  it("ranks names by confirmed $ZN, one entry per name whatever its case, and leaves out hidden payments, blocked names and the anonymous", async () => {
    const location = await locationForThisTest("postgres");
    const shop = await openShop(location);
    await waitAvailable(shop);
    const payer = await shop.payer();
    const buy = async (tierId: number, name?: string) => {
      const created = (await (await shop.post({ tierId: String(tierId), name })).json()) as CreatedPayment;
      const tier = TIERS.find((candidate) => candidate.id === tierId);
      const signature = await shop.chain.pay({
        payer,
        recipient: shop.recipient,
        mint: shop.mint,
        amount: BigInt(tier?.price ?? 0) * 10n ** BigInt(DECIMALS),
        references: [created.reference as Address],
      });
      await waitFor("the confirmation", async () => (await statusOf(shop, created.reference)).status === "confirmed");
      return { reference: created.reference, signature };
    };
    await buy(1, "alice");
    const alice = await buy(2, "Alice");
    const bob = await buy(3, "Bob");
    await buy(4);
    const hidden = await buy(5, "Hidden Harry");
    await buy(1, "Blocked Bea");
    await withDirectSql(location, (query) =>
      query("UPDATE payments SET hidden_at = now() WHERE reference = $1", [hidden.reference]),
    );
    await shop.store.moderate({ action: "block", bidderName: "blocked bea", reason: null, sessionId: "test" });
    const body = (await (await shop.get("/payments/patrons")).json()) as PatronsBody;
    expect(body.patrons.map(({ name, total, latestSignature }) => ({ name, total, latestSignature }))).toEqual([
      { name: "Bob", total: "500", latestSignature: bob.signature },
      { name: "Alice", total: "125", latestSignature: alice.signature },
    ]);
  });
});
