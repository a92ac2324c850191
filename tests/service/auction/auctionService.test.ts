/**
 * The live auction service over real sockets and real databases (PGlite and a throwaway
 * PostgreSQL): the opening snapshot or resume, every rule and error code, the limits, fan-out
 * across two instances, a database outage, the operations routes and a SIGTERM drain.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { killChild } from "../../../scripts/harness/childProcess.ts";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import { startPostgresCluster } from "../../../scripts/harness/postgresCluster.ts";
import type { ServiceConfig } from "../../../service/config.ts";
import { isOpenLine } from "../../../service/startLine.ts";
import { openBidStore } from "../../../service/storage/index.ts";
import {
  CLOSE_CODES,
  MAX_MESSAGE_BYTES,
  RESUME_LIMIT,
  SNAPSHOT_SIZE,
  type WireBid,
} from "../../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS, tooLowText } from "../../../src/lib/auction/refusalTexts.ts";
import {
  type BidAnswer,
  type ConnectOptions,
  connectClient,
  type TestClient,
  UpgradeRefused,
} from "../harness/auctionClient.ts";
import { modelNextWinningCents, modelTooLow, modelWinningAmounts } from "../harness/auctionModel.ts";
import { serviceForThisTest, startInstances } from "../harness/auctionService.ts";
import { serviceProcessEnv } from "../harness/serviceProcess.ts";
import {
  BACKENDS,
  type Backend,
  cleanUpAfter,
  dataDirForThisTest,
  freshStoreForThisTest,
  locationForThisTest,
  testLogger,
  waitFor,
} from "../harness/stores.ts";

/** Every bid in these tests comes from 127.0.0.1: tests that are not about the limits lift them. */

async function openAuction(backend: Backend, overrides: Partial<ServiceConfig> = LIFTED_LIMITS) {
  const { location, store } = await freshStoreForThisTest(backend);
  return { location, store, service: await serviceForThisTest(store, overrides) };
}

async function connect(url: string, options?: ConnectOptions): Promise<TestClient> {
  const client = await connectClient(url, options);
  cleanUpAfter(() => client.close());
  return client;
}

/** An auction as openAuction opens it, with one client that has had its opening snapshot. */
async function openAuctionWithClient(backend: Backend, overrides?: Partial<ServiceConfig>) {
  const auction = await openAuction(backend, overrides);
  const client = await connect(auction.service.socketUrl);
  await client.opening();
  return { ...auction, client };
}

function accepted(answer: BidAnswer): WireBid {
  if (answer.type !== "accepted") throw new Error(`bid refused: ${answer.code} ${answer.message}`);
  return answer.bid;
}

async function refusal(url: string, options?: ConnectOptions): Promise<UpgradeRefused> {
  const outcome = await connectClient(url, options).then(
    async (client) => {
      await client.close();
      return null;
    },
    (error: unknown) => error,
  );
  if (!(outcome instanceof UpgradeRefused)) throw new Error(`expected the upgrade to be refused, got ${outcome}`);
  return outcome;
}

/** The service still answers: a new socket gets its snapshot and a ping its pong. */
async function expectStillServing(url: string, options?: ConnectOptions) {
  const client = await connect(url, options);
  await client.opening();
  client.socket.send('{"type":"ping"}');
  await client.waitForMessage("pong", (message): message is { type: "pong" } => message.type === "pong");
  await client.close();
}

const ids = (bids: { id: number }[]) => bids.map((bid) => bid.id);

// These services run with rounds off (their stores' default): one endless round 1 from the first bid.
const ENDLESS = { endsAt: null, ended: false, seconds: 0, softCloseSeconds: 0 };
const standing = (round: number) => ({
  round: { number: round, ...ENDLESS },
  pastWinners: [],
  now: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
});

