/**
 * A visitor's secret maximum bid (docs/product-behaviour.md#maximum-bids): the service bids for its
 * owner up to it, and tells only the browser holding the bidder secret what it is. Built over the
 * page's auction connection (src/stores/auctionConnection.ts), with storage, randomness, timers and
 * the toaster passed in, so tests drive it with their own. Loaded with the auction island: nothing
 * here runs before a visitor reaches the auction.
 */
import { atom } from "nanostores";
import type { BidFailureCode } from "../lib/auction/bidToasts.ts";
import { createPendingAnswers } from "../lib/auction/pendingAnswers.ts";
import type { ClientMessage, ServerMessage, WireBid } from "../lib/auction/protocol.ts";
import type { Timers } from "../lib/timers.ts";
import type { AuctionState } from "./auctionConnection.ts";
import { BID_ACK_TIMEOUT_MS } from "./auctionConnection.ts";

/** The bidder secret: 32 random bytes in base64url, made the first time this browser sets a maximum. */
export const BIDDER_SECRET_KEY = "nothingStoreBidderSecret";
/** The name the last maximum was set under: a reloaded page tells from the bids whether it still leads. */
export const MAXIMUM_NAME_KEY = "nothingStoreMaximumName";
const SECRET_BYTES = 32;

export interface MaximumState {
  /** The round it bids in: a round's end ends it. */
  round: number;
  maximumCents: number;
  /** Whose name its automatic bids carry; null when this browser has forgotten it. */
  bidderName: string | null;
  leading: boolean;
}

export type MaximumOutcome =
  | { ok: true; maximumCents: number }
  | { ok: false; code: BidFailureCode; highestCents?: number | null };

/** The part of the auction connection a maximum needs (createAuctionConnection's own). */
interface MaximumConnection {
  $auction: { get(): AuctionState; listen(listener: (state: AuctionState) => void): () => void };
  send(message: ClientMessage): boolean;
  listen(listener: (message: ServerMessage) => void): () => void;
  claimBid(id: number): void;
  answerWithMaximum(answers: (bid: WireBid) => boolean): void;
}

export interface MaximumBidOptions {
  connection: MaximumConnection;
  /** localStorage, read inside a try: where it is missing or blocked the secret lives for this visit only. */
  storage(): Pick<Storage, "getItem" | "setItem"> | undefined;
  /** Fills the array with random bytes (crypto.getRandomValues in the page). */
  fillRandom(bytes: Uint8Array<ArrayBuffer>): void;
  timers: Timers;
}

