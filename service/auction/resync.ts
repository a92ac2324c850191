/**
 * The resync after a moderation action or a round's end (docs/design.md#7): every live socket is
 * put on hold, the auction is read as it now stands and sent as one "moderated" or "roundEnded"
 * message, then the bids each socket held above it (the opening's no-gap, no-duplicate rule).
 *
 * - Keeps the newest standing heard (moderation version, round, whether it ended) from the store's
 *   notifications (any instance's actions and ends), the notice feed's reads and the bids' rounds.
 *   A newer one puts the live sockets on hold for a list. The bid that opens the round after an end
 *   heard is no news: its round number tells the page that a new list begins.
 * - One read at a time, shared with the openings (coalesce). Sockets put on hold while it runs wait
 *   for the next read, which starts after they were held, so the list misses nothing they held.
 * - A failed read is retried after RESYNC_RETRY_MS, the same sockets still on hold.
 * - A list older than a standing heard while it was read is followed by another for its sockets.
 * - Every list read feeds `known`, the quick refusals' view of the auction.
 *
 * The sockets stay the broadcaster's: it holds and flushes their bids through `ResyncSockets`.
 */
import { SNAPSHOT_SIZE } from "../../src/lib/auction/protocol.ts";
import type { Coalesce } from "../coalescedReads.ts";
import { type Logger, loggedError } from "../logger.ts";
import { endRepeated, logRepeated } from "../repeatedWarnings.ts";
import type { AuctionView, BidStore } from "../storage/types.ts";
import type { KnownStanding } from "./knownStanding.ts";
import { snapshot, standingKey } from "./opening.ts";
import { INITIAL_STANDING, isBehind, newest, type Standing } from "./standing.ts";
import { encodeMessage } from "./wire.ts";

const RESYNC_RETRY_MS = 1_000;
const RESYNC_FAILED = "reading the list after a moderation action failed; retrying";

/** What the resync asks of the side that keeps the sockets; `S` is that side's handle for one. */
export interface ResyncSockets<S> {
  /** Puts every live socket on hold (its broadcasts are held from now on) and returns them. */
  holdLive(): S[];
  /** Puts one socket on hold if it is still subscribed and live; whether it did. */
  holdIfLive(socket: S): boolean;
  /** Sends the list to a socket on hold, then the broadcasts it held above coveredId: live again. */
  replaceList(socket: S, list: Buffer, coveredId: number): void;
}

export interface ResyncOptions<S> {
  store: BidStore;
  logger: Logger;
  /** Fed with the standing of every list read. */
  known: KnownStanding;
  /** Shared with the openings: a list read may serve sockets opening at the same moment. */
  coalesce: Coalesce;
  sockets: ResyncSockets<S>;
}

export interface Resync<S> {
  /** Listens for moderation actions and rounds' ends, from any instance. */
  listen(): void;
  /** Where the auction stood when the instance started: heard, and no list sent for it. */
  observeStart(view: AuctionView): void;
  /** A standing read (a catch-up after an outage): a newer one than heard resyncs every live socket. */
  observeStanding(next: Standing): void;
  /** The round of a bid about to be broadcast: a round whose end was never heard resyncs too. */
  observeBidRound(round: number): void;
  /** A socket just sent its opening, which reflects `standing`: resynced if that is behind what was heard. */
  afterOpening(socket: S, standing: Standing): void;
  /** The socket is gone: no list is sent to it. */
  forget(socket: S): void;
  /** Stops listening; no list is sent any more, not even from a read in flight. */
  stop(): void;
}

