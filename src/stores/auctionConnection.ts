/**
 * One page's auction connection as a factory: the stores the islands read ($auction,
 * $typedBidderName) and the actions they call (connect, placeBid), over the reconnecting client of
 * src/lib/auction/realtimeClient.ts. Everything from outside (the socket, the clock, the toaster,
 * the console) is passed in: the page builds its one connection from browser defaults
 * (src/stores/auction.ts), tests and the fault suites build as many as they need on Node.
 */
import { atom, map } from "nanostores";
import type { BidFailureCode } from "../lib/auction/bidToasts.ts";
import { createPendingAnswers } from "../lib/auction/pendingAnswers.ts";
import type {
  BidMessage,
  ClientMessage,
  ServerMessage,
  StateMessage,
  WireBid,
  WireRound,
  WireWinner,
} from "../lib/auction/protocol.ts";
import { SNAPSHOT_SIZE } from "../lib/auction/protocol.ts";
import { type ConnectionStatus, createRealtimeClient, type SocketLike } from "../lib/auction/realtimeClient.ts";
import { formatCents } from "../lib/format.ts";
import type { Timers } from "../lib/timers.ts";
import type { ToastInput } from "./toasts.ts";

type PaymentMessage = Extract<ServerMessage, { type: "payment" }>;

/** The toast every visitor sees for each confirmed purchase (docs/design.md#8). */
export function purchaseToastTitle(name: string | null, tierName: string): string {
  return `${name?.trim() || "Someone"} just bought ${tierName}!`;
}

/** No acknowledgement within this long counts as a failed bid (docs/design.md#3a). */
export const BID_ACK_TIMEOUT_MS = 10_000;

export interface AuctionState {
  status: ConnectionStatus | "idle";
  /** The current round's, newest first (highest id first), at most SNAPSHOT_SIZE. */
  bids: WireBid[];
  highest: WireBid | null;
  bidders: number;
  /** Null until the service has said (the first snapshot). */
  round: WireRound | null;
  /** The last rounds' winners, newest first. */
  pastWinners: WireWinner[];
  /**
   * The service's clock minus this page's monotonic clock, in ms, as the last message that carried
   * the service's `now` measured it: countdowns run on the service's time, and the page's wall
   * clock, however wrong or moved, plays no part (docs/design.md#9). Null until the first message.
   */
  serviceOffsetMs: number | null;
  /** "removed": the leading bid went because a moderator hid it (until the next bid or round). */
  leaderNote: LeaderNote;
}

/** The toast every page shows once when a round it was showing ends (docs/design.md#6b). */
function soldToast(winner: WireBid): ToastInput {
  return { title: "Sold!", description: `Sold to ${winner.bidderName} for ${formatCents(winner.amountCents)}` };
}

/** Where a personal toast's "Bid again" leads: the bid form's section (Auction.tsx). */
export const BID_FORM_ANCHOR = "place-bid";

/** The winner's own page, instead of "Sold!" (docs/product-behaviour.md#4-auction). */
function wonToast(winner: WireBid): ToastInput {
  return {
    title: `You won for ${formatCents(winner.amountCents)}!`,
    description: "Nothing is yours now. Pretend money: nobody pays.",
    variant: "personal",
  };
}

/** The page whose bid led until someone else's passed it, instead of "New Bid!". */
export function outbidToast(by: WireBid): ToastInput {
  return {
    title: `You've been outbid by ${by.bidderName} — ${formatCents(by.amountCents)}`,
    variant: "personal",
    action: { label: "Bid again", href: `#${BID_FORM_ANCHOR}` },
  };
}

/** Why the leader changed without a bid, for the auction's status line; null when nothing to say. */
type LeaderNote = "removed" | null;

/** What a broadcast says besides its bids: the round they are of, its end and the bidder count after the newest. */
type BroadcastStanding = Pick<BidMessage, "bidders" | "round" | "endsAt">;

/** outbidByMaximum: the bid was stored and at once passed by someone's automatic bid. */
export type BidOutcome =
  | { ok: true; bid: WireBid; outbidByMaximum?: boolean }
  | { ok: false; code: BidFailureCode; highestCents?: number | null };