/** Bytes as base64url without padding: 32 bytes make 43 characters of [A-Za-z0-9_-]. */
export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** Storage that is missing or throws (privacy mode, quota) reads as empty and forgets writes. */
function readKey(storage: MaximumBidOptions["storage"], key: string): string | null {
  try {
    return storage()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function writeKey(storage: MaximumBidOptions["storage"], key: string, value: string) {
  try {
    storage()?.setItem(key, value);
  } catch {
    // The value lives on in memory for this visit.
  }
}

/** Whether the bid may be the maximum's own automatic bid: its name, at most its amount. */
function bidsFor(maximum: MaximumState, bid: WireBid): boolean {
  return (
    maximum.bidderName !== null &&
    bid.bidderName.trim() === maximum.bidderName.trim() &&
    bid.amountCents <= maximum.maximumCents
  );
}

/**
 * Whether the maximum still leads by what every page sees: the highest bid is its owner's and not
 * above it. Null when the page cannot tell (no name known): the service's last answer stands.
 */
function leadsBy(maximum: MaximumState, auction: AuctionState): boolean | null {
  if (maximum.bidderName === null) return null;
  return auction.highest !== null && bidsFor(maximum, auction.highest);
}

export function createMaximumBid(options: MaximumBidOptions) {
  const { connection, storage, timers } = options;
  const $maximum = atom<MaximumState | null>(null);
  let secret = readKey(storage, BIDDER_SECRET_KEY);
  let bidderName = readKey(storage, MAXIMUM_NAME_KEY);
  let lastRequestNumber = 0;
  /** The highest bid's id the page showed when the service last answered (undefined: none). */
  let highestAtAnswer: number | undefined;
  const pending = createPendingAnswers<MaximumOutcome>(timers, BID_ACK_TIMEOUT_MS, { ok: false, code: "timeout" });

  function ensureSecret(): string {
    if (secret) return secret;
    const bytes = new Uint8Array(SECRET_BYTES);
    options.fillRandom(bytes);
    secret = base64url(bytes);
    writeKey(storage, BIDDER_SECRET_KEY, secret);
    return secret;
  }

  /** Asks the service for this secret's maximum in the current round (nothing without a secret). */
  function askMine() {
    if (secret) connection.send({ type: "myMaximum", bidderSecret: secret });
  }

  function claimIfOwn(bid: WireBid) {
    const maximum = $maximum.get();
    if (maximum && bidsFor(maximum, bid)) connection.claimBid(bid.id);
  }

  /** Follows the bids: a new round ends the maximum; the highest bid says whether it leads. */
  function follow(auction: AuctionState) {
    const maximum = $maximum.get();
    if (!maximum) return;
    const { round, highest } = auction;
    // The page may still show the round before the maximum's (its opening bid not yet broadcast).
    if (round && (round.number > maximum.round || (round.number === maximum.round && round.ended))) {
      return $maximum.set(null);
    }
    // Only a new highest bid can change the service's word: until then the page may be behind it.
    if (highest?.id === highestAtAnswer) return;
    highestAtAnswer = highest?.id;
    const leading = leadsBy(maximum, auction);
    if (leading !== null && leading !== maximum.leading) $maximum.set({ ...maximum, leading });
  }

  /** Shows the service's answer about the maximum, as of the highest bid the page shows now. */
  function showAnswer(maximum: MaximumState | null) {
    highestAtAnswer = connection.$auction.get().highest?.id;
    $maximum.set(maximum);
  }

  function receive(message: ServerMessage) {
    switch (message.type) {
      // The state afresh (a new page, a reconnection, an operator's block): ask what still stands.
      case "snapshot":
      case "resume":
      case "moderated":
        askMine();
        break;
      case "myMaximum":
        showAnswer(
          message.maximumCents === null
            ? null
            : {
                round: message.round,
                maximumCents: message.maximumCents,
                bidderName,
                leading: message.leading,
              },
        );
        break;
      // The maximum's automatic bids are this page's own: it hears when they are passed, and when one wins.
      case "bid":
      case "bids":
        for (const placed of message.type === "bid" ? [message.bid] : message.bids) claimIfOwn(placed);
        break;
      case "maximumSet":
        if (message.bid) connection.claimBid(message.bid.id);
        showAnswer({
          round: message.round,
          maximumCents: message.maximumCents,
          bidderName,
          leading: message.leading,
        });
        pending.settle(message.requestId, { ok: true, maximumCents: message.maximumCents });
        break;
      case "error":
        if (message.requestId && pending.has(message.requestId)) {
          pending.settle(message.requestId, { ok: false, code: message.code, highestCents: message.highestCents });
        }
        break;
    }
  }

  connection.listen(receive);
  // No outbid: another name's bid below the maximum (stored with the automatic bid that passes it),
  // nor the maximum's own automatic bid, which the page hears before it is claimed here. (Not
  // `leading`: the page's stores have taken the bid, and counted it as passing, before this is asked;
  // a maximum already passed is below every later bid anyway.)
  connection.answerWithMaximum((bid) => {
    const maximum = $maximum.get();
    return maximum !== null && (bidsFor(maximum, bid) || bid.amountCents < maximum.maximumCents);
  });
  connection.$auction.listen((auction) => {
    // Answers never cross to a new connection: a maximum in flight on the lost one is answered now.
    if (auction.status === "reconnecting") {
      pending.settleAll({ ok: false, code: "connection_lost" });
    }
    follow(auction);
  });
  // The island may load after the first snapshot: ask now as well.
  if (connection.$auction.get().status === "live") askMine();

  return {
    $maximum,
    /** Sends a maximum the island has already checked; resolves with the service's verdict. */
    setMaximum(name: string, maximumCents: number): Promise<MaximumOutcome> {
      const requestId = `maximum-${++lastRequestNumber}`;
      const bidderSecret = ensureSecret();
      const message = {
        type: "maximum",
        requestId,
        bidderName: name,
        maximum: maximumCents / 100,
        bidderSecret,
      } as const;
      if (!connection.send(message)) return Promise.resolve({ ok: false, code: "no_connection" });
      bidderName = name;
      writeKey(storage, MAXIMUM_NAME_KEY, name);
      return pending.wait(requestId);
    },
  };
}