describe.each(BACKENDS)("auction service on %s", (backend) => {
  it("opens each socket with a snapshot: the 50 newest bids, the highest and the bidder count", async () => {
    const { store, service } = await openAuction(backend);
    const empty = await connect(service.socketUrl);
    expect(await empty.opening()).toEqual({
      type: "snapshot",
      bids: [],
      highest: null,
      bidders: 0,
      moderation: 0,
      ...standing(0),
    });

    for (let i = 1; i <= 55; i++) await store.placeBid(`Bidder ${i % 4}`, i * 100);
    const client = await connect(service.socketUrl);
    const snapshot = await client.opening();
    expect(snapshot.type).toBe("snapshot");
    expect(snapshot.bids).toHaveLength(50);
    expect(snapshot.bids.map((bid) => bid.amountCents)).toEqual(
      Array.from({ length: 50 }, (_, index) => (55 - index) * 100),
    );
    expect(snapshot.highest).toEqual(snapshot.bids[0]);
    expect(snapshot.highest).toMatchObject({ bidderName: "Bidder 3", amountCents: 5500 });
    expect(snapshot.bidders).toBe(4);
    expect(new Date(snapshot.highest?.createdAt ?? "").toISOString()).toBe(snapshot.highest?.createdAt);
  });

  it("applies every bid rule over the socket and answers each refusal with its code, a message and the highest", async () => {
    const { client } = await openAuctionWithClient(backend);

    for (const name of ["", "   ", "x".repeat(41), "\u202eevil", "zero\u200bwidth", "bell\u0007"]) {
      expect(await client.bid(name, 5)).toMatchObject({
        type: "error",
        code: "invalid_name",
        message: REFUSAL_TEXTS.invalid_name,
        highestCents: null,
      });
    }
    for (const amount of [0, -0, -1, 1.005, 1e-7, 1_000_000_000.01]) {
      expect(await client.bid("Nobody", amount)).toMatchObject({
        type: "error",
        code: "invalid_amount",
        highestCents: null,
      });
    }

    const first = accepted(await client.bid("  Nobody  ", 10));
    expect(first).toMatchObject({ bidderName: "Nobody", amountCents: 1000 });
    expect(await client.waitForBroadcasts(1)).toEqual([first]);
    // The acknowledgement and the broadcast travel separately; their order is not defined.
    expect(client.messages.find((message) => message.type === "bid")).toEqual({
      type: "bid",
      bid: first,
      bidders: 1,
      round: 1,
      endsAt: null,
    });

    for (const amount of [10, 9.99, 0.01]) {
      expect(await client.bid("Somebody", amount)).toMatchObject({
        type: "error",
        code: "too_low",
        message: tooLowText(1000),
        highestCents: 1000,
      });
    }
    expect(await client.bid("", 20)).toMatchObject({ code: "invalid_name", highestCents: 1000 });

    // The smallest that wins: $10.01 while the increment is a cent.
    const second = accepted(await client.bid("Somebody", modelNextWinningCents(1000) / 100));
    expect(second).toMatchObject({ bidderName: "Somebody", amountCents: modelNextWinningCents(1000) });
    expect(second.id).toBeGreaterThan(first.id);
    expect(accepted(await client.bid("Nobody", 1_000_000_000)).amountCents).toBe(100_000_000_000);
    const third = (await client.waitForBroadcasts(3))[2] as WireBid;
    // Each broadcast frame, one bid or several (docs/design.md#10), counts the bidders after its newest.
    const biddersAfter = new Map([
      [first.id, 1],
      [second.id, 2],
      [third.id, 2],
    ]);
    const frames = client.messages.flatMap((message) =>
      message.type === "bid"
        ? [[message.bid.id, message.bidders]]
        : message.type === "bids"
          ? [[message.lastId, message.bidders]]
          : [],
    );
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const [newestId, bidders] of frames) expect(bidders).toBe(biddersAfter.get(newestId as number));
  });

  it("answers unreadable messages with bad_message, keeping a readable requestId, and pings with pong", async () => {
    const { client } = await openAuctionWithClient(backend);
    const errors = () => client.messages.filter((message) => message.type === "error");

    client.socket.send("{not json");
    client.socket.send(JSON.stringify({ type: "bid", requestId: "no-amount", bidderName: "Nobody" }));
    client.socket.send(JSON.stringify({ type: "bid", requestId: "extra", bidderName: "Nobody", amount: 1, bonus: 1 }));
    client.socket.send(JSON.stringify({ type: "bid", requestId: "text-amount", bidderName: "Nobody", amount: "1" }));
    client.socket.send(JSON.stringify({ type: "sell", requestId: "unknown-type" }));
    client.socket.send('{"type":"ping"}');
    await waitFor("5 errors and a pong", () => errors().length === 5 && client.messages.at(-1)?.type === "pong");
    expect(errors()).toEqual([
      { type: "error", code: "bad_message", message: "The message could not be read. Message is not valid JSON." },
      expect.objectContaining({
        code: "bad_message",
        requestId: "no-amount",
        message: expect.stringContaining("amount"),
      }),
      expect.objectContaining({ code: "bad_message", requestId: "extra" }),
      expect.objectContaining({ code: "bad_message", requestId: "text-amount" }),
      expect.objectContaining({ code: "bad_message", requestId: "unknown-type" }),
    ]);
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    accepted(await client.bid("Nobody", 1));
  });

  it("resumes a dropped socket with exactly the bids it missed, oldest first, then carries on live", async () => {
    const { service } = await openAuction(backend);
    const bidder = await connect(service.socketUrl);
    await bidder.opening();
    const watcher = await connect(service.socketUrl);
    await watcher.opening();

    for (const amount of [1, 2, 3]) accepted(await bidder.bid("Early", amount));
    const seen = await watcher.waitForBroadcasts(3);
    const lastSeen = seen.at(-1)?.id ?? 0;
    watcher.socket.terminate();
    await watcher.closed;

    const missed = [];
    for (const amount of [4, 5, 6]) missed.push(accepted(await bidder.bid(`Late ${amount}`, amount)));

    const resumed = await connect(service.socketUrl, { after: lastSeen });
    expect(await resumed.opening()).toEqual({
      type: "resume",
      bids: missed,
      highest: missed.at(-1),
      bidders: 4,
      moderation: 0,
      ...standing(1),
    });
    const next = accepted(await bidder.bid("Later", 7));
    expect(await resumed.waitForBroadcasts(1)).toEqual([next]);

    // Nothing missed: an empty resume that still names the highest.
    const upToDate = await connect(service.socketUrl, { after: next.id });
    expect(await upToDate.opening()).toEqual({
      type: "resume",
      bids: [],
      highest: next,
      bidders: 5,
      moderation: 0,
      ...standing(1),
    });
    // An id this auction never reached (a client of a reset database) starts over with a snapshot.
    const stranger = await connect(service.socketUrl, { after: next.id + 100 });
    expect(await stranger.opening()).toMatchObject({ type: "snapshot", highest: next });
    // A malformed id is ignored: a snapshot.
    const confused = await connect(`${service.socketUrl}?after=abc`);
    expect((await confused.opening()).type).toBe("snapshot");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(resumed.broadcastBids()).toEqual([next]);
  });

  it("sends a snapshot instead of a resume when more bids were missed than a resume carries", async () => {
    const { store, service } = await openAuction(backend);
    const amounts = modelWinningAmounts(RESUME_LIMIT + 2);
    for (const cents of amounts) await store.placeBid("Busy", cents);
    const client = await connect(service.socketUrl, { after: 1 });
    const opening = await client.opening();
    expect(opening.type).toBe("snapshot");
    expect(opening.bids).toHaveLength(SNAPSHOT_SIZE);
    expect(opening.highest?.amountCents).toBe(amounts.at(-1));
    // Exactly RESUME_LIMIT missed still fits in a resume.
    const resumed = await connect(service.socketUrl, { after: 2 });
    const resume = await resumed.opening();
    expect(resume.type).toBe("resume");
    expect(resume.bids.map((bid) => bid.amountCents)).toEqual(amounts.slice(2));
  });

  it("answers /healthz and /readyz on the public port, /metrics on the metrics listener only", async () => {
    const { service, client } = await openAuctionWithClient(backend);
    accepted(await client.bid("Nobody", 5));
    await client.bid("Nobody", 4);
    await client.bid("", 4);
    await client.waitForBroadcasts(1);

    const health = await fetch(`${service.httpUrl}/healthz`);
    expect([health.status, health.headers.get("content-type"), await health.json()]).toEqual([
      200,
      "application/json",
      { status: "ok" },
    ]);
    const ready = await fetch(`${service.httpUrl}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);

    const metrics = await fetch(service.metricsUrl);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toContain("auction_open_sockets 1\n");
    expect(text).toContain("auction_bids_accepted_total 1\n");
    expect(text).toContain('auction_bids_rejected_total{code="too_low"} 1\n');
    expect(text).toContain('auction_bids_rejected_total{code="invalid_name"} 1\n');
    expect(text).toContain('auction_bids_rejected_total{code="rate_limited"} 0\n');
    expect(text).toContain("auction_broadcast_latency_seconds_count 1\n");
    expect(text).toMatch(/^auction_broadcast_latency_seconds_bucket\{le="0\.05"\} 1$/m);
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("nodejs_heap_size_used_bytes");

    expect((await fetch(service.metricsUrl, { method: "POST" })).status).toBe(405);
    // docs/design.md#9: the public port has no /metrics, only the not-found answer of any unknown path.
    const publicMetrics = await fetch(`${service.httpUrl}/metrics`);
    expect([publicMetrics.status, await publicMetrics.json()]).toEqual([404, { error: "not_found" }]);
    expect((await fetch(`${service.httpUrl}/elsewhere`)).status).toBe(404);
  });
});

describe("auction service limits", () => {
  it("closes a socket that sends a frame over the size limit with 1009, and keeps serving", async () => {
    const { service, client } = await openAuctionWithClient("pglite");
    client.socket.send(JSON.stringify({ type: "ping", padding: "x".repeat(MAX_MESSAGE_BYTES) }));
    expect((await client.closed).code).toBe(1009);
    await expectStillServing(service.socketUrl);
  });

  it("closes a socket that sends a binary frame with 1003, and keeps serving", async () => {
    const { service, client } = await openAuctionWithClient("pglite");
    client.socket.send(Buffer.from('{"type":"ping"}'), { binary: true });
    expect(await client.closed).toEqual({ code: CLOSE_CODES.unsupportedData, reason: "Text frames only" });
    await expectStillServing(service.socketUrl);
  });

  it("refuses a socket from a foreign Origin with 403, allows its own origin and clients without Origin", async () => {
    const { service } = await openAuction("pglite");
    const refused = await refusal(service.socketUrl, { origin: "https://elsewhere.example" });
    expect([refused.status, refused.body]).toEqual([403, "This origin may not connect to the auction."]);
    await expectStillServing(service.socketUrl, { origin: service.httpUrl });
    await expectStillServing(service.socketUrl);
    expect((await refusal(`${service.httpUrl.replace("http", "ws")}/elsewhere`)).status).toBe(404);
  });

  it("logs refused upgrades once a minute: per origin naming ALLOWED_ORIGINS, per path and origin naming PUBLIC_REALTIME_URL", async () => {
    const lines: Record<string, unknown>[] = [];
    const clock = { ms: 0 };
    const { store } = await freshStoreForThisTest("pglite");
    const service = await serviceForThisTest(
      store,
      { allowedOrigins: ["https://nothing.example"] },
      testLogger((line) => lines.push(line)),
      { now: () => clock.ms },
    );
    const refusals = () =>
      lines.filter(
        (line) =>
          String(line.msg).startsWith("refused a socket on a path") ||
          String(line.msg).startsWith("refused a socket from a foreign origin"),
      );
    const foreign = { origin: "https://elsewhere.example" };
    // A PUBLIC_REALTIME_URL with a trailing slash, as every page of a misbuilt site would ask.
    const slashed = `${service.socketUrl}/`;
    for (let i = 0; i < 3; i++) {
      expect((await refusal(service.socketUrl, foreign)).status).toBe(403);
      expect((await refusal(slashed, { origin: "https://nothing.example" })).status).toBe(404);
    }
    clock.ms += 59_999;
    expect((await refusal(service.socketUrl, foreign)).status).toBe(403);
    expect((await refusal(service.socketUrl, { origin: "https://other.example" })).status).toBe(403);
    clock.ms += 1;
    expect((await refusal(service.socketUrl, foreign)).status).toBe(403);
    const origin = {
      level: 40,
      allowed: ["https://nothing.example"],
      client: "127.0.0.x",
      msg: "refused a socket from a foreign origin: if its pages are yours, add it to ALLOWED_ORIGINS (logged once a minute per origin)",
    };
    expect(refusals()).toEqual([
      expect.objectContaining({ ...origin, origin: "https://elsewhere.example", repeated: 0 }),
      expect.objectContaining({
        level: 40,
        path: "/realtime/",
        origin: "https://nothing.example",
        repeated: 0,
        msg: "refused a socket on a path other than /realtime: the pages' PUBLIC_REALTIME_URL must end in /realtime (logged once a minute per path and origin)",
      }),
      expect.objectContaining({ ...origin, origin: "https://other.example", repeated: 0 }),
      expect.objectContaining({ ...origin, origin: "https://elsewhere.example", repeated: 4 }),
    ]);
  });

  it("allows only the configured origins when ALLOWED_ORIGINS is set", async () => {
    const { service } = await openAuction("pglite", { allowedOrigins: ["https://nothing.example"] });
    await expectStillServing(service.socketUrl, { origin: "https://nothing.example" });
    expect((await refusal(service.socketUrl, { origin: service.httpUrl })).status).toBe(403);
  });

  it("refuses sockets over the per-address cap with 429 and frees the slot when one closes", async () => {
    const { service } = await openAuction("pglite", { maxSocketsPerAddress: 3 });
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await connect(service.socketUrl));
    const refused = await refusal(service.socketUrl);
    expect([refused.status, refused.body]).toEqual([429, "Too many connections from your address."]);
    await open[0]?.close();
    await waitFor("the slot to be freed", () => service.socketServer.openSockets === 2);
    await expectStillServing(service.socketUrl);
  });

  it("counts the client address from X-Forwarded-For only through the trusted proxy hops", async () => {
    const { service } = await openAuction("pglite", { maxSocketsPerAddress: 1, trustProxy: 1 });
    await connect(service.socketUrl, { headers: { "X-Forwarded-For": "198.51.100.1" } });
    await connect(service.socketUrl, { headers: { "X-Forwarded-For": "198.51.100.2" } });
    // A spoofed entry left of the trusted hop changes nothing.
    const spoofed = await refusal(service.socketUrl, { headers: { "X-Forwarded-For": "1.2.3.4, 198.51.100.1" } });
    expect(spoofed.status).toBe(429);
  });

  it("answers a bid flood over the rate limit with rate_limited, and keeps serving", async () => {
    const { service, client } = await openAuctionWithClient("pglite", { bidRateLimit: 5, bidRateWindowMs: 60_000 });
    const requests = Array.from({ length: 8 }, (_, index) => client.sendBid("Flooder", index + 1));
    const answers = await Promise.all(requests.map((requestId) => client.answerTo(requestId)));
    expect(answers.map((answer) => answer.type === "error" && answer.code)).toEqual([
      false,
      false,
      false,
      false,
      false,
      "rate_limited",
      "rate_limited",
      "rate_limited",
    ]);
    expect(answers[7]).toMatchObject({ message: REFUSAL_TEXTS.rate_limited });
    await client.waitForBroadcasts(5);
    // Another connection from the same address shares the limit; the service itself is fine.
    const other = await connect(service.socketUrl);
    await other.opening();
    expect(await other.bid("Patient", 100)).toMatchObject({ code: "rate_limited", highestCents: 500 });
    await expectStillServing(service.socketUrl);
  });

  it("cuts a socket that keeps sending but never reads the answers, instead of buffering them without end", async () => {
    const { service, client } = await openAuctionWithClient("pglite");
    // Stop reading at the TCP level: the answers pile up in the kernel, then in the service.
    const tcp = (client.socket as unknown as { _socket: Socket })._socket;
    tcp.pause();
    let sent = 0;
    await waitFor(
      "the service to cut the socket",
      async () => {
        if ((await service.metrics.slowSocketsDropped.get()).values[0]?.value === 1) return true;
        for (let i = 0; i < 5_000; i++) client.socket.send("x");
        sent += 5_000;
        return false;
      },
      60_000,
    );
    tcp.resume();
    expect((await client.closed).code).toBe(1006);
    expect(sent).toBeGreaterThan(0);
    await waitFor("the socket to be gone", () => service.socketServer.openSockets === 0);
    await expectStillServing(service.socketUrl);
  });

  it("closes sockets that stop answering the heartbeat with 4408, and keeps the live ones", async () => {
    // Client, service and PGlite share one event loop: an interval of 100 ms was within reach of
    // an ordinary pause (the live pong then comes late and the live socket gets 4408 too).
    const intervalMs = 1_000;
    const { service } = await openAuction("pglite", { ...LIFTED_LIMITS, heartbeatIntervalMs: intervalMs });
    const dead = await connect(service.socketUrl, { autoPong: false });
    const live = await connect(service.socketUrl);
    let livePings = 0;
    live.socket.on("ping", () => {
      livePings++;
    });
    await Promise.all([dead.opening(), live.opening()]);
    // Pinged at one beat, closed at the next: about two intervals; bounded with room to spare.
    let deadClosed: { code: number; reason: string } | undefined;
    void dead.closed.then((closed) => {
      deadClosed = closed;
    });
    await waitFor("the silent socket to be closed", () => deadClosed !== undefined, 5 * intervalMs);
    expect(deadClosed).toEqual({ code: CLOSE_CODES.heartbeatTimeout, reason: "Heartbeat timeout" });
    // A beat pings only the sockets it found alive, so each ping the live socket gets is one beat
    // it survived: two more after the silent one was closed, counted rather than timed.
    const pingsThen = livePings;
    await waitFor("two more beats to ping the live socket", () => livePings >= pingsThen + 2, 5 * intervalMs);
    expect(live.socket.readyState).toBe(live.socket.OPEN);
  });
});

describe("auction service shutdown", () => {
  it("once draining, reports not ready and refuses new sockets with 503", async () => {
    const { service, client } = await openAuctionWithClient("pglite");
    await service.socketServer.drain();
    expect(await client.closed).toEqual({ code: CLOSE_CODES.goingAway, reason: "Service restarting" });
    const ready = await fetch(`${service.httpUrl}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([503, { status: "unavailable" }]);
    expect((await fetch(`${service.httpUrl}/healthz`)).status).toBe(200);
    const refused = await refusal(service.socketUrl);
    expect([refused.status, refused.body]).toEqual([503, "Shutting down; try again in a moment."]);
  });
});

