/**
 * The frame budget for the bids a socket is sent (docs/design.md#10) over real sockets on
 * 127.0.0.1: a page that reconnects after a conflated frame resumes exactly, and a watcher whose
 * buffers are full gets fewer, larger frames and is not dropped while it reads on; without the
 * budget the same watcher is dropped.
 */
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import type { ServiceConfig } from "../../../service/config.ts";
import { type ServerMessage, SNAPSHOT_SIZE, type WireBid } from "../../../src/lib/auction/protocol.ts";
import { connectClient, type TestClient } from "../harness/auctionClient.ts";
import { modelRisingAmounts } from "../harness/auctionModel.ts";
import { serviceForThisTest } from "../harness/auctionService.ts";
import { startCuttableProxy } from "../harness/cuttableProxy.ts";
import { openPage } from "../harness/pageClient.ts";
import { BACKENDS, cleanUpAfter, freshStoreForThisTest, waitFor } from "../harness/stores.ts";

/** Bidders' names of 40 four-byte emoji: about 290-byte bid frames, so buffers fill with few bids. */
const LONG_NAME = "💸".repeat(40);

async function connect(url: string): Promise<TestClient> {
  const client = await connectClient(url);
  cleanUpAfter(() => client.close());
  await client.opening();
  return client;
}

/** Sends `count` bids at once, each of the next rising amount, and waits for every answer: all accepted. */
async function burst(bidder: TestClient, name: string, count: number, nextCents: () => number): Promise<WireBid[]> {
  const requests = Array.from({ length: count }, () => bidder.sendBid(name, nextCents() / 100));
  const answers = await Promise.all(requests.map((requestId) => bidder.answerTo(requestId)));
  return answers.map((answer) => {
    if (answer.type !== "accepted") throw new Error(`a burst's bid was refused: ${answer.code}`);
    return answer.bid;
  });
}

type BidFrame = Extract<ServerMessage, { type: "bid" | "bids" }>;

const bidFrames = (client: TestClient): BidFrame[] =>
  client.messages.filter((message): message is BidFrame => message.type === "bid" || message.type === "bids");
const newestOf = (frame: BidFrame) => (frame.type === "bid" ? frame.bid.id : frame.lastId);
const carriedBy = (frame: BidFrame) => (frame.type === "bid" ? [frame.bid] : frame.bids);

/** Every id a client was sent rises, none twice, and any left out is older than a full frame's oldest. */
function expectExactFrames(client: TestClient, lastId: number) {
  let previous = 0;
  for (const frame of bidFrames(client)) {
    const ids = carriedBy(frame).map((bid) => bid.id);
    expect(ids[0], "no bid twice, in id order").toBeGreaterThan(previous);
    if (ids.length < SNAPSHOT_SIZE) {
      // Not a full frame: it carries every bid since the last (these bids are consecutive ids).
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => previous + 1 + index));
    }
    previous = newestOf(frame);
  }
  expect(previous).toBe(lastId);
}

describe.each(BACKENDS)("the frame budget for bids sent, on %s", (backend) => {
  it("resumes a page after a conflated frame with nothing missed and nothing repeated", async () => {
    const { store } = await freshStoreForThisTest(backend);
    // Two frames a second: each burst's bids after its first share a frame.
    const service = await serviceForThisTest(store, { ...LIFTED_LIMITS, maxFramesPerSecond: 2 });
    const relay = await startCuttableProxy(Number(new URL(service.httpUrl).port));
    cleanUpAfter(() => relay.close());
    // The product's own page: it works out where to resume itself.
    const page = openPage("watcher", `ws://127.0.0.1:${relay.port}/realtime`, {
      heartbeatIntervalMs: 200,
      heartbeatTimeoutMs: 300,
    });
    cleanUpAfter(async () => page.stop());
    await waitFor("the page to be live", () => page.isLive());
    const bidder = await connect(service.socketUrl);

    const placed: WireBid[] = [];
    const nextCents = modelRisingAmounts(100);
    const placeBurst = async (name: string) => {
      placed.push(...(await burst(bidder, name, 30, nextCents)));
    };
    const heardAll = () => {
      const newest = placed.at(-1)?.id;
      return waitFor(`the page to hear bid ${newest}`, () => page.lastReceivedId() === newest, 15_000);
    };
    // Until the page's last frame is a conflated one (a burst's bids may straddle frames).
    for (let tries = 0; tries < 5 && page.frames.at(-1)?.type !== "bids"; tries++) {
      await placeBurst("Before");
      await heardAll();
    }
    const conflated = page.frames.at(-1);
    expect(conflated).toMatchObject({ type: "bids", lastId: placed.at(-1)?.id });

    relay.cutAll();
    await placeBurst("Away");
    await waitFor("the page to resume", () => page.reopenings === 1 && page.isLive(), 15_000);
    await placeBurst("After");
    await heardAll();

    const resumedFrom = new URL(page.socketUrls[1] as string).searchParams.get("after");
    expect(resumedFrom).toBe(String(conflated?.lastId));
    expect(page.unexpectedSnapshots).toBe(0);
    expect(page.passedOver).toEqual([]);
    expect(page.received.map((bid) => bid.id)).toEqual(placed.map((bid) => bid.id));
    // And it shows what the database holds, as a page opening now sees it.
    const fresh = await connect(service.socketUrl);
    const snapshot = await fresh.opening();
    const { bids, highest, bidders } = page.state();
    expect({ bids, highest, bidders }).toEqual({
      bids: snapshot.bids,
      highest: snapshot.highest,
      bidders: snapshot.bidders,
    });
  });
});

