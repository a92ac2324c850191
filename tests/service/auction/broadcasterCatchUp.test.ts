/**
 * The broadcaster's catch-up after a database outage, on a scripted store (the real outage test in
 * auctionService.test.ts cannot force the orderings): a notification delivered before the store
 * reports ready again must not make the catch-up skip the bids placed during the outage, and a
 * failed catch-up keeps holding notifications until a retry succeeds.
 */

import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { createBroadcaster } from "../../../service/auction/broadcaster.ts";
import { createKnownStanding } from "../../../service/auction/knownStanding.ts";
import { createCoalescer } from "../../../service/coalescedReads.ts";
import { createMetrics } from "../../../service/metrics.ts";
import type { StoredBid } from "../../../service/storage/types.ts";
import { corkableStream } from "../../harness/corkableStream.ts";
import { endlessRoundView, scriptedBid, scriptedStore } from "../../harness/scriptedStore.ts";
import { textFramePayload } from "../../harness/textFrames.ts";
import { testLogger, waitFor } from "../harness/stores.ts";

/** A store whose rows, notifications, readiness and failures the test drives by hand. */
function scriptedCatchUpStore() {
  const rows: StoredBid[] = [];
  let failReads = 0;
  let failedReads = 0;
  const scripted = scriptedStore({
    view: async () => endlessRoundView([...rows].reverse(), rows, rows.at(-1)?.id ?? 0),
    bidsAfter: async (afterId, limit) => {
      if (failReads > 0) {
        failReads--;
        failedReads++;
        throw new Error("still down");
      }
      return endlessRoundView(rows.filter((row) => row.id > afterId).slice(0, limit), rows, rows.at(-1)?.id ?? 0);
    },
  });
  return {
    store: scripted.store,
    commit: (id: number) => rows.push(scriptedBid(id)),
    notify: (id: number) =>
      scripted.notify({ bid: scriptedBid(id), bidders: rows.length, moderation: 0, round: 1, endsAt: null }),
    setReady: scripted.setReady,
    failNextReads(count: number) {
      failReads = count;
    },
    /** Reads that failed as scripted so far. */
    get failedReads() {
      return failedReads;
    },
  };
}

/** A socket as the broadcaster sees it: the first message through send, broadcasts as prebuilt frames on `_socket`. */
function fakeSocket() {
  const received: number[] = [];
  const record = (json: Buffer) => {
    const message = JSON.parse(String(json)) as { type: string; bid?: { id: number }; bids?: { id: number }[] };
    if (message.type === "bid" && message.bid) received.push(message.bid.id);
    // Several bids in one frame under the frame budget (docs/design.md#10).
    if (message.type === "bids" && message.bids) received.push(...message.bids.map((bid) => bid.id));
  };
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    send: record,
    _socket: corkableStream((frames) => {
      for (const frame of frames) record(Buffer.from(textFramePayload(frame)));
    }),
  };
  return { socket: socket as unknown as WebSocket, received };
}

async function liveBroadcaster(script: ReturnType<typeof scriptedCatchUpStore>, maxFramesPerSecond: number) {
  const broadcaster = createBroadcaster({
    store: script.store,
    logger: testLogger(),
    metrics: createMetrics(),
    maxBufferedBytes: 1024 * 1024,
    maxFramesPerSecond,
    known: createKnownStanding(),
    coalesce: createCoalescer(),
  });
  await broadcaster.start();
  const { socket, received } = fakeSocket();
  broadcaster.add(socket);
  broadcaster.goLive(socket, Buffer.from('{"type":"snapshot"}'), 1, { moderation: 0, round: 1, roundClosed: false });
  return { broadcaster, received };
}

// Without the frame budget (one frame per bid) and with the default one (docs/design.md#10).
describe.each([0, 20])("the broadcaster after a database outage, MAX_FRAMES_PER_SECOND %i", (maxFramesPerSecond) => {
  it("does not skip the outage's bids when a notification arrives before the store is ready again", async () => {
    const script = scriptedCatchUpStore();
    script.commit(1);
    const { broadcaster, received } = await liveBroadcaster(script, maxFramesPerSecond);

    script.setReady(false);
    script.commit(2); // placed through other instances while this one was not listening
    script.commit(3);
    script.commit(4);
    script.notify(4); // read together with the LISTEN reply, before ready(true)
    expect(received).toEqual([]);
    script.setReady(true);
    script.notify(4); // a duplicate is sent once only
    script.commit(5);
    script.notify(5);
    // A barrier: broadcasts go out in id order, so once 6 is here a duplicate of 4 would be too.
    script.commit(6);
    script.notify(6);
    await waitFor("the catch-up and the barrier", () => received.includes(6));
    expect(received).toEqual([2, 3, 4, 5, 6]);
    broadcaster.stop();
  });

  it("keeps holding notifications through a failed catch-up and flushes them after the retry", async () => {
    const script = scriptedCatchUpStore();
    script.commit(1);
    const { broadcaster, received } = await liveBroadcaster(script, maxFramesPerSecond);

    script.setReady(false);
    script.commit(2);
    script.failNextReads(1);
    script.setReady(true);
    script.commit(3);
    script.notify(3);
    await waitFor("the catch-up read to fail", () => script.failedReads === 1);
    expect(received).toEqual([]);
    await waitFor("the retried catch-up", () => received.length >= 2, 5_000);
    expect(received).toEqual([2, 3]);
    broadcaster.stop();
  });
});
