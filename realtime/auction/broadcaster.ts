/**
 * Fans every accepted bid out to the sockets of this instance, each exactly once and in id order.
 *
 * - One frame per bid, built once (JSON and WebSocket header) and written as is to every socket.
 * - A socket joins "opening": broadcasts are held for it until its snapshot or resume is sent,
 *   then only those with ids above what that message contained are flushed (no gap, no duplicate).
 * - Each subscriber remembers the last id it was sent, so a bid can never reach it twice.
 * - From the moment the store reports a database outage, notifications are held; once it is ready
 *   again the broadcaster fetches every bid above the last one it broadcast, then flushes the held
 *   notifications (in id order, skipping those already fetched), so sockets that stayed open miss nothing.
 * - A socket whose unsent data passes maxBufferedBytes is dropped rather than buffered without end;
 *   the client reconnects and resumes.
 */
import type { WebSocket } from "ws";
import { RESUME_LIMIT } from "../../src/lib/auction/protocol.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { BidNotice, BidStore } from "../storage/types.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import { encodeMessage, prebuiltTextFrame, tcpSocketOf, toWireBid } from "./wire.ts";

/** Held broadcasts per opening socket; a snapshot that slow means the socket starts over. */
const MAX_HELD_PER_SOCKET = RESUME_LIMIT;
const CATCH_UP_RETRY_MS = 1_000;

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
  /** Frames held while the socket's first message is being prepared; null once live. */
  held: Frame[] | null;
  lastSentId: number;
}

export interface BroadcasterOptions {
  store: BidStore;
  logger: Logger;
  metrics: Metrics;
  maxBufferedBytes: number;
}

export interface Broadcaster {
  /** Reads where the auction stands (the id to catch up from after an outage) and starts listening. */
  start(): Promise<void>;
  /** Registers a socket before its snapshot is read; broadcasts are held for it until goLive. */
  add(socket: WebSocket): void;
  /** Sends the socket's first message, then the held broadcasts above coveredId. */
  goLive(socket: WebSocket, firstMessage: Buffer, coveredId: number): void;
  remove(socket: WebSocket): void;
  /** The amount of the newest bid this instance knows of, for the highestCents of refusals. */
  highestCents(): number | null;
  stop(): void;
}

