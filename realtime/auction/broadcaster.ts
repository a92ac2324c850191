/**
 * Fans every accepted bid out to the sockets of this instance, each exactly once and in id order.
 * The bids come from the notice feed (noticeFeed.ts: id-ordered and gapless, across database
 * outages); this module keeps the sockets, what each has been sent, and their resyncs.
 *
 * - One frame per bid, built once (JSON and WebSocket header) and written as is to every socket;
 *   the frames one turn of the event loop brings (a batch's bids) leave each socket as one write.
 * - A socket joins "opening": broadcasts are held for it until its snapshot or resume is sent,
 *   then only those with ids above what that message contained are flushed (no gap, no duplicate).
 * - Each subscriber remembers the last id it was sent, so a bid can never reach it twice.
 * - A moderation action or a round's end (from any instance) puts every live socket back on hold,
 *   reads the auction as it now stands and sends it as one "moderated" or "roundEnded" message,
 *   then the held bids above it: the same no-gap, no-duplicate rule as the opening. Actions and
 *   ends missed during an outage are noticed by the feed's catch-up read's standing and handled the
 *   same way. The bid that opens the round after an end heard is sent as a plain broadcast: its
 *   round number tells the page that a new list begins.
 * - A socket whose unsent data passes maxBufferedBytes is dropped rather than buffered without end;
 *   the client reconnects and resumes.
 */
import type { WebSocket } from "ws";
import { RESUME_LIMIT, SNAPSHOT_SIZE } from "../../src/lib/auction/protocol.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { AuctionView, BidNotice, BidStore } from "../storage/types.ts";
import type { Coalesce } from "./coalescedReads.ts";
import { createCoalescedWrites } from "./coalescedWrites.ts";
import type { KnownStanding } from "./knownStanding.ts";
import { createNoticeFeed } from "./noticeFeed.ts";
import { snapshot, standingKey } from "./opening.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import { INITIAL_STANDING, isBehind, newest, type Standing } from "./standing.ts";
import { encodeMessage, prebuiltTextFrame, tcpSocketOf, toWireBid } from "./wire.ts";

/** Held broadcasts per opening socket; a snapshot that slow means the socket starts over. */
const MAX_HELD_PER_SOCKET = RESUME_LIMIT;
const RESYNC_RETRY_MS = 1_000;

interface Frame {
  id: number;
  /** The JSON message. */
  data: Buffer;
  /** The same as a complete WebSocket frame. */
  wire: Buffer;
}

interface Subscriber {
  socket: WebSocket;
  /** Where its broadcast frames are written (wire.ts). */
  tcp: ReturnType<typeof tcpSocketOf>;
  /** Waiting for its opening, live, or waiting for the list after a moderation action. */
  state: "opening" | "live" | "resyncing";
  /** Frames held while not live. */
  held: Frame[];
  lastSentId: number;
}

export interface BroadcasterOptions {
  store: BidStore;
  logger: Logger;
  metrics: Metrics;
  maxBufferedBytes: number;
  /** Fed with every bid and moderation version heard, and the lists read after actions. */
  known: KnownStanding;
  /** Shared with the openings: a resync read may serve sockets opening at the same moment. */
  coalesce: Coalesce;
}

export interface Broadcaster {
  /** Reads where the auction stands (the id to catch up from after an outage) and starts listening. */
  start(): Promise<void>;
  /** Registers a socket before its snapshot is read; broadcasts are held for it until goLive. */
  add(socket: WebSocket): void;
  /**
   * Sends the socket's first message, then the held broadcasts above coveredId; a message older
   * than a moderation action or a round's end heard meanwhile is followed by the auction as it now stands.
   */
  goLive(socket: WebSocket, firstMessage: Buffer, coveredId: number, standing: Standing): void;
  remove(socket: WebSocket): void;
  stop(): void;
}

