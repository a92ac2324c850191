/**
 * The auction connection: one socket per page, opened when the page is idle, so "New Bid!"
 * reaches a visitor anywhere on the page. Islands read $auction and call placeBid.
 */
import { atom, map } from "nanostores";
import { config } from "../config.ts";
import { type ErrorCode, type ServerMessage, SNAPSHOT_SIZE, type WireBid } from "../lib/auction/protocol.ts";
import {
  type ConnectionStatus,
  createRealtimeClient,
  type RealtimeClient,
  realtimeEndpoint,
} from "../lib/auction/realtimeClient.ts";
import { formatCents } from "../lib/format.ts";
import { showToast } from "./toasts.ts";

/** No acknowledgement within this long counts as a failed bid (DESIGN.md 3a). */
export const BID_ACK_TIMEOUT_MS = 10_000;

export interface AuctionState {
  status: ConnectionStatus | "idle";
  /** Newest first (highest id first), at most SNAPSHOT_SIZE. */
  bids: WireBid[];
  highest: WireBid | null;
  bidders: number;
}

export const $auction = map<AuctionState>({ status: "idle", bids: [], highest: null, bidders: 0 });

/** What this visitor has typed as their name: their own bids raise no "New Bid!" toast. */
export const $typedBidderName = atom("");

export type BidOutcome =
  | { ok: true; bid: WireBid }
  | { ok: false; code: ErrorCode | "no_connection" | "timeout"; highestCents?: number | null };

let client: RealtimeClient | null = null;
let lastRequestNumber = 0;
const pendingBids = new Map<string, { settle: (outcome: BidOutcome) => void; timer: ReturnType<typeof setTimeout> }>();

/** Opens the connection once; later calls do nothing. */
export function connectAuction(url = realtimeEndpoint(config.realtimeUrl, window.location)) {
  if (client) return;
  client = createRealtimeClient({
    url,
    onStatus: (status) => $auction.setKey("status", status),
    onMessage: receive,
  });
  client.start();
}

/** Sends a bid the island has already checked; resolves with the service's verdict. */
export function placeBid(bidderName: string, amountCents: number): Promise<BidOutcome> {
  const requestId = `bid-${++lastRequestNumber}`;
  const sent = client?.send({ type: "bid", requestId, bidderName, amount: amountCents / 100 }) ?? false;
  if (!sent) return Promise.resolve({ ok: false, code: "no_connection" });
  return new Promise((resolve) => {
    const timer = setTimeout(() => settleBid(requestId, { ok: false, code: "timeout" }), BID_ACK_TIMEOUT_MS);
    pendingBids.set(requestId, { settle: resolve, timer });
  });
}

function settleBid(requestId: string, outcome: BidOutcome) {
  const pending = pendingBids.get(requestId);
  if (!pending) return;
  pendingBids.delete(requestId);
  clearTimeout(pending.timer);
  pending.settle(outcome);
}

function receive(message: ServerMessage) {
  switch (message.type) {
    case "snapshot":
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
      if (addBid(message.bid)) {
        if (message.bid.bidderName !== $typedBidderName.get().trim()) {
          showToast({
            title: "New Bid!",
            description: `${message.bid.bidderName} bid ${formatCents(message.bid.amountCents)}`,
          });
        }
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
        console.error(`Auction: the service refused a message (${message.code}): ${message.message}`);
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
  $auction.set({
    ...$auction.get(),
    bids: merged,
    highest: highest === null || bid.amountCents > highest.amountCents ? bid : highest,
  });
  return true;
}
