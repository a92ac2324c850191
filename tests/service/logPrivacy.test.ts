import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../scripts/harness/liftedLimits.ts";
import { connectClient, UpgradeRefused } from "./harness/auctionClient.ts";
import { serviceForThisTest } from "./harness/auctionService.ts";
import { cleanUpAfter, freshStoreForThisTest, testLogger, waitFor, withDirectSql } from "./harness/stores.ts";

// Documentation addresses (RFC 5737, RFC 3849), as the one trusted proxy reports them.
const IPV4_CLIENT = "203.0.113.7";
const IPV6_CLIENT = "2001:db8:85a3::8a2e:370:7334";

it("logs client addresses only masked to their network, at every level, whatever the client does", async () => {
  const lines: Record<string, unknown>[] = [];
  const site = await mkdtemp(join(tmpdir(), "nothing-log-site-"));
  cleanUpAfter(() => rm(site, { recursive: true, force: true }));
  await writeFile(join(site, "404.html"), "<!doctype html><h1>Oops! Page not found</h1>");
  const { store } = await freshStoreForThisTest("pglite");
  // testLogger with a sink logs at debug: everything an operator could turn on.
  const service = await serviceForThisTest(
    store,
    // A beat of a second: the silent socket must still hold its address's one slot when the next
    // one asks (100 ms let a pause of the shared event loop free it first).
    { staticDir: site, trustProxy: 1, maxSocketsPerAddress: 1, heartbeatIntervalMs: 1_000 },
    testLogger((line) => lines.push(line)),
  );
  const from = (address: string) => ({ headers: { "X-Forwarded-For": `10.9.8.7, ${address}` } });

  // A foreign Origin (refused), a socket that never answers the heartbeat, one over the cap.
  await expect(
    connectClient(service.socketUrl, { origin: "https://elsewhere.example", ...from(IPV4_CLIENT) }),
  ).rejects.toBeInstanceOf(UpgradeRefused);
  const silent = await connectClient(service.socketUrl, { ...from(IPV6_CLIENT), autoPong: false });
  await expect(connectClient(service.socketUrl, from(IPV6_CLIENT))).rejects.toMatchObject({ status: 429 });
  await silent.closed;
  // A page that does not exist, asked for through the proxy.
  expect((await fetch(`${service.httpUrl}/no/such/page`, from(IPV4_CLIENT))).status).toBe(404);
  await waitFor("the log lines", () => lines.some((line) => line.msg === "page not found"));

  const clients = lines.filter((line) => "client" in line).map((line) => [line.msg, line.client]);
  expect(clients).toEqual(
    expect.arrayContaining([
      [
        "refused a socket from a foreign origin: if its pages are yours, add it to ALLOWED_ORIGINS (logged once a minute per origin)",
        "203.0.113.x",
      ],
      ["refused a socket over the per-address cap", "2001:db8:85a3::x"],
      ["closing a socket that missed its heartbeat", "2001:db8:85a3::x"],
    ]),
  );
  const everything = JSON.stringify(lines);
  for (const full of [IPV4_CLIENT, IPV6_CLIENT, "8a2e", "10.9.8.7", "127.0.0.1"]) {
    expect(everything).not.toContain(full);
  }
});

it("never logs a maximum, its bidder secret or its owner's hash, even when the database refuses it", async () => {
  const lines: Record<string, unknown>[] = [];
  const { location, store } = await freshStoreForThisTest("postgres");
  const service = await serviceForThisTest(
    store,
    LIFTED_LIMITS,
    testLogger((line) => lines.push(line)),
  );
  const secret = "Never-logged_secret-0123456789abcdefghij";
  const ownerHash = createHash("sha256").update(secret).digest("hex");
  const client = await connectClient(service.socketUrl);
  cleanUpAfter(() => client.close());
  await client.opening();
  expect(await client.maximum("Alice", 987.65, secret)).toMatchObject({ type: "maximumSet" });
  // Every new maximum now breaks a constraint: the batch fails, is placed alone, fails again, and
  // the driver's error, parameters and all, reaches the desk's error line.
  await withDirectSql(location, (query) =>
    query("ALTER TABLE auction_maximums ADD CONSTRAINT refuse_all CHECK (maximum_cents < 0) NOT VALID"),
  );
  expect(await client.maximum("Bob", 4_321.09, `${secret}-bob`)).toMatchObject({ code: "unavailable" });
  await waitFor("the error line", () => lines.some((line) => line.msg === "placing a bid failed"));
  const failure = lines.find((line) => line.msg === "placing a bid failed");
  expect(JSON.stringify(failure)).toContain("refuse_all");
  const everything = JSON.stringify(lines);
  for (const leak of [secret, ownerHash, createHash("sha256").update(`${secret}-bob`).digest("hex")]) {
    expect(everything).not.toContain(leak);
  }
  for (const amount of ["987.65", "98765", "4321.09", "432109"]) expect(everything).not.toContain(amount);
});