export function createBroadcaster({ store, logger, metrics, maxBufferedBytes }: BroadcasterOptions): Broadcaster {
  const subscribers = new Map<WebSocket, Subscriber>();
  let lastId = 0;
  let highest: number | null = null;
  /** While set, notifications wait here: the store is down or a catch-up read must go out first. */
  let queued: { notice: BidNotice; arrivedAt: number }[] | null = null;
  /** The store reported an outage and not yet its end: the held notifications must stay held. */
  let storeDown = false;
  let catchingUp = false;
  let catchUpAgain = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let started = false;
  let stopped = false;
  const unsubscribes: (() => void)[] = [];

  function send(subscriber: Subscriber, frame: Frame): void {
    if (frame.id <= subscriber.lastSentId) return;
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, maxBufferedBytes, logger, metrics)) {
      subscribers.delete(socket);
      return;
    }
    subscriber.lastSentId = frame.id;
    subscriber.tcp.write(frame.wire);
  }

  function deliver(notice: BidNotice, arrivedAt: number): void {
    const { bid, bidders } = notice;
    // Ids rise in commit order, so anything at or below the last broadcast id was already sent.
    if (bid.id <= lastId) return;
    lastId = bid.id;
    highest = bid.amountCents;
    const data = encodeMessage({ type: "bid", bid: toWireBid(bid), bidders });
    const frame: Frame = { id: bid.id, data, wire: prebuiltTextFrame(data) };
    for (const subscriber of subscribers.values()) {
      if (subscriber.held === null) {
        send(subscriber, frame);
      } else if (subscriber.held.length < MAX_HELD_PER_SOCKET) {
        subscriber.held.push(frame);
      } else {
        logger.warn("dropping a socket whose snapshot took too long");
        subscribers.delete(subscriber.socket);
        subscriber.socket.terminate();
      }
    }
    metrics.broadcastLatency.observe((performance.now() - arrivedAt) / 1000);
  }

  function onNotice(notice: BidNotice): void {
    const arrivedAt = performance.now();
    if (queued) queued.push({ notice, arrivedAt });
    else deliver(notice, arrivedAt);
  }

  function flushQueued(): void {
    const waiting = (queued ?? []).sort((a, b) => a.notice.bid.id - b.notice.bid.id);
    queued = null;
    for (const { notice, arrivedAt } of waiting) deliver(notice, arrivedAt);
  }

  function requestCatchUp(): void {
    // Before start() has read the newest id, lastId would be 0 and a catch-up would replay history.
    if (stopped || !started) return;
    if (catchingUp) {
      catchUpAgain = true;
      return;
    }
    void catchUp();
  }

  /**
   * Broadcasts every bid above lastId from the database, then the notifications held since the
   * store went down (in `queued`, since delivering one first would skip the older ones by id).
   */
  async function catchUp(): Promise<void> {
    catchingUp = true;
    clearTimeout(retryTimer);
    queued ??= [];
    let failed = false;
    try {
      do {
        catchUpAgain = false;
        for (;;) {
          const { bids, bidders } = await store.bidsAfter(lastId, RESUME_LIMIT);
          if (stopped) return;
          const arrivedAt = performance.now();
          for (const bid of bids) deliver({ bid, bidders }, arrivedAt);
          if (bids.length < RESUME_LIMIT) break;
        }
      } while (catchUpAgain && !stopped);
      logger.info({ lastBroadcastId: lastId }, "caught up with the bids placed while the database was away");
    } catch (error) {
      failed = true;
      logger.warn({ err: error }, "catching up after the database outage failed; retrying");
    } finally {
      catchingUp = false;
    }
    if (stopped) return;
    if (failed) {
      // Keep holding notifications: broadcasting them now would skip the bids still unread.
      retryTimer = setTimeout(requestCatchUp, CATCH_UP_RETRY_MS);
      retryTimer.unref();
      return;
    }
    // Lost again meanwhile (the pool can answer while LISTEN is down): keep holding; the next
    // ready event catches up again and flushes then.
    if (storeDown) return;
    flushQueued();
  }

  return {
    async start() {
      queued = [];
      unsubscribes.push(store.onBid(onNotice));
      storeDown = !store.isReady();
      unsubscribes.push(
        store.onReadyChange((ready) => {
          storeDown = !ready;
          // Hold from the moment the store goes down, not from when it is back: postgres.js can hand
          // over a notification read together with the LISTEN reply, before ready(true). Broadcast at
          // once, it would move lastId past the bids other instances placed during the outage, and
          // the catch-up (which reads above lastId) would skip them.
          if (!ready) queued ??= [];
          else requestCatchUp();
        }),
      );
      try {
        const view = await store.view(1);
        if (view.highest) {
          lastId = Math.max(lastId, view.highest.id);
          highest ??= view.highest.amountCents;
        }
        started = true;
      } finally {
        // While the store is down, its ready event will catch up and flush instead.
        if (!storeDown) flushQueued();
      }
    },
    add(socket) {
      subscribers.set(socket, { socket, tcp: tcpSocketOf(socket), held: [], lastSentId: 0 });
    },
    goLive(socket, firstMessage, coveredId) {
      const subscriber = subscribers.get(socket);
      if (!subscriber || subscriber.held === null) return;
      const held = subscriber.held;
      subscriber.held = null;
      subscriber.lastSentId = coveredId;
      socket.send(firstMessage, { binary: false });
      for (const frame of held) send(subscriber, frame);
    },
    remove(socket) {
      subscribers.delete(socket);
    },
    highestCents: () => highest,
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      queued = null;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      subscribers.clear();
    },
  };
}
