/**
 * Fans every accepted bid out to the sockets of this instance, each exactly once and in id order.
 * The bids come from the notice feed (noticeFeed.ts: id-ordered and gapless, across database
 * outages); this module keeps the sockets and what each has been sent.
 *
 * - With the frame budget (maxFramesPerSecond, docs/design.md#10), conflation.ts paces the bids to
 *   each live socket: at most that many frames a second, none while its last one is still in the
 *   process, the bids that wait meanwhile as one frame. A socket that is not live holds nothing:
 *   once its opening or list is sent, it is sent what came above it.
 * - Without it (0): one frame per bid, built once (JSON and WebSocket header) and written as is to
 *   every socket; the frames one turn of the event loop brings (a batch's bids) leave each socket
 *   as one write. A socket joins "opening": broadcasts are held for it until its snapshot or resume
 *   is sent, then only those with ids above what that message contained are flushed.
 * - Either way no gap and no duplicate: each subscriber remembers the last id it was sent, so a
 *   bid can never reach it twice.
 * - A moderation action or a round's end (from any instance, or noticed by the feed's catch-up
 *   read) puts every live socket back on hold until the list as it now stands is sent: resync.ts
 *   reads and sends it through `replaceList`, the same no-gap, no-duplicate rule as the opening.
 * - A socket whose unsent data passes maxBufferedBytes is dropped rather than buffered without end;
 *   the client reconnects and resumes.
 */
import type { WebSocket } from "ws";
import { RESUME_LIMIT } from "../../src/lib/auction/protocol.ts";
import type { Coalesce } from "../coalescedReads.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { BidNotice, BidStore } from "../storage/types.ts";
import { createCoalescedWrites } from "./coalescedWrites.ts";
import { type Conflation, createConflation, type PacedSocket, type PacingClock, pausedSocket } from "./conflation.ts";
import type { KnownStanding } from "./knownStanding.ts";
import { createNoticeFeed } from "./noticeFeed.ts";
import { standingKey } from "./opening.ts";
import { createResync } from "./resync.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import type { Standing } from "./standing.ts";
import { encodeMessage, prebuiltTextFrame, tcpSocketOf, toWireBid } from "./wire.ts";

/** Held broadcasts per opening socket; a snapshot that slow means the socket starts over. */
const MAX_HELD_PER_SOCKET = RESUME_LIMIT;

interface Frame {
  id: number;
  /** The JSON message. */
  data: Buffer;
  /** The same as a complete WebSocket frame. */
  wire: Buffer;
}

interface Subscriber extends PacedSocket {
  socket: WebSocket;
  /** Where its broadcast frames are written (wire.ts). */
  tcp: ReturnType<typeof tcpSocketOf>;
  /** Waiting for its opening, live, or waiting for the list after a moderation action. */
  state: "opening" | "live" | "resyncing";
  /** Frames held while not live (without the frame budget). */
  held: Frame[];
}

export interface BroadcasterOptions {
  store: BidStore;
  logger: Logger;
  metrics: Metrics;
  maxBufferedBytes: number;
  /** Bid frames per socket per second (docs/design.md#10); 0: one frame per bid, at once. */
  maxFramesPerSecond: number;
  /** The frame budget's clock and timers (tests fake them). */
  pacingClock?: PacingClock;
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
  const writes = createCoalescedWrites();
  const conflation: Conflation<Subscriber> | null =
    options.maxFramesPerSecond > 0
      ? createConflation<Subscriber>({
          maxFramesPerSecond: options.maxFramesPerSecond,
          clock: options.pacingClock,
          write: writeFrame,
          // Nothing of what was written may still be in the process: its last frame has not left.
          isBacklogged: (subscriber) => subscriber.socket.bufferedAmount > 0,
          onPass(pass) {
            metrics.bidFrames.inc({ kind: "bid" }, pass.single);
            metrics.bidFrames.inc({ kind: "bids" }, pass.conflated);
            metrics.broadcastLatency.observe(pass.longestWaitMs / 1000);
          },
        })
      : null;
  const resync = createResync<Subscriber>({
    store,
    logger,
    known,
    coalesce,
    sockets: { holdLive, holdIfLive, replaceList },
  });
  const feed = createNoticeFeed({
    store,
    logger,
    onStart: resync.observeStart,
    onCatchUpRead(read) {
      // Actions taken and rounds ended while the notifications were lost: the sockets are put on
      // hold for the state as it now stands before the missed bids are delivered.
      known.observeBlocked(read.blockedKeys, read.moderation);
      resync.observeStanding(standingKey(read));
    },
    onBid: broadcast,
  });

