/**
 * The per-address limits hold an IPv6 client by its /64 (docs/design.md#11): open sockets, bids
 * and operator sign-ins, through the real service on PGlite, the addresses as a trusted proxy
 * forwards them. One subscriber is handed a whole /64: per full address it had no limit at all.
 */
import { describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import type { ServiceConfig } from "../../../service/config.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";
import { type BidAnswer, connectClient, type TestClient, UpgradeRefused } from "../harness/auctionClient.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { cleanUpAfter, createTestLocation, openTestStore } from "../harness/stores.ts";

const PASSWORD = "correct horse battery";

async function openAuction(overrides: Partial<ServiceConfig>) {
  const location = await createTestLocation("pglite");
  cleanUpAfter(() => location.remove());
  const store = await openTestStore(location);
  cleanUpAfter(() => store.close());
  const service = await startAuctionService(store, { trustProxy: 1, ...overrides });
  cleanUpAfter(() => service.stop());
  return service;
}

const from = (address: string) => ({ headers: { "X-Forwarded-For": address } });

async function connect(url: string, address: string): Promise<TestClient> {
  const client = await connectClient(url, from(address));
  cleanUpAfter(() => client.close());
  await client.opening();
  return client;
}

async function refusedStatus(url: string, address: string): Promise<number> {
  const outcome = await connectClient(url, from(address)).then(
    async (client) => {
      await client.close();
      return null;
    },
    (error: unknown) => error,
  );
  if (!(outcome instanceof UpgradeRefused)) throw new Error(`expected the upgrade to be refused, got ${outcome}`);
  return outcome.status;
}

const refusalCode = (answer: BidAnswer) => (answer.type === "error" ? answer.code : null);

describe("the per-address limits for IPv6 clients", () => {
  it("cap open sockets per /64, whatever the address in it and however it is written", async () => {
    const service = await openAuction({ ...LIFTED_LIMITS, maxSocketsPerAddress: 2 });
    await connect(service.socketUrl, "2001:db8:1:2::a");
    await connect(service.socketUrl, "2001:db8:1:2:ffff:ffff:ffff:ffff");
    expect(await refusedStatus(service.socketUrl, "2001:db8:1:2::b")).toBe(429);
    expect(await refusedStatus(service.socketUrl, "2001:0DB8:0001:0002:0000:0000:0000:000c")).toBe(429);
    // The next /64 is another client.
    await connect(service.socketUrl, "2001:db8:1:3::a");
    // IPv4-mapped IPv6 is the IPv4 address.
    await connect(service.socketUrl, "198.51.100.7");
    await connect(service.socketUrl, "::ffff:198.51.100.7");
    expect(await refusedStatus(service.socketUrl, "::ffff:c633:6407")).toBe(429);
  });

  it("limit bids per /64 across its sockets", async () => {
    const service = await openAuction({ ...LIFTED_LIMITS, bidRateLimit: 2, bidRateWindowMs: 600_000 });
    const first = await connect(service.socketUrl, "2001:db8:1:2::a");
    const second = await connect(service.socketUrl, "2001:db8:1:2::b");
    const neighbour = await connect(service.socketUrl, "2001:db8:1:3::a");
    expect(refusalCode(await first.bid("Alice", 1))).toBeNull();
    expect(refusalCode(await second.bid("Bob", 2))).toBeNull();
    expect(refusalCode(await second.bid("Bob", 3))).toBe("rate_limited");
    expect(refusalCode(await first.bid("Alice", 4))).toBe("rate_limited");
    expect(refusalCode(await neighbour.bid("Carol", 5))).toBeNull();
  });

  it("limit operator sign-ins per /64: the sixth failure from anywhere in it is 429", async () => {
    const passwordHash = parsePasswordHash(await hashPassword(PASSWORD, { logN: 10, r: 8, p: 1 }));
    const service = await openAuction({ admin: { passwordHash, sessionSecret: "s".repeat(32) } });
    const signIn = (address: string, password = "wrong guess") =>
      fetch(`${service.httpUrl}/admin/login`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Origin: service.httpUrl,
          "X-Forwarded-For": address,
        },
        body: new URLSearchParams({ password }).toString(),
      }).then((response) => response.status);
    for (let host = 1; host <= 5; host++) expect(await signIn(`2001:db8:1:2::${host}`)).toBe(401);
    expect(await signIn("2001:db8:1:2:abcd::6", PASSWORD)).toBe(429);
    expect(await signIn("2001:db8:1:3::1", PASSWORD)).toBe(303);
  });
});