export interface AuctionConnectionOptions {
  /** ws: or wss: URL of the service's socket, or how to find it when connect() is first called. */
  url: string | (() => string);
  createSocket(url: string): SocketLike;
  timers: Timers;
  log: Pick<Console, "error">;
  /** Shows a toast ("New Bid!" for other visitors' bids, "Sold!" at a round's end). */
  notify(toast: ToastInput): void;
  /** This page's monotonic clock, in ms (default performance.now): never the wall clock, which can move. */
  monotonicNow?: () => number;
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
  /** Every message as it arrives and every status change, after the stores have taken them. */
  observe?: { message?(message: ServerMessage): void; status?(status: ConnectionStatus): void };
}

export function createAuctionConnection(options: AuctionConnectionOptions) {
  const { timers } = options;
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  const $auction = map<AuctionState>({
    status: "idle",
    bids: [],
    highest: null,
    bidders: 0,
    round: null,
    pastWinners: [],
    serviceOffsetMs: null,
    leaderNote: null,
  });
  /** What this visitor has typed as their name: their own bids raise no "New Bid!" toast. */
  const $typedBidderName = atom("");
  /** The round this page won, set when its end is announced: the page celebrates it. */
  const $won = atom<WireWinner | null>(null);
  /** Bids this page placed and had accepted: a winner among them is this page's win. */
  const ownBidIds = new Set<number>();
  /** Bids this page's leading maximum answers at once (set by src/stores/maximumBid.ts): not an outbid. */
  let answeredByMaximum: (bid: WireBid) => boolean = () => false;
  /** The newest round whose end this page has announced: each end is announced once. */
  let announcedRound = 0;
  const pendingBids = createPendingAnswers<BidOutcome>(timers, BID_ACK_TIMEOUT_MS, { ok: false, code: "timeout" });
  let lastRequestNumber = 0;
  /**
   * Payment references this page waits on, each with who hears its status (docs/design.md#8):
   * watched again on every (re)connection.
   */
  const watchedPayments = new Map<string, (status: PaymentMessage) => void>();
  const send = (message: ClientMessage) => client?.send(message) ?? false;
  const sendWatch = (reference: string) => send({ type: "watchPayment", reference });
  /** Code loaded later (the maximum bid, src/stores/maximumBid.ts) hears every message through these. */
  const listeners = new Set<(message: ServerMessage) => void>();

  const openClient = () =>
    createRealtimeClient({
      url: typeof options.url === "function" ? options.url() : options.url,
      createSocket: options.createSocket,
      timers,
      log: options.log,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs,
      onStatus(status) {
        $auction.setKey("status", status);
        // Answers never cross to a new connection: a bid in flight on the lost one is answered now.
        if (status === "reconnecting") pendingBids.settleAll({ ok: false, code: "connection_lost" });
        // A new connection watches nothing: the service forgets a socket's watches when it closes.
        if (status === "live") for (const reference of watchedPayments.keys()) sendWatch(reference);
        options.observe?.status?.(status);
      },
      onMessage(message) {
        receive(message);
        options.observe?.message?.(message);
        for (const listener of listeners) listener(message);
      },
    });
  /** Null until connect(): the page's URL is known only in the browser. */
  let client: ReturnType<typeof createRealtimeClient> | null = null;

  /**
   * Announces the end of the round the page was showing, once, when a message shows it ended: the
   * same round now ended (its highest won), or a later round (the winner is among the past ones).
   * A page that first loads after an end only shows it, without a toast.
   */
  function announceEnd(next: Pick<StateMessage, "round" | "highest" | "pastWinners">) {
    const shown = $auction.get().round;
    if (!shown || shown.ended || shown.number === 0 || shown.number <= announcedRound) return;
    let winner: WireWinner | undefined;
    if (next.round.number === shown.number && next.round.ended && next.highest) {
      winner = { round: shown.number, bid: next.highest, endedAt: next.round.endsAt ?? "" };
    } else if (next.round.number > shown.number) {
      winner = next.pastWinners.find((past) => past.round === shown.number);
    } else if (!(next.round.number === shown.number && next.round.ended)) {
      return;
    }
    announcedRound = shown.number;
    // A round whose every bid was hidden sold nothing: no toast.
    if (!winner) return;
    const won = ownBidIds.has(winner.bid.id);
    options.notify(won ? wonToast(winner.bid) : soldToast(winner.bid));
    if (won) $won.set(winner);
  }

  /** Replaces the page's state with a snapshot's (or the list after an action or a round's end). */
  function applyState(message: StateMessage) {
    announceEnd(message);
    const before = $auction.get();
    // A moderator's action that took the leading bid away says so; any other state clears the note.
    const removed =
      message.type === "moderated" &&
      before.highest !== null &&
      message.round.number === before.round?.number &&
      !message.bids.some((bid) => bid.id === before.highest?.id);
    $auction.set({
      ...before,
      leaderNote: removed ? "removed" : null,
      bids: message.bids,
      highest: message.highest,
      bidders: message.bidders,
      round: message.round,
      pastWinners: message.pastWinners,
      serviceOffsetMs: Date.parse(message.now) - monotonicNow(),
    });
  }

  /** The first bid of a round after the one shown: the list starts afresh with it. */
  function openRound(bid: WireBid, after: BroadcastStanding) {
    const { round } = $auction.get();
    $auction.set({
      ...$auction.get(),
      bids: [bid],
      highest: bid,
      leaderNote: null,
      bidders: after.bidders,
      round: {
        number: after.round,
        endsAt: after.endsAt,
        ended: false,
        seconds: round?.seconds ?? 0,
        softCloseSeconds: round?.softCloseSeconds ?? 0,
      },
    });
  }

  /**
   * Broadcast bids, oldest first: one ("bid") or every bid since the socket's last frame ("bids",
   * docs/design.md#10), all of one round, with the standing after the newest. Each is added as if it
   * had come alone, so the page ends as it would after the same bids one by one; one toast, the
   * one the last bid to raise any would have raised alone: "New Bid!" for a bid from someone else
   * not listed yet (not this visitor's own, listed from its acknowledgement), or the personal
   * outbid when it passed this visitor's lead.
   */
  function receiveBids(bids: readonly WireBid[], after: BroadcastStanding) {
    const opensRound = after.round > ($auction.get().round?.number ?? 0);
    const typedName = $typedBidderName.get().trim();
    let toast: ToastInput | null = null;
    for (const [index, bid] of bids.entries()) {
      const opening = index === 0 && opensRound;
      // The standing this bid met, as if it had come alone: the last round's leader leads nothing now.
      const ledBefore = opening ? null : $auction.get().highest;
      const wasLeading = ledBefore !== null && ownBidIds.has(ledBefore.id);
      if (opening) openRound(bid, after);
      const isNew = opening || addBid(bid);
      const leader = $auction.get().highest;
      // The page that led and was passed hears it personally (docs/product-behaviour.md#4-auction).
      // A bid below this page's leading maximum is answered in its own transaction by an automatic
      // bid, which may come in the next frame: news, not an outbid.
      if (wasLeading && leader && !ownBidIds.has(leader.id) && !answeredByMaximum(leader)) toast = outbidToast(leader);
      else if (isNew && bid.bidderName !== typedName)
        toast = { title: "New Bid!", description: `${bid.bidderName} bid ${formatCents(bid.amountCents)}` };
    }
    // The count only grows within a round; the bids themselves may already be listed from this visitor's own acks.
    $auction.setKey("bidders", Math.max($auction.get().bidders, after.bidders));
    const round = $auction.get().round;
    // A bid in the soft-close window moves the end.
    if (round && after.round === round.number) $auction.setKey("round", { ...round, endsAt: after.endsAt });
    // One toast for the frame: the one the last of its bids would have raised alone.
    if (toast) options.notify(toast);
  }

  function receive(message: ServerMessage) {
    switch (message.type) {
      case "snapshot":
      // An operator's action: the list as it now stands, hidden bids gone, restored ones back.
      case "moderated":
      // A round's end: the round as it ended (or the next, if a bid opened it already).
      case "roundEnded":
        applyState(message);
        break;
      case "resume":
        announceEnd(message);
        // Oldest first on the wire; each is added as if it had arrived live, without a toast.
        for (const bid of message.bids) addBid(bid);
        $auction.set({
          ...$auction.get(),
          bidders: message.bidders,
          round: message.round,
          pastWinners: message.pastWinners,
          serviceOffsetMs: Date.parse(message.now) - monotonicNow(),
        });
        break;
      case "bid":
        receiveBids([message.bid], message);
        break;
      case "bids":
        receiveBids(message.bids, message);
        break;
      case "accepted":
        // A bid passed at once by an automatic bid never led: its answer says so, and no "outbid" toast follows.
        if (!message.outbidByMaximum) ownBidIds.add(message.bid.id);
        // A bid that opened the next round joins its list with that round's first message.
        if (message.round === ($auction.get().round?.number ?? 0)) addBid(message.bid);
        pendingBids.settle(message.requestId, { ok: true, bid: message.bid, outbidByMaximum: message.outbidByMaximum });
        break;
      case "error":
        if (message.requestId) {
          pendingBids.settle(message.requestId, { ok: false, code: message.code, highestCents: message.highestCents });
        } else {
          options.log.error(`Auction: the service refused a message (${message.code}): ${message.message}`);
        }
        break;
      case "purchase":
        // Every visitor hears each confirmed purchase (docs/design.md#8).
        options.notify({ title: purchaseToastTitle(message.name, message.tierName) });
        break;
      case "payment":
        watchedPayments.get(message.reference)?.(message);
        break;
      case "pong":
        break;
    }
  }

  function stop() {
    client?.stop();
    pendingBids.settleAll({ ok: false, code: "connection_lost" });
  }

  /** Adds a bid unless it is already listed; false for a duplicate. Keeps id order, newest first. */
  function addBid(bid: WireBid): boolean {
    const { bids, highest } = $auction.get();
    if (bids.some((listed) => listed.id === bid.id)) return false;
    const merged = [...bids, bid].sort((a, b) => b.id - a.id).slice(0, SNAPSHOT_SIZE);
    // Strictly above: of equal amounts (a restored bid and a later one) the earlier leads.
    const leads = highest === null || bid.amountCents > highest.amountCents;
    $auction.set({
      ...$auction.get(),
      bids: merged,
      highest: leads ? bid : highest,
      // A new leader is news enough: the moderator's note goes.
      ...(leads && { leaderNote: null }),
    });
    return true;
  }

  return {
    $auction,
    $typedBidderName,
    $won,
    /** Opens the connection once; later calls do nothing. */
    connect() {
      if (client) return;
      client = openClient();
      client.start();
    },
    /** Sends a message as it is; false when there is no open connection. */
    send,
    /** Counts a bid as this page's own (its maximum's automatic bid): outbid and won toasts follow it. */
    claimBid: (id: number) => ownBidIds.add(id),
    /** Which bids this page's maximum answers at once with an automatic bid (no outbid toast for them). */
    answerWithMaximum(answers: (bid: WireBid) => boolean) {
      answeredByMaximum = answers;
    },
    /** Hears every message after the stores have taken it; returns the call that stops. */
    listen(listener: (message: ServerMessage) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Sends a bid the island has already checked; resolves with the service's verdict. */
    placeBid(bidderName: string, amountCents: number): Promise<BidOutcome> {
      const requestId = `bid-${++lastRequestNumber}`;
      if (!send({ type: "bid", requestId, bidderName, amount: amountCents / 100 }))
        return Promise.resolve({ ok: false, code: "no_connection" });
      return pendingBids.wait(requestId);
    },
    /**
     * Follows a payment request: `onStatus` hears its "payment" messages, from now and after every
     * reconnection once connect() has been called. Returns the call that stops.
     */
    watchPayment(reference: string, onStatus: (status: PaymentMessage) => void): () => void {
      watchedPayments.set(reference, onStatus);
      sendWatch(reference);
      return () => watchedPayments.delete(reference);
    },
    /**
     * Connects again at once, resuming: the service's first message brings its state and its time
     * afresh (asked when this page's wall clock leapt past its monotonic clock, docs/design.md#9).
     * Bids still waiting are answered as lost: their answers would come on the closed socket.
     */
    resync() {
      stop();
      client?.start();
    },
    /** Closes the connection for good; bids still waiting are answered as lost. */
    stop,
  };
}
