/**
 * One page's auction connection as a factory: the stores the islands read ($auction,
 * $typedBidderName) and the actions they call (connect, placeBid), over the reconnecting client of
 * src/lib/auction/realtimeClient.ts. Everything from outside (the socket, the clock, the toaster,
 * the console) is passed in: the page builds its one connection from browser defaults
 * (src/stores/auction.ts), tests and the fault suites build as many as they need on Node.
 */
import { atom, map } from "nanostores";
import type { BidFailureCode } from "../lib/auction/bidToasts.ts";
import type { ServerMessage, WireBid } from "../lib/auction/protocol.ts";
import { SNAPSHOT_SIZE } from "../lib/auction/protocol.ts";
import { type ConnectionStatus, createRealtimeClient, type SocketLike } from "../lib/auction/realtimeClient.ts";
import { formatCents } from "../lib/format.ts";
import type { Timers } from "../lib/timers.ts";
import type { ToastInput } from "./toasts.ts";

/** No acknowledgement within this long counts as a failed bid (DESIGN.md 3a). */
export const BID_ACK_TIMEOUT_MS = 10_000;

export interface AuctionState {
  status: ConnectionStatus | "idle";
  /** Newest first (highest id first), at most SNAPSHOT_SIZE. */
  bids: WireBid[];
  highest: WireBid | null;
  bidders: number;
}

export type BidOutcome = { ok: true; bid: WireBid } | { ok: false; code: BidFailureCode; highestCents?: number | null };

export interface AuctionConnectionOptions {
  /** ws: or wss: URL of the service's socket, or how to find it when connect() is first called. */
  url: string | (() => string);
  createSocket(url: string): SocketLike;
  timers: Timers;
  log: Pick<Console, "error">;
  /** Shows a toast ("New Bid!" for other visitors' bids). */
  notify(toast: ToastInput): void;
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
  /** Every message as it arrives and every status change, after the stores have taken them. */
  observe?: { message?(message: ServerMessage): void; status?(status: ConnectionStatus): void };
}

export function createAuctionConnection(options: AuctionConnectionOptions) {
  const { timers } = options;
  const $auction = map<AuctionState>({ status: "idle", bids: [], highest: null, bidders: 0 });
  /** What this visitor has typed as their name: their own bids raise no "New Bid!" toast. */
  const $typedBidderName = atom("");
  const pendingBids = new Map<string, { settle: (outcome: BidOutcome) => void; timer: unknown }>();
  let lastRequestNumber = 0;

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
        if (status === "reconnecting") settleAll({ ok: false, code: "connection_lost" });
        options.observe?.status?.(status);
      },
      onMessage(message) {
        receive(message);
        options.observe?.message?.(message);
      },
    });
  /** Null until connect(): the page's URL is known only in the browser. */
  let client: ReturnType<typeof createRealtimeClient> | null = null;

  function settleBid(requestId: string, outcome: BidOutcome) {
    const pending = pendingBids.get(requestId);
    if (!pending) return;
    pendingBids.delete(requestId);
    timers.clearTimeout(pending.timer);
    pending.settle(outcome);
  }

  function settleAll(outcome: BidOutcome) {
    for (const requestId of [...pendingBids.keys()]) settleBid(requestId, outcome);
  }

  function receive(message: ServerMessage) {
    switch (message.type) {
      case "snapshot":
      // An operator's action: the list as it now stands, hidden bids gone, restored ones back.
      case "moderated":
        $auction.set({ ...$auction.get(), bids: message.bids, highest: message.highest, bidders: message.bidders });
        break;
      case "resume":
        // Oldest first on the wire; each is added as if it had arrived live, without a toast.
        for (const bid of message.bids) addBid(bid);
        $auction.setKey("bidders", message.bidders);
        break;
      case "bid":
        // The count only grows; the bid itself may already be listed from this visitor's own ack.
        $auction.setKey("bidders", Math.max($auction.get().bidders, message.bidders));
        if (addBid(message.bid) && message.bid.bidderName !== $typedBidderName.get().trim()) {
          options.notify({
            title: "New Bid!",
            description: `${message.bid.bidderName} bid ${formatCents(message.bid.amountCents)}`,
          });
        }
        break;
      case "accepted":
        addBid(message.bid);
        settleBid(message.requestId, { ok: true, bid: message.bid });
        break;
      case "error":
        if (message.requestId) {
          settleBid(message.requestId, { ok: false, code: message.code, highestCents: message.highestCents });
        } else {
          options.log.error(`Auction: the service refused a message (${message.code}): ${message.message}`);
        }
        break;
      case "pong":
        break;
    }
  }

  /** Adds a bid unless it is already listed; false for a duplicate. Keeps id order, newest first. */
  function addBid(bid: WireBid): boolean {
    const { bids, highest } = $auction.get();
    if (bids.some((listed) => listed.id === bid.id)) return false;
    const merged = [...bids, bid].sort((a, b) => b.id - a.id).slice(0, SNAPSHOT_SIZE);
    // Strictly above: of equal amounts (a restored bid and a later one) the earlier leads.
    $auction.set({
      ...$auction.get(),
      bids: merged,
      highest: highest === null || bid.amountCents > highest.amountCents ? bid : highest,
    });
    return true;
  }

  return {
    $auction,
    $typedBidderName,
    /** Opens the connection once; later calls do nothing. */
    connect() {
      if (client) return;
      client = openClient();
      client.start();
    },
    /** Sends a bid the island has already checked; resolves with the service's verdict. */
    placeBid(bidderName: string, amountCents: number): Promise<BidOutcome> {
      const requestId = `bid-${++lastRequestNumber}`;
      const sent = client?.send({ type: "bid", requestId, bidderName, amount: amountCents / 100 }) ?? false;
      if (!sent) return Promise.resolve({ ok: false, code: "no_connection" });
      return new Promise((resolve) => {
        const timer = timers.setTimeout(() => settleBid(requestId, { ok: false, code: "timeout" }), BID_ACK_TIMEOUT_MS);
        pendingBids.set(requestId, { settle: resolve, timer });
      });
    },
    /** Closes the connection for good; bids still waiting are answered as lost. */
    stop() {
      client?.stop();
      settleAll({ ok: false, code: "connection_lost" });
    },
  };
}
