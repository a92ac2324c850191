/**
 * Secret maximum bids over real sockets on both backends (docs/protocol.md#maximum-bids): the
 * owner's answers, the others' ordinary bids, and the secret kept: no frame to another socket (read
 * as sent, before the schemas drop unknown fields) and no log line carries the maximum's amount, the
 * secret or its hash, through a resume, a moderation and a raise.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import { BID_INCREMENT_CENTS } from "../../../src/lib/auction/bidRules.ts";
import { REFUSAL_TEXTS } from "../../../src/lib/auction/refusalTexts.ts";
import { connectClient, type TestClient } from "../harness/auctionClient.ts";
import { serviceForThisTest } from "../harness/auctionService.ts";
import { BACKENDS, cleanUpAfter, freshStoreForThisTest, testLogger } from "../harness/stores.ts";

const ALICE_SECRET = "Alice_secret-0123456789-ABCDEFGHIJKLMN";
const BOB_SECRET = "Bob_secret-0123456789-ABCDEFGHIJKLMNOPQ";
// A maximum no bid ever reaches, so its figures can only appear if the secret leaks: $987.65 and
// then $4,321.09, as dollars and as cents.
const FIRST_MAXIMUM = 987.65;
const RAISED_MAXIMUM = 4_321.09;
const SECRET_FIGURES = ["987.65", "98765", "4321.09", "432109"];

async function connect(url: string): Promise<TestClient> {
  const client = await connectClient(url);
  cleanUpAfter(() => client.close());
  await client.opening();
  return client;
}

describe.each(BACKENDS)("maximum bids over the socket on %s", (backend) => {
  it("bids for its owner by the rule and tells no one else its amount or owner", async () => {
    const lines: Record<string, unknown>[] = [];
    const { store } = await freshStoreForThisTest(backend);
    const service = await serviceForThisTest(
      store,
      LIFTED_LIMITS,
      testLogger((line) => lines.push(line)),
    );
    const alice = await connect(service.socketUrl);
    const bob = await connect(service.socketUrl);

    const set = await alice.maximum("Alice", FIRST_MAXIMUM, ALICE_SECRET);
    expect(set).toMatchObject({ type: "maximumSet", maximumCents: 98_765, leading: true, round: 1 });
    expect(set.type === "maximumSet" && set.bid).toMatchObject({ bidderName: "Alice", amountCents: 1 });

    // Bob's bid below the maximum is stored and at once answered by Alice's automatic bid.
    const below = await bob.bid("Bob", 10);
    expect(below).toMatchObject({ type: "accepted", bid: { bidderName: "Bob", amountCents: 1_000 } });
    expect(below).toMatchObject({ outbidByMaximum: true });
    const answeredAt = 1_000 + BID_INCREMENT_CENTS;
    await bob.waitForBroadcasts(3);
    expect(bob.broadcastBids().map((bid) => [bid.bidderName, bid.amountCents])).toEqual([
      ["Alice", 1],
      ["Bob", 1_000],
      ["Alice", answeredAt],
    ]);

    // A maximum of Bob's below Alice's: nothing of Bob's stored; Alice answers one increment above it.
    const outbid = await bob.maximum("Bob", 500, BOB_SECRET);
    expect(outbid).toMatchObject({
      type: "error",
      code: "outbid_by_maximum",
      message: REFUSAL_TEXTS.outbid_by_maximum,
      highestCents: 50_000 + BID_INCREMENT_CENTS,
    });

    // Raising her own never moves the price; a raise not above it is refused.
    expect(await alice.maximum("Alice", RAISED_MAXIMUM, ALICE_SECRET)).toMatchObject({
      type: "maximumSet",
      maximumCents: 432_109,
      bid: null,
    });
    expect(await alice.maximum("Alice", 1_000, ALICE_SECRET)).toMatchObject({
      type: "error",
      code: "maximum_too_low",
      message: REFUSAL_TEXTS.maximum_too_low,
    });
    expect(await alice.myMaximum(ALICE_SECRET)).toEqual({
      type: "myMaximum",
      round: 1,
      maximumCents: 432_109,
      leading: true,
    });
    expect(await bob.myMaximum(BOB_SECRET)).toEqual({
      type: "myMaximum",
      round: 1,
      maximumCents: null,
      leading: false,
    });

    // A page that reconnects, and a moderation action every page hears as a list.
    const late = await connect(service.socketUrl);
    const bobBidId = bob.broadcastBids().find((bid) => bid.bidderName === "Bob")?.id ?? 0;
    await store.moderate({ action: "hide", bidId: bobBidId, reason: null, sessionId: "operator" });
    await late.waitForMessage("the moderated list", (message) => message.type === "moderated");
    await bob.waitForMessage("the moderated list", (message) => message.type === "moderated");

    // The maximum outlives a hide of another name's bid: Bob's next bid is answered again.
    const plainAbove = await bob.bid("Bob", 600);
    expect(plainAbove).toMatchObject({ type: "accepted" });
    expect(plainAbove).toMatchObject({ outbidByMaximum: true });

    const ownerHash = createHash("sha256").update(ALICE_SECRET).digest("hex");
    for (const [who, client] of [
      ["bob", bob],
      ["late", late],
    ] as const) {
      const seen = client.frames.join("\n");
      for (const leak of [ALICE_SECRET, ownerHash, ...SECRET_FIGURES]) expect(seen, who).not.toContain(leak);
    }
    // The late page heard only broadcasts and lists: no field about maximums at all.
    expect(late.frames.join("\n")).not.toMatch(/maximum/i);
    const logged = JSON.stringify(lines);
    for (const leak of [ALICE_SECRET, BOB_SECRET, ownerHash, ...SECRET_FIGURES]) expect(logged).not.toContain(leak);
  });
});
