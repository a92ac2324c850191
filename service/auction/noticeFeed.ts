/**
 * The id-ordered, gapless feed of accepted bids (docs/design.md#7): every bid committed after the
 * feed's opening read reaches `onBid` exactly once, in id order, with no gap, however often the
 * store loses LISTEN and gets it back. Every instance runs one, so every instance hears every bid.
 *
 * - While the store is up, each notification is handed on as it arrives. One at or below the last
 *   id handed on is a duplicate (ids rise in commit order) and is dropped.
 * - From the moment the store reports an outage, notifications are queued. Once it is ready again
 *   the feed reads every bid above the last one it handed on, in pages of RESUME_LIMIT, hands those
 *   on, then flushes the queue in id order, dropping what the read already brought.
 * - A failed read is retried after CATCH_UP_RETRY_MS with the queue still held. An outage reported
 *   during the read keeps the queue held too: the next ready event reads again, then flushes.
 */
import { RESUME_LIMIT } from "../../src/lib/auction/protocol.ts";
import { type Logger, loggedError } from "../logger.ts";
import { endRepeated, logRepeated } from "../repeatedWarnings.ts";
import type { AuctionView, BidNotice, BidStore } from "../storage/types.ts";

const CATCH_UP_RETRY_MS = 1_000;
const CATCH_UP_FAILED = "catching up after the database outage failed; retrying";

export interface NoticeFeedOptions {
  store: BidStore;
  logger: Logger;
  /** The opening read (where the auction stands when the feed starts), before any bid is handed on. */
  onStart(view: AuctionView): void;
  /**
   * Each page of a catch-up read, before its bids are handed on: the actions taken and the rounds
   * ended while the notifications were lost are in its standing.
   */
  onCatchUpRead(read: AuctionView): void;
  /**
   * Each bid once, in id order. `arrivedAt` is performance.now() when its notification arrived, or
   * when the catch-up read that brought it returned.
   */
  onBid(notice: BidNotice, arrivedAt: number): void;
}

export interface NoticeFeed {
  /**
   * Listens, then reads the newest id: bids up to it are never handed on, every bid above it is.
   * Notifications that arrive during that read are queued and flushed after it. Rejects when the
   * read fails.
   */
  start(): Promise<void>;
  /** Stops listening; nothing more is handed on, not even what a read in flight brings back. */
  stop(): void;
}

interface QueuedNotice {
  notice: BidNotice;
  arrivedAt: number;
}

export function createNoticeFeed(options: NoticeFeedOptions): NoticeFeed {
  const { store, logger, onStart, onCatchUpRead, onBid } = options;
  /** The last id handed on, or stepped over by a read (hidden bids, bids of earlier rounds). */
  let lastId = 0;
  /** While set, notifications wait here: the store is down or a catch-up read must go out first. */
  let queued: QueuedNotice[] | null = null;
  /** The store reported an outage and not yet its end: the held notifications must stay held. */
  let storeDown = false;
  let catchingUp = false;
  let catchUpAgain = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let started = false;
  let stopped = false;
  const unsubscribes: (() => void)[] = [];

  function handOn(notice: BidNotice, arrivedAt: number): void {
    // Ids rise in commit order, so anything at or below the last id handed on was already.
    if (notice.bid.id <= lastId) return;
    lastId = notice.bid.id;
    onBid(notice, arrivedAt);
  }

  function onNotice(notice: BidNotice): void {
    const arrivedAt = performance.now();
    if (queued) queued.push({ notice, arrivedAt });
    else handOn(notice, arrivedAt);
  }

  function flushQueued(): void {
    const waiting = (queued ?? []).sort((a, b) => a.notice.bid.id - b.notice.bid.id);
    queued = null;
    for (const { notice, arrivedAt } of waiting) handOn(notice, arrivedAt);
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
   * Hands on every bid above lastId from the database, then the notifications held since the
   * store went down (in `queued`, since handing one on first would skip the older ones by id).
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
          onCatchUpRead(missed);
          const arrivedAt = performance.now();
          const { number: round, endsAt } = missed.round;
          for (const bid of missed.bids) {
            handOn({ bid, bidders: missed.bidders, moderation: missed.moderation, round, endsAt }, arrivedAt);
          }
          // A full page: the next one reads on from its last bid, handed on above. The read's
          // lastId is the newest bid of all, so stepping to it now would skip the pages unread.
          if (missed.bids.length < RESUME_LIMIT) {
            // Hidden bids and bids of earlier rounds are not read: step over them too.
            lastId = Math.max(lastId, missed.lastId);
            break;
          }
        }
      } while (catchUpAgain && !stopped);
      logger.info({ lastBroadcastId: lastId }, "caught up with the bids placed while the database was away");
      endRepeated(logger, CATCH_UP_FAILED, "catching up succeeded");
    } catch (error) {
      failed = true;
      logRepeated(logger, "warn", { err: loggedError(error) }, CATCH_UP_FAILED);
    } finally {
      catchingUp = false;
    }
    if (stopped) return;
    if (failed) {
      // Keep holding notifications: handing them on now would skip the bids still unread.
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
          // over a notification read together with the LISTEN reply, before ready(true). Handed on at
          // once, it would move lastId past the bids other instances placed during the outage, and
          // the catch-up (which reads above lastId) would skip them.
          if (!ready) queued ??= [];
          else requestCatchUp();
        }),
      );
      try {
        const view = await store.view(1);
        lastId = Math.max(lastId, view.lastId);
        onStart(view);
        started = true;
      } finally {
        // While the store is down, its ready event will catch up and flush instead.
        if (!storeDown) flushQueued();
      }
    },
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      queued = null;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    },
  };
}