export function createResync<S>(options: ResyncOptions<S>): Resync<S> {
  const { store, logger, known, coalesce, sockets } = options;
  /** The newest moderation version and round heard of (from notifications and reads). */
  let heard: Standing = INITIAL_STANDING;
  /** What the next list says happened: a round's end outranks a moderation action. */
  let listType: "moderated" | "roundEnded" = "moderated";
  /** On hold for the next read. */
  const waiting = new Set<S>();
  /** On hold for the read in flight. */
  const reading = new Set<S>();
  let running = false;
  let stopped = false;
  const unsubscribes: (() => void)[] = [];

  /** What a read of the whole auction tells the instance's quick checks. */
  function learn(view: AuctionView): void {
    // A closed round's highest says nothing of the next round's, which has none yet.
    const { closed, number } = view.round;
    const stamp = { moderation: view.moderation, round: closed ? number + 1 : number };
    known.observeHighest(closed ? null : (view.highest?.amountCents ?? null), stamp);
    known.observeBlocked(view.blockedKeys, view.moderation);
  }

  function observeStanding(next: Standing): void {
    if (!isBehind(heard, next)) return;
    if (next.round > heard.round || (next.roundClosed && !heard.roundClosed)) listType = "roundEnded";
    heard = newest(heard, next);
    // Unknown since the action, or none yet in the round after an end.
    known.observeHighest(null, {
      moderation: heard.moderation,
      round: heard.roundClosed ? heard.round + 1 : heard.round,
    });
    request(sockets.holdLive());
  }

  /** Sockets just put on hold: they wait for the next read, started now unless one runs. */
  function request(held: Iterable<S>): void {
    for (const socket of held) waiting.add(socket);
    if (!running && waiting.size > 0 && !stopped) void run();
  }

  /** Reads the list for the sockets waiting, sends it, and goes again while more wait or it was stale. */
  async function run(): Promise<void> {
    running = true;
    try {
      while (waiting.size > 0 && !stopped) {
        for (const socket of waiting) reading.add(socket);
        waiting.clear();
        let view: AuctionView;
        try {
          view = await coalesce("view", () => store.view(SNAPSHOT_SIZE));
          endRepeated(logger, RESYNC_FAILED, "the list after a moderation action is read again");
        } catch (error) {
          logRepeated(logger, "warn", { err: loggedError(error) }, RESYNC_FAILED);
          for (const socket of reading) waiting.add(socket);
          reading.clear();
          await new Promise((resolve) => setTimeout(resolve, RESYNC_RETRY_MS).unref());
          continue;
        }
        learn(view);
        const { message, coveredId, standing } = snapshot(listType, view, store.rounds);
        listType = "moderated";
        const list = encodeMessage(message);
        // A copy: a socket dropped while its list is written is forgotten, out of `reading`.
        for (const socket of [...reading]) if (reading.has(socket)) sockets.replaceList(socket, list, coveredId);
        // Another action or end committed after this read's snapshot: send its state too.
        if (isBehind(standing, heard)) {
          for (const socket of reading) if (sockets.holdIfLive(socket)) waiting.add(socket);
        }
        reading.clear();
      }
    } finally {
      running = false;
      reading.clear();
    }
  }

  return {
    listen() {
      unsubscribes.push(store.onModeration(({ moderation }) => observeStanding({ ...heard, moderation })));
      unsubscribes.push(
        store.onRoundClosed(({ round, moderation }) => observeStanding({ moderation, round, roundClosed: true })),
      );
    },
    observeStart(view) {
      heard = newest(heard, standingKey(view));
      learn(view);
    },
    observeStanding,
    observeBidRound(round) {
      if (round <= heard.round) return;
      // The first bid after an end heard opens the next round; a round jumped to needs the whole state.
      const expectedNext = (heard.roundClosed || heard.round === 0) && round === heard.round + 1;
      if (expectedNext) heard = { ...heard, round, roundClosed: false };
      else observeStanding({ ...heard, round, roundClosed: false });
    },
    afterOpening(socket, standing) {
      // An action or an end heard while the opening was read may not be in it.
      if (isBehind(standing, heard) && sockets.holdIfLive(socket)) request([socket]);
    },
    forget(socket) {
      waiting.delete(socket);
      reading.delete(socket);
    },
    stop() {
      stopped = true;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      waiting.clear();
      reading.clear();
    },
  };
}