/**
 * A quick watcher and a slow one, whose buffers the test fills first: it stops reading and sends
 * refused messages until the service holds part of their answers in the process (the kernel's own
 * buffers, about 4 MB on loopback, take the rest). Then `phases` of bids, the slow watcher reading
 * again from the second on.
 */
async function slowWatcherRun(overrides: Partial<ServiceConfig>) {
  const { store } = await freshStoreForThisTest("postgres");
  const service = await serviceForThisTest(store, { ...LIFTED_LIMITS, maxBufferedBytes: 128 * 1024, ...overrides });
  const serverSides: Socket[] = [];
  service.server.on("connection", (socket: Socket) => serverSides.push(socket));
  const quick = await connect(service.socketUrl);
  const slow = await connect(service.socketUrl);
  // The service's end of the slow watcher's connection: the last one opened so far.
  const slowSide = serverSides.at(-1) as Socket;
  const bidder = await connect(service.socketUrl);

  slow.socket.pause();
  // A bid without an amount: refused (bad_message) with its 64-character requestId, about 230 bytes.
  const refused = JSON.stringify({ type: "bid", requestId: "r".repeat(64), bidderName: "Flood" });
  const frameBytes = Buffer.byteLength(refused) + 6;
  for (let round = 0; round < 400 && slowSide.writableLength === 0; round++) {
    const readBefore = slowSide.bytesRead;
    for (let index = 0; index < 200; index++) slow.socket.send(refused);
    await waitFor(
      "the service to answer the refused messages",
      () => slowSide.writableLength > 0 || slowSide.bytesRead >= readBefore + 200 * frameBytes,
    );
  }
  expect(slowSide.writableLength, "the service holds part of the slow watcher's answers").toBeGreaterThan(0);

  const placed: WireBid[] = [];
  const nextCents = modelRisingAmounts(100);
  const startedAt = performance.now();
  const bid = async (count: number) => {
    for (let sent = 0; sent < count; sent += 20) placed.push(...(await burst(bidder, LONG_NAME, 20, nextCents)));
  };
  const writtenBefore = slowSide.bytesWritten;
  await bid(600);
  // What the service wrote to it meanwhile, buffered or not (bytesWritten counts both).
  const writtenWhileFull = slowSide.bytesWritten - writtenBefore;
  // Seen from the service's end: a paused client does not read the close either.
  const droppedWhileFull = slowSide.destroyed;
  slow.socket.resume();
  await bid(200);
  const lastId = placed.at(-1)?.id ?? 0;
  await waitFor("the quick watcher to hear the last bid", () =>
    bidFrames(quick).some((frame) => newestOf(frame) === lastId),
  );
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  return { service, quick, slow, slowSide, placed, lastId, writtenWhileFull, droppedWhileFull, elapsedSeconds };
}

describe("a watcher that reads slowly, on postgres", () => {
  it("gets fewer, larger frames within the budget and is not dropped while it reads on", async () => {
    const run = await slowWatcherRun({ maxFramesPerSecond: 20 });
    const { quick, slow, lastId } = run;
    await waitFor(
      "the slow watcher to catch up",
      () => bidFrames(slow).some((frame) => newestOf(frame) === lastId),
      30_000,
    );

    expect(run.droppedWhileFull).toBe(false);
    expect(slow.socket.readyState).toBe(slow.socket.OPEN);
    expect(run.slowSide.destroyed).toBe(false);
    expect(await run.service.metrics.slowSocketsDropped.get()).toMatchObject({ values: [{ value: 0 }] });
    // While its buffers were full, nothing more was added to them.
    expect(run.writtenWhileFull).toBe(0);
    const [quickFrames, slowFrames] = [bidFrames(quick), bidFrames(slow)];
    expect(slowFrames.length).toBeLessThan(quickFrames.length);
    // Its first frame once it read again: every bid it had waited for, the newest of them as a full list.
    const caughtUp = slowFrames[0] as BidFrame;
    expect(newestOf(caughtUp)).toBeGreaterThanOrEqual(run.placed[599]?.id ?? Number.NaN);
    expect(carriedBy(caughtUp)).toHaveLength(SNAPSHOT_SIZE);
    const meanCovered = (frames: BidFrame[]) => lastId / frames.length;
    expect(meanCovered(slowFrames)).toBeGreaterThan(meanCovered(quickFrames));
    expect(quickFrames.length).toBeLessThanOrEqual(20 * run.elapsedSeconds + 1);
    expectExactFrames(quick, lastId);
    expectExactFrames(slow, lastId);
    console.info(
      `800 bids in ${run.elapsedSeconds.toFixed(1)} s: quick watcher ${quickFrames.length} frames, slow watcher ${slowFrames.length}`,
    );
  });

  it("is dropped without the budget, as soon as the bids pass the bound on unsent bytes", async () => {
    const run = await slowWatcherRun({ maxFramesPerSecond: 0 });
    expect(run.droppedWhileFull).toBe(true);
    expect(await run.service.metrics.slowSocketsDropped.get()).toMatchObject({ values: [{ value: 1 }] });
    // One frame per bid to the quick watcher.
    expect(bidFrames(run.quick).map(newestOf)).toEqual(run.placed.map((placed) => placed.id));
  });
});
