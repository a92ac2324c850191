/**
 * Takes one bid or secret maximum from a client to an answer: the bid rules, then the per-address
 * rate limit, then the atomic insert, batched with the bids that arrive meanwhile (bidBatcher.ts).
 * Knows nothing of sockets, so its answers are plain protocol messages; a maximum's answers go only
 * to the socket that sent its secret.
 */
import { createHash } from "node:crypto";
import { checkAboveHighest, checkAmount, checkBidderName } from "../../src/lib/auction/bidRules.ts";
import type { ErrorCode, PlaceBidMessage, ServerMessage, SetMaximumMessage } from "../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS, tooLowText } from "../../src/lib/auction/refusalTexts.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { NameFilter } from "../names/nameFilter.ts";
import { nameKey } from "../names/nameKey.ts";
import {
  type BidStore,
  type MaximumOutcome,
  type PlaceBidOutcome,
  type PlacementRound,
  StoreUnavailableError,
} from "../storage/types.ts";
import { type BidBatcher, createBidBatcher } from "./bidBatcher.ts";
import type { KnownStanding } from "./knownStanding.ts";
import type { RoundClock } from "./roundClock.ts";
import { toWireBid } from "./wire.ts";

export interface BidDeskOptions {
  store: BidStore;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  logger: Logger;
  /** The highest and the blocked names this instance knows of, for refusals decided before the database is asked. */
  known: KnownStanding;
  /** Names refused as name_not_allowed (nameFilter.ts). */
  nameFilter: NameFilter;
  /** Whether the round may be ending, when the known highest must not refuse a bid that opens the next. */
  roundClock: Pick<RoundClock, "nearEnd" | "observeClosedRound">;
  /** Defaults to group commit over the store with the default batch bound. */
  batcher?: BidBatcher;
}

export interface BidDesk {
  place(message: PlaceBidMessage | SetMaximumMessage, clientAddress: string): Promise<ServerMessage>;
  /** The secret's maximum in the current round, for the socket that sent the secret alone. */
  ownMaximum(bidderSecret: string): Promise<ServerMessage>;
  /** From now on every bid is answered unavailable; resolves once the bids already at the store are answered. */
  close(): Promise<void>;
}

/** A maximum's owner as stored: the bidder secret's SHA-256 in hex, so the secret itself is kept nowhere. */
function ownerHashOf(bidderSecret: string): string {
  return createHash("sha256").update(bidderSecret).digest("hex");
}

/** A bid or maximum the database refused: its codes are the store's, listed once (storage/types.ts). */
type StoreRefusal = Extract<PlaceBidOutcome | MaximumOutcome, { accepted: false }>;