describe("auction service on PostgreSQL, several instances", () => {
  it("takes 50 concurrent bids through 2 instances: accepted amounts rise strictly with the id, each broadcast once to every client", async () => {
    const instances = await startInstances(await locationForThisTest("postgres"), 2);
    const urls = instances.map((instance) => instance.service.socketUrl);
    const clients: TestClient[] = [];
    for (let i = 0; i < 8; i++) clients.push(await connect(urls[i % 2] as string));
    await Promise.all(clients.map((client) => client.opening()));

    // Amounts $1 to $50 in shuffled order, all sent at once from clients of both instances.
    const amounts = Array.from({ length: 50 }, (_, index) => index + 1).sort(() => Math.random() - 0.5);
    const sent = amounts.map((amount, index) => {
      const client = clients[index % clients.length] as TestClient;
      return { amount, client, requestId: client.sendBid(`Racer ${index % 7}`, amount) };
    });
    // Sockets that join mid-race must still see every bid after their snapshot, once.
    // Several at a time, as after a restart, so they share snapshot reads.
    const latecomers: TestClient[] = [];
    for (let i = 0; i < 3; i++) {
      latecomers.push(...(await Promise.all(urls.flatMap((url) => [connect(url), connect(url)]))));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const answers = await Promise.all(sent.map(({ client, requestId }) => client.answerTo(requestId)));

    const acceptedBids = answers.flatMap((answer) => (answer.type === "accepted" ? [answer.bid] : []));
    const refusals = answers.flatMap((answer, index) =>
      answer.type === "error" ? [{ answer, amountCents: (sent[index]?.amount ?? 0) * 100 }] : [],
    );
    expect(acceptedBids.length).toBeGreaterThan(0);
    expect(acceptedBids.length + refusals.length).toBe(50);
    for (const { answer, amountCents } of refusals) {
      expect(answer.code).toBe("too_low");
      expect(modelTooLow(amountCents, answer.highestCents ?? null)).toBe(true);
    }
    const byId = [...acceptedBids].sort((a, b) => a.id - b.id);
    for (let i = 1; i < byId.length; i++) {
      expect(byId[i]?.amountCents).toBeGreaterThan(byId[i - 1]?.amountCents ?? 0);
    }
    expect(byId.at(-1)?.amountCents).toBe(5000);

    for (const client of clients) await client.waitForBroadcasts(byId.length);
    for (const client of latecomers) {
      const opening = await client.opening();
      const top = opening.bids[0]?.id ?? 0;
      const expected = byId.filter((bid) => bid.id > top);
      await client.waitForBroadcasts(expected.length);
    }
    // Room for a duplicate to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const client of clients) expect(client.broadcastBids()).toEqual(byId);
    for (const client of latecomers) {
      const opening = await client.opening();
      const top = opening.bids[0]?.id ?? 0;
      expect(ids(opening.bids)).toEqual(ids(byId.filter((bid) => bid.id <= top)).reverse());
      expect(client.broadcastBids()).toEqual(byId.filter((bid) => bid.id > top));
    }
  });

  it("survives the database stopping: not ready, bids unavailable, then everything recovers and open sockets catch up", async () => {
    const cluster = await startPostgresCluster();
    cleanUpAfter(() => cluster.destroy());
    const lines: Record<string, unknown>[] = [];
    const store = await openBidStore({
      databaseUrl: cluster.url,
      dataDir: "",
      logger: testLogger((line) => lines.push(line)),
    });
    cleanUpAfter(() => store.close());
    const service = await serviceForThisTest(
      store,
      LIFTED_LIMITS,
      testLogger((line) => lines.push(line)),
    );
    const client = await connect(service.socketUrl);
    await client.opening();
    const acknowledged = [accepted(await client.bid("Before", 1))];
    await client.waitForBroadcasts(1);

    await cluster.stop();
    await waitFor("/readyz to report 503", async () => (await fetch(`${service.httpUrl}/readyz`)).status === 503);
    expect(await (await fetch(`${service.httpUrl}/readyz`)).json()).toEqual({ status: "unavailable" });
    expect(await client.bid("During", 2)).toMatchObject({
      type: "error",
      code: "unavailable",
      message: "The auction is unavailable right now. Try again in a moment.",
      highestCents: 100,
    });
    // A socket opened now cannot get a snapshot: it is told so and asked to come back later.
    const newcomer = await connectClient(service.socketUrl);
    expect(await newcomer.waitForMessage("unavailable", (m): m is never => m.type === "error")).toMatchObject({
      code: "unavailable",
    });
    expect((await newcomer.closed).code).toBe(CLOSE_CODES.tryAgainLater);

    await cluster.start();
    // Bids through another instance right away, likely before this one LISTENs again: the open
    // socket gets them by the catch-up or by notification, either way exactly once.
    const other = await openBidStore({ databaseUrl: cluster.url, dataDir: "", logger: testLogger() });
    cleanUpAfter(() => other.close());
    const missed = [];
    for (const cents of [300, 400, 500]) {
      const outcome = await other.placeBid("Elsewhere", cents);
      if (!outcome.accepted) throw new Error("bid refused");
      missed.push(outcome.bid);
    }
    await waitFor(
      "/readyz to report 200",
      async () => (await fetch(`${service.httpUrl}/readyz`)).status === 200,
      30_000,
    );
    acknowledged.push(accepted(await client.bid("After", 6)));

    const expected = [acknowledged[0], ...missed, acknowledged[1]];
    await client.waitForBroadcasts(expected.length, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ids(client.broadcastBids())).toEqual(ids(expected as WireBid[]));
    const view = await store.view(50);
    for (const bid of acknowledged) expect(ids(view.bids)).toContain(bid.id);
    expect(
      lines.some((line) => line.msg === "auction store not ready: the LISTEN connection to PostgreSQL is lost"),
    ).toBe(true);
  });
});

describe("auction service process", () => {
  it("drains on SIGTERM: in-flight bids answered, sockets closed with 1001, exit code 0", async () => {
    const data = await dataDirForThisTest();
    const child = spawn(process.execPath, ["service/main.ts"], {
      env: serviceProcessEnv({ dataDir: data.dir }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    cleanUpAfter(() => killChild(child));
    const port = await listeningPort(child);
    const url = `ws://127.0.0.1:${port}/realtime`;
    const clients = [await connectClient(url), await connectClient(url)];
    for (const client of clients) cleanUpAfter(() => client.close());
    await Promise.all(clients.map((client) => client.opening()));

    const requests = Array.from({ length: 20 }, (_, index) => {
      const client = clients[index % 2] as TestClient;
      return { client, requestId: client.sendBid("Last Orders", index + 1) };
    });
    // Stop while the rest are in flight: the first acknowledgement, on either socket, is the cue.
    await waitFor("a first acknowledgement", () =>
      clients.some((client) => client.messages.some((message) => message.type === "accepted")),
    );
    child.kill("SIGTERM");

    const answers = await Promise.all(requests.map(({ client, requestId }) => client.answerTo(requestId)));
    for (const answer of answers) {
      if (answer.type === "error") expect(answer.code).toMatch(/^(unavailable|too_low)$/);
    }
    const acceptedBids = answers.flatMap((answer) => (answer.type === "accepted" ? [answer.bid] : []));
    expect(acceptedBids.length).toBeGreaterThan(0);
    for (const client of clients) {
      expect(await client.closed).toEqual({ code: CLOSE_CODES.goingAway, reason: "Service restarting" });
    }
    expect(await exited).toBe(0);

    // Every acknowledged bid is in the data directory the process left behind.
    const store = await openBidStore({ dataDir: data.dir, logger: testLogger() });
    cleanUpAfter(() => store.close());
    expect(ids((await store.view(50)).bids)).toEqual(ids(acceptedBids).sort((a, b) => b - a));
  });

  it("refuses to start on a PGlite data directory another process holds, with a clear message", async () => {
    // The store this test holds open keeps the directory locked against the process.
    const { location } = await freshStoreForThisTest("pglite");
    const child = spawn(process.execPath, ["service/main.ts"], {
      env: { ...process.env, PORT: "0", STATIC_DIR: "", DATA_DIR: location.dataDir, DATABASE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    // Once its output is all read ("exit" can come before the last of it).
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(1);
    expect(output).toContain("could not open the auction store");
    expect(output).toContain(location.dataDir);
  });
});

/** Reads the service's JSON log until it says which port it listens on. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the service did not start listening in time")), 60_000);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (isOpenLine(entry) && entry.port) {
        clearTimeout(timer);
        resolve(entry.port);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code} before listening: ${stderr}`));
    });
  });
}