  // ---- Subscribers: per socket, live or holding, and the last id it was sent ----

  /** A frame the frame budget sends (conflation.ts): written at once, the socket's buffer empty. */
  function writeFrame(subscriber: Subscriber, wire: Buffer): boolean {
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return false;
    subscriber.tcp.write(wire);
    return true;
  }

  /** Without the frame budget: sends a bid's frame to every live socket and holds it for the others. */
  function fanOut(frame: Frame): void {
    for (const subscriber of subscribers.values()) {
      if (subscriber.state === "live") send(subscriber, frame);
      else holdFrame(subscriber, frame);
    }
  }

  function holdFrame(subscriber: Subscriber, frame: Frame): void {
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

  /** Writes a message that replaces the socket's list, then what came above it; live again. */
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
    // The list counts as a frame: the bids above it follow within the budget.
    if (conflation) conflation.live(subscriber);
    else for (const frame of held) send(subscriber, frame);
  }

  /** Every live socket waits for a resync's list from now on. */
  function holdLive(): Subscriber[] {
    const live = [...subscribers.values()].filter((subscriber) => subscriber.state === "live");
    for (const subscriber of live) hold(subscriber);
    return live;
  }

  function holdIfLive(subscriber: Subscriber): boolean {
    if (!subscribers.has(subscriber.socket) || subscriber.state !== "live") return false;
    hold(subscriber);
    return true;
  }

  /** A live socket waits for a list: with the budget, what it was waiting for is in that list. */
  function hold(subscriber: Subscriber): void {
    subscriber.state = "resyncing";
    conflation?.pause(subscriber);
  }

  /** Nothing more is sent to the socket, and no resync serves it. */
  function forget(subscriber: Subscriber): void {
    subscribers.delete(subscriber.socket);
    conflation?.pause(subscriber);
    resync.forget(subscriber);
  }

  // ---- Bids from the feed ----

  function broadcast(notice: BidNotice, arrivedAt: number): void {
    const { bid, bidders, round, endsAt } = notice;
    resync.observeBidRound(round);
    known.observeHighest(bid.amountCents, { moderation: notice.moderation, round });
    if (conflation) {
      // The frames leave at the turn's end or when each socket's interval is up; their latency is observed then.
      conflation.add(notice, arrivedAt);
      return;
    }
    const data = encodeMessage({ type: "bid", bid: toWireBid(bid), bidders, round, endsAt });
    fanOut({ id: bid.id, data, wire: prebuiltTextFrame(data) });
    metrics.broadcastLatency.observe((performance.now() - arrivedAt) / 1000);
  }

  return {
    async start() {
      // Not held with the bids while they are: the list it sends covers every bid up to its read,
      // and the held ones at or below that are skipped per socket when they are flushed.
      resync.listen();
      await feed.start();
    },
    add(socket) {
      subscribers.set(socket, { socket, tcp: tcpSocketOf(socket), state: "opening", held: [], ...pausedSocket() });
    },
    goLive(socket, firstMessage, coveredId, openingStanding) {
      const subscriber = subscribers.get(socket);
      if (subscriber?.state !== "opening") return;
      replaceList(subscriber, firstMessage, coveredId);
      resync.afterOpening(subscriber, openingStanding);
    },
    remove(socket) {
      const subscriber = subscribers.get(socket);
      if (subscriber) forget(subscriber);
    },
    stop() {
      resync.stop();
      feed.stop();
      conflation?.stop();
      writes.flush();
      subscribers.clear();
    },
  };
}