export function createBidDesk(options: BidDeskOptions): BidDesk {
  const { store, rateLimiter, metrics, logger, known, nameFilter, roundClock } = options;
  const batcher = options.batcher ?? createBidBatcher({ store, onBatch: (size) => metrics.bidBatchSize.observe(size) });
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  const highestCents = () => known.highestCents();

  function refuse(requestId: string, code: ErrorCode, highestCents: number | null, message?: string): ServerMessage {
    metrics.bidsRejected.inc({ code });
    return { type: "error", requestId, code, message: message ?? REFUSAL_TEXTS[code], highestCents };
  }

  /** A refusal the database decided, with the highest it decided at. */
  function refuseAtStore(requestId: string, outcome: StoreRefusal): ServerMessage {
    if (outcome.code === "name_not_allowed" || outcome.highestCents === null) {
      return refuse(requestId, "name_not_allowed", highestCents());
    }
    const text = outcome.code === "too_low" ? tooLowText(outcome.highestCents) : undefined;
    return refuse(requestId, outcome.code, outcome.highestCents, text);
  }

  /** The store's own answers are news too: a broadcast may not have arrived yet. */
  function observe(outcome: PlacementRound & { moderation: number }, highest: number | null) {
    roundClock.observeClosedRound(outcome.closedRoundBids);
    // A refusal must not name a highest below a bid already acknowledged.
    if (highest !== null) known.observeHighest(highest, { moderation: outcome.moderation, round: outcome.round });
  }

  async function bidAtStore(requestId: string, name: string, amountCents: number): Promise<ServerMessage> {
    const outcome = await batcher.place({ bidderName: name, amountCents });
    metrics.bidsDecided.inc({ outcome: outcome.accepted ? "accepted" : outcome.code });
    observe(
      outcome,
      outcome.accepted ? (outcome.outbidByMaximumCents ?? outcome.bid.amountCents) : outcome.highestCents,
    );
    if (!outcome.accepted) return refuseAtStore(requestId, outcome);
    metrics.bidsAccepted.inc();
    const answer: ServerMessage = { type: "accepted", requestId, bid: toWireBid(outcome.bid), round: outcome.round };
    if (outcome.outbidByMaximumCents !== undefined) answer.outbidByMaximum = true;
    return answer;
  }

  async function maximumAtStore(
    requestId: string,
    name: string,
    maximumCents: number,
    bidderSecret: string,
  ): Promise<ServerMessage> {
    const outcome = await batcher.place({ bidderName: name, maximumCents, ownerHash: ownerHashOf(bidderSecret) });
    if (!outcome.accepted) {
      if (outcome.code === "outbid_by_maximum") metrics.maximums.inc({ outcome: "outbid" });
      observe(outcome, outcome.highestCents);
      return refuseAtStore(requestId, outcome);
    }
    metrics.maximums.inc({ outcome: outcome.raised ? "raised" : "set" });
    if (outcome.bid) metrics.bidsAccepted.inc();
    observe(outcome, outcome.bid?.amountCents ?? null);
    return {
      type: "maximumSet",
      requestId,
      maximumCents,
      leading: true,
      bid: outcome.bid ? toWireBid(outcome.bid) : null,
      round: outcome.round,
    };
  }

  async function atStore(message: PlaceBidMessage | SetMaximumMessage, name: string, cents: number) {
    try {
      return message.type === "bid"
        ? await bidAtStore(message.requestId, name, cents)
        : await maximumAtStore(message.requestId, name, cents, message.bidderSecret);
    } catch (error) {
      // The error's text is the driver's: it never carries the parameters (the secret is hashed anyway).
      if (!(error instanceof StoreUnavailableError)) logger.error({ err: error }, "placing a bid failed");
      return refuse(message.requestId, "unavailable", highestCents());
    }
  }

  return {
    async place(message, clientAddress) {
      const { requestId } = message;
      const name = checkBidderName(message.bidderName);
      if (!name.ok) return refuse(requestId, name.code, highestCents());
      // The operator's blocks as this instance last read them; the database checks again under its lock.
      if (!nameFilter(name.value).allowed || known.isBlocked(nameKey(name.value))) {
        return refuse(requestId, "name_not_allowed", highestCents());
      }
      const amount = checkAmount(message.type === "bid" ? message.amount : message.maximum);
      if (!amount.ok) return refuse(requestId, amount.code, highestCents());
      // A quick answer from what this instance knows; the database decides for real, atomically.
      // Not near the round's end: a bid after it opens the next round, whatever the old highest.
      const knownHighest = roundClock.nearEnd() ? null : highestCents();
      // With no highest known, the first bid's floor is left to the database, which knows the round.
      if (knownHighest !== null && !checkAboveHighest(amount.value, knownHighest).ok) {
        return refuse(requestId, "too_low", knownHighest, tooLowText(knownHighest));
      }
      // Not ready means the database (or our LISTEN on it) is gone: answer at once rather than let
      // the bid wait out the pool's reconnect and land after the visitor was told nothing.
      if (closed || !store.isReady()) return refuse(requestId, "unavailable", knownHighest);
      if (!rateLimiter.take(clientAddress)) return refuse(requestId, "rate_limited", knownHighest);
      const answer = atStore(message, name.value, amount.value);
      pending.add(answer);
      try {
        return await answer;
      } finally {
        pending.delete(answer);
      }
    },
    async ownMaximum(bidderSecret) {
      if (closed || !store.isReady()) {
        return { type: "error", code: "unavailable", message: REFUSAL_TEXTS.unavailable };
      }
      try {
        const own = await store.ownMaximum(ownerHashOf(bidderSecret));
        return { type: "myMaximum", round: own.round, maximumCents: own.maximumCents, leading: own.leading };
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) logger.error({ err: error }, "reading a maximum failed");
        return { type: "error", code: "unavailable", message: REFUSAL_TEXTS.unavailable };
      }
    },
    async close() {
      closed = true;
      await Promise.allSettled([...pending]);
    },
  };
}