export function createBroadcaster(options: BroadcasterOptions): Broadcaster {
  const { store, logger, metrics, maxBufferedBytes, known, coalesce } = options;
  const subscribers = new Map<WebSocket, Subscriber>();
  /** The newest moderation version and round heard of (from notifications and catch-up reads). */
  let heard: Standing = INITIAL_STANDING;
  /** Live sockets put on hold for the next resync read, and whether one is running. */
  const awaitingResync = new Set<Subscriber>();
  let resyncing = false;
  /** What the next resync message says happened: a round's end outranks a moderation action. */
  let resyncType: "moderated" | "roundEnded" = "moderated";
  let stopped = false;
  const unsubscribes: (() => void)[] = [];
  const writes = createCoalescedWrites();
  const feed = createNoticeFeed({
    store,
    logger,
    onStart(view) {
      heard = newest(heard, standingKey(view));
      learn(view);
    },
    onCatchUpRead(read) {
      // Actions taken and rounds ended while the notifications were lost: the sockets are put on
      // hold for the state as it now stands before the missed bids are delivered.
      known.observeBlocked(read.blockedKeys, read.moderation);
      onStanding(standingKey(read));
    },
    onBid: broadcast,
  });

  // ---- Subscribers: per socket, live or holding, and the last id it was sent ----

  /** Sends a bid's frame to every live socket and holds it for the others. */
  function fanOut(frame: Frame): void {
    for (const subscriber of subscribers.values()) {
      if (subscriber.state === "live") send(subscriber, frame);
      else hold(subscriber, frame);
    }
  }

  function hold(subscriber: Subscriber, frame: Frame): void {
    if (subscriber.held.length < MAX_HELD_PER_SOCKET) {
      subscriber.held.push(frame);
      return;
    }
    logger.warn("dropping a socket whose snapshot took too long");
    forget(subscriber);
    subscriber.socket.terminate();
  }

  function send(subscriber: Subscriber, frame: Frame): void {
    if (frame.id <= subscriber.lastSentId) return;
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, maxBufferedBytes, logger, metrics)) {
      forget(subscriber);
      return;
    }
    subscriber.lastSentId = frame.id;
    writes.write(subscriber.tcp, frame.wire);
  }

  /** Writes a message that replaces the socket's list, then what was held above it; live again. */
  function replaceList(subscriber: Subscriber, message: Buffer, coveredId: number): void {
    const held = subscriber.held;
    subscriber.state = "live";
    subscriber.held = [];
    subscriber.lastSentId = Math.max(subscriber.lastSentId, coveredId);
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, maxBufferedBytes, logger, metrics)) {
      forget(subscriber);
      return;
    }
    socket.send(message, { binary: false });
    for (const frame of held) send(subscriber, frame);
  }

  /** Nothing more is sent to the socket, and no resync serves it. */
  function forget(subscriber: Subscriber): void {
    subscribers.delete(subscriber.socket);
    awaitingResync.delete(subscriber);
  }

  // ---- Bids from the feed ----

  function broadcast(notice: BidNotice, arrivedAt: number): void {
    const { bid, bidders, round, endsAt } = notice;
    onBidRound(round);
    known.observeHighest(bid.amountCents, { moderation: notice.moderation, round });
    const data = encodeMessage({ type: "bid", bid: toWireBid(bid), bidders, round, endsAt });
    fanOut({ id: bid.id, data, wire: prebuiltTextFrame(data) });
    metrics.broadcastLatency.observe((performance.now() - arrivedAt) / 1000);
  }

  /**
   * The round of a bid heard. The first bid after an end heard opens the next round: its broadcast
   * says so by its round number. A round jumped to without its end heard needs the whole state.
   */
  function onBidRound(round: number): void {
    if (round <= heard.round) return;
    const expectedNext = (heard.roundClosed || heard.round === 0) && round === heard.round + 1;
    if (expectedNext) heard = { ...heard, round, roundClosed: false };
    else onStanding({ ...heard, round, roundClosed: false });
  }

  // ---- Standing and resync: the whole list again after an action or a round's end ----

  /** What a read of the whole auction tells the instance's quick checks. */
  function learn(view: AuctionView): void {
    // A closed round's highest says nothing of the next round's, which has none yet.
    const { closed, number } = view.round;
    const stamp = { moderation: view.moderation, round: closed ? number + 1 : number };
    known.observeHighest(closed ? null : (view.highest?.amountCents ?? null), stamp);
    known.observeBlocked(view.blockedKeys, view.moderation);
  }

  /**
   * A standing newer than the one this instance last heard (an action, a round's end, a round it
   * never heard end): every live socket resyncs.
   */
  function onStanding(next: Standing): void {
    if (!isBehind(heard, next)) return;
    if (next.round > heard.round || (next.roundClosed && !heard.roundClosed)) resyncType = "roundEnded";
    heard = newest(heard, next);
    // Unknown since the action, or none yet in the round after an end.
    known.observeHighest(null, {
      moderation: heard.moderation,
      round: heard.roundClosed ? heard.round + 1 : heard.round,
    });
    requestResync([...subscribers.values()].filter((subscriber) => subscriber.state === "live"));
  }

  function requestResync(waiting: Subscriber[]): void {
    for (const subscriber of waiting) {
      // Held from now on: the read that serves it starts after this, so it misses nothing held.
      subscriber.state = "resyncing";
      awaitingResync.add(subscriber);
    }
    if (!resyncing && awaitingResync.size > 0 && !stopped) void resync();
  }

  /** Reads the list for the sockets waiting, sends it, and goes again while more wait or it was stale. */
  async function resync(): Promise<void> {
    resyncing = true;
    try {
      while (awaitingResync.size > 0 && !stopped) {
        const batch = [...awaitingResync];
        awaitingResync.clear();
        let view: AuctionView;
        try {
          view = await coalesce("view", () => store.view(SNAPSHOT_SIZE));
        } catch (error) {
          logger.warn({ err: error }, "reading the list after a moderation action failed; retrying");
          for (const subscriber of batch) if (subscribers.has(subscriber.socket)) awaitingResync.add(subscriber);
          await new Promise((resolve) => setTimeout(resolve, RESYNC_RETRY_MS).unref());
          continue;
        }
        learn(view);
        const { message, coveredId, standing } = snapshot(resyncType, view, store.rounds);
        resyncType = "moderated";
        const data = encodeMessage(message);
        for (const subscriber of batch) {
          if (subscribers.has(subscriber.socket)) replaceList(subscriber, data, coveredId);
        }
        // Another action or end committed after this read's snapshot: send its state too.
        if (isBehind(standing, heard)) requestResyncOf(batch);
      }
    } finally {
      resyncing = false;
    }
  }

  function requestResyncOf(batch: Subscriber[]): void {
    for (const subscriber of batch) {
      if (!subscribers.has(subscriber.socket) || subscriber.state !== "live") continue;
      subscriber.state = "resyncing";
      awaitingResync.add(subscriber);
    }
  }

  return {
    async start() {
      // Not held with the bids while they are: the list it sends covers every bid up to its read,
      // and the held ones at or below that are skipped per socket when they are flushed.
      unsubscribes.push(store.onModeration((notice) => onStanding({ ...heard, moderation: notice.moderation })));
      unsubscribes.push(
        store.onRoundClosed(({ round, moderation }) => onStanding({ moderation, round, roundClosed: true })),
      );
      await feed.start();
    },
    add(socket) {
      subscribers.set(socket, { socket, tcp: tcpSocketOf(socket), state: "opening", held: [], lastSentId: 0 });
    },
    goLive(socket, firstMessage, coveredId, openingStanding) {
      const subscriber = subscribers.get(socket);
      if (subscriber?.state !== "opening") return;
      replaceList(subscriber, firstMessage, coveredId);
      // An action or an end heard while the opening was read may not be in it.
      if (isBehind(openingStanding, heard) && subscribers.has(socket)) requestResync([subscriber]);
    },
    remove(socket) {
      const subscriber = subscribers.get(socket);
      if (subscriber) forget(subscriber);
    },
    stop() {
      stopped = true;
      feed.stop();
      writes.flush();
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      subscribers.clear();
      awaitingResync.clear();
    },
  };
}
