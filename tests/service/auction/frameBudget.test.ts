/**
 * A socket's frame budget through the real service (docs/design.md#11, issue 20 item 5): a socket
 * flooding frames the service refuses is closed with 1008 once over its budget, having been
 * answered no more than the budget, while /healthz and the other sockets carry on; the product's
 * own page, bidding at the rate limit with its heartbeat, is never closed. The budgets run on a
 * clock the test holds (the service's other clocks are real), so the counts are exact.
 */
import { describe, expect, it } from "vitest";
import type { ServiceConfig } from "../../../service/config.ts";
import { CLOSE_CODES } from "../../../src/lib/auction/protocol.ts";
import {
  type ConnectionStatus,
  HEARTBEAT_INTERVAL_MS,
  type SocketLike,
} from "../../../src/lib/auction/realtimeClient.ts";
import { createAuctionConnection } from "../../../src/stores/auctionConnection.ts";
import { ManualTimers } from "../../harness/manualTimers.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { connectRaw, type Outcome } from "../harness/rawClient.ts";
import { cleanUpAfter, createTestLocation, openTestStore, waitFor } from "../harness/stores.ts";

const BID_RATE_LIMIT = 5;
const BID_RATE_WINDOW_MS = 10_000;
/** Twice the bid rate limit per window (socketServer.ts). */
const BUDGET = 2 * BID_RATE_LIMIT;
const LIMITS: Partial<ServiceConfig> = {
  bidRateLimit: BID_RATE_LIMIT,
  bidRateWindowMs: BID_RATE_WINDOW_MS,
  maxSocketsPerAddress: 10,
};

/** The frame budgets are in front of the store: one backend is enough. */
async function openAuction(now: () => number) {
  const location = await createTestLocation("pglite");
  cleanUpAfter(() => location.remove());
  const store = await openTestStore(location);
  cleanUpAfter(() => store.close());
  const service = await startAuctionService(store, LIMITS, undefined, { now });
  cleanUpAfter(() => service.stop());
  return service;
}

async function openRaw(url: string) {
  const client = await connectRaw(url);
  cleanUpAfter(() => client.close());
  await client.opening();
  return client;
}

const refusedBid = (index: number) =>
  JSON.stringify({ type: "bid", requestId: `flood-${index}`, bidderName: "", amount: 1 });

describe("a socket's frame budget through the service", () => {
  it("closes a socket flooding refused bids with 1008 once over its budget, having answered only the budget", async () => {
    const service = await openAuction(() => 0);
    const bystander = await openRaw(service.socketUrl);
    const flooder = await openRaw(service.socketUrl);

    // Issue 20: one socket sent 100,000 refused bids, and every one was parsed and answered.
    const FLOOD = 20_000;
    for (let index = 0; index < FLOOD; index++) flooder.socket.send(refusedBid(index));
    const health = fetch(`${service.httpUrl}/healthz`);
    const outcomes: Outcome[] = [];
    for (let i = 0; i <= BUDGET; i++) {
      const outcome = await flooder.next();
      outcomes.push(outcome);
      if (outcome.type === "closed") break;
    }
    expect(outcomes.slice(0, BUDGET).map((outcome) => outcome.type === "error" && outcome.code)).toEqual(
      Array.from({ length: BUDGET }, () => "invalid_name"),
    );
    expect(outcomes[BUDGET]).toEqual({
      type: "closed",
      code: CLOSE_CODES.policyViolation,
      reason: "Too many messages",
    });
    expect((await health).status).toBe(200);

    // The rest of the flood was never read: the service refused exactly the budget's bids.
    const rejected = await service.metrics.bidsRejected.get();
    expect(rejected.values.find((value) => value.labels.code === "invalid_name")?.value).toBe(BUDGET);
    expect((await service.metrics.socketsOverFrameBudget.get()).values[0]?.value).toBe(1);
    await waitFor("the flooder's socket to be gone", () => service.socketServer.openSockets === 1);

    // Everyone else is served: a new socket from the same address bids, the bystander hears it.
    const next = await openRaw(service.socketUrl);
    const answer = await next.exchange(
      JSON.stringify({ type: "bid", requestId: "after", bidderName: "Still Here", amount: 1 }),
    );
    expect(answer).toMatchObject({ type: "accepted" });
    await waitFor("the bystander to hear the bid", () => bystander.broadcasts.length === 1);
  });

  it("counts pings too: a ping flood is closed with 1008 after the budget's pongs", async () => {
    const service = await openAuction(() => 0);
    const flooder = await openRaw(service.socketUrl);
    for (let i = 0; i < 2_000; i++) flooder.socket.send('{"type":"ping"}');
    for (let i = 0; i < BUDGET; i++) expect(await flooder.next()).toEqual({ type: "pong" });
    expect(await flooder.next()).toEqual({ type: "closed", code: 1008, reason: "Too many messages" });
  });

  it("never closes the page bidding at the rate limit with its heartbeat, for half an hour of its clock", async () => {
    const timers = new ManualTimers();
    const service = await openAuction(() => timers.now);
    const statuses: ConnectionStatus[] = [];
    let pongs = 0;
    const page = createAuctionConnection({
      url: service.socketUrl,
      createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
      timers,
      log: { error: () => {} },
      notify: () => {},
      observe: {
        message: (message) => {
          if (message.type === "pong") pongs++;
        },
        status: (status) => statuses.push(status),
      },
    });
    cleanUpAfter(async () => page.stop());
    page.connect();
    await waitFor("the page live", () => page.$auction.get().status === "live");

    const windows = (30 * 60_000) / BID_RATE_WINDOW_MS;
    let frames = 0;
    for (let window = 0; window < windows; window++) {
      // The rate limit's worst case for the budget: the window's bids at its first moment.
      for (let bid = 0; bid < BID_RATE_LIMIT; bid++) {
        const outcome = await page.placeBid("Patient", (window * BID_RATE_LIMIT + bid + 1) * 100);
        expect(outcome.ok || outcome.code === "rate_limited", JSON.stringify(outcome)).toBe(true);
        frames++;
      }
      timers.advance(BID_RATE_WINDOW_MS);
      const pings = Math.floor(timers.now / HEARTBEAT_INTERVAL_MS);
      await waitFor("the pong to every ping so far", () => pongs === pings);
    }
    frames += pongs;
    // Far more than one budget: without its refill, the page would have been cut off long ago.
    expect(frames).toBe(windows * BID_RATE_LIMIT + Math.floor(timers.now / HEARTBEAT_INTERVAL_MS));
    expect(frames).toBeGreaterThan(50 * BUDGET);
    expect(statuses.filter((status) => status !== "live")).toEqual(["connecting"]);
    expect((await service.metrics.socketsOverFrameBudget.get()).values[0]?.value).toBe(0);
  });
});
