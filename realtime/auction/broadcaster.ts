/**
 * Fans every accepted bid out to the sockets of this instance, each exactly once and in id order.
 *
 * - One frame per bid, built once (JSON and WebSocket header) and written as is to every socket;
 *   the frames one turn of the event loop brings (a batch's bids) leave each socket as one write.
 * - A socket joins "opening": broadcasts are held for it until its snapshot or resume is sent,
 *   then only those with ids above what that message contained are flushed (no gap, no duplicate).
 * - Each subscriber remembers the last id it was sent, so a bid can never reach it twice.
 * - From the moment the store reports a database outage, notifications are held; once it is ready
 *   again the broadcaster fetches every bid above the last one it broadcast, then flushes the held
 *   notifications (in id order, skipping those already fetched), so sockets that stayed open miss nothing.
 * - A moderation action or a round's end (from any instance) puts every live socket back on hold,
 *   reads the auction as it now stands and sends it as one "moderated" or "roundEnded" message,
 *   then the held bids above it: the same no-gap, no-duplicate rule as the opening. Actions and
 *   ends missed during an outage are noticed by the catch-up read's standing and handled the same
 *   way. The bid that opens the round after an end heard is sent as a plain broadcast: its round
 *   number tells the page that a new list begins.
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
import { snapshot, standingKey } from "./opening.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import { INITIAL_STANDING, isBehind, newest, type Standing } from "./standing.ts";
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
  let lastId = 0;
  /** The newest moderation version and round heard of (from notifications and catch-up reads). */
  let heard: Standing = INITIAL_STANDING;
  /** Live sockets put on hold for the next resync read, and whether one is running. */
  const awaitingResync = new Set<Subscriber>();
  let resyncing = false;
  /** What the next resync message says happened: a round's end outranks a moderation action. */
  let resyncType: "moderated" | "roundEnded" = "moderated";
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
  const writes = createCoalescedWrites();

  function send(subscriber: Subscriber, frame: Frame): void {
    if (frame.id <= subscriber.lastSentId) return;
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, maxBufferedBytes, logger, metrics)) {
      subscribers.delete(socket);
      return;
    }
    subscriber.lastSentId = frame.id;
    writes.write(subscriber.tcp, frame.wire);
  }

  function deliver(notice: BidNotice, arrivedAt: number): void {
    const { bid, bidders, round, endsAt } = notice;
    // Ids rise in commit order, so anything at or below the last broadcast id was already sent.
    if (bid.id <= lastId) return;
    lastId = bid.id;
    onBidRound(round);
    known.observeHighest(bid.amountCents, { moderation: notice.moderation, round });
    const data = encodeMessage({ type: "bid", bid: toWireBid(bid), bidders, round, endsAt });
    const frame: Frame = { id: bid.id, data, wire: prebuiltTextFrame(data) };
    for (const subscriber of subscribers.values()) {
      if (subscriber.state === "live") {
        send(subscriber, frame);
      } else if (subscriber.held.length < MAX_HELD_PER_SOCKET) {
        subscriber.held.push(frame);
      } else {
        logger.warn("dropping a socket whose snapshot took too long");
        subscribers.delete(subscriber.socket);
        awaitingResync.delete(subscriber);
        subscriber.socket.terminate();
      }
    }
    metrics.broadcastLatency.observe((performance.now() - arrivedAt) / 1000);
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
      subscribers.delete(socket);
      return;
    }
    socket.send(message, { binary: false });
    for (const frame of held) send(subscriber, frame);
  }

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
          await new Promise((resolve) => setTimeout(resolve, CATCH_UP_RETRY_MS).unref());
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
          const missed = await store.bidsAfter(lastId, RESUME_LIMIT);
          if (stopped) return;
          // Actions taken and rounds ended while the notifications were lost: the sockets are put on
          // hold for the state as it now stands before the missed bids are delivered.
          known.observeBlocked(missed.blockedKeys, missed.moderation);
          onStanding(standingKey(missed));
          const arrivedAt = performance.now();
          const { number: round, endsAt } = missed.round;
          for (const bid of missed.bids) {
            deliver({ bid, bidders: missed.bidders, moderation: missed.moderation, round, endsAt }, arrivedAt);
          }
          // Hidden bids and bids of earlier rounds are not read: step over them too.
          lastId = Math.max(lastId, missed.lastId);
          if (missed.bids.length < RESUME_LIMIT) break;
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
      // Not held with the bids while they are: the list it sends covers every bid up to its read,
      // and the held ones at or below that are skipped per socket when they are flushed.
      unsubscribes.push(store.onModeration((notice) => onStanding({ ...heard, moderation: notice.moderation })));
      unsubscribes.push(
        store.onRoundClosed(({ round, moderation }) => onStanding({ moderation, round, roundClosed: true })),
      );
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
        lastId = Math.max(lastId, view.lastId);
        heard = newest(heard, standingKey(view));
        learn(view);
        started = true;
      } finally {
        // While the store is down, its ready event will catch up and flush instead.
        if (!storeDown) flushQueued();
      }
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
      if (subscriber) awaitingResync.delete(subscriber);
      subscribers.delete(socket);
    },
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      writes.flush();
      queued = null;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      subscribers.clear();
      awaitingResync.clear();
    },
  };
}
