/**
 * Takes one bid from a client to an answer: the bid rules, then the per-address rate limit, then
 * the atomic insert, batched with the bids that arrive meanwhile (bidBatcher.ts). Knows nothing of
 * sockets, so its answers are plain protocol messages.
 */
import { checkAboveHighest, checkAmount, checkBidderName } from "../../src/lib/auction/bidRules.ts";
import type { ErrorCode, PlaceBidMessage, ServerMessage } from "../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS, tooLowText } from "../../src/lib/auction/refusalTexts.ts";
import type { RateLimiter } from "../http/rateLimiter.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { NameFilter } from "../names/nameFilter.ts";
import { nameKey } from "../names/nameKey.ts";
import { type BidStore, StoreUnavailableError } from "../storage/types.ts";
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
  place(message: PlaceBidMessage, clientAddress: string): Promise<ServerMessage>;
  /** From now on every bid is answered unavailable; resolves once the bids already at the store are answered. */
  close(): Promise<void>;
}

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

  async function atStore(requestId: string, name: string, amountCents: number): Promise<ServerMessage> {
    try {
      const outcome = await batcher.place({ bidderName: name, amountCents });
      metrics.bidsDecided.inc({ outcome: outcome.accepted ? "accepted" : outcome.code });
      roundClock.observeClosedRound(outcome.closedRoundBids);
      // The store's own answers are news too: the broadcast of a bid this desk just accepted may not
      // have arrived yet, and a refusal must not name a highest below a bid already acknowledged.
      known.observeHighest(outcome.accepted ? outcome.bid.amountCents : outcome.highestCents, {
        moderation: outcome.moderation,
        round: outcome.round,
      });
      if (!outcome.accepted && outcome.code === "name_not_allowed") {
        return refuse(requestId, "name_not_allowed", highestCents());
      }
      if (!outcome.accepted)
        return refuse(requestId, "too_low", outcome.highestCents, tooLowText(outcome.highestCents));
      metrics.bidsAccepted.inc();
      return { type: "accepted", requestId, bid: toWireBid(outcome.bid), round: outcome.round };
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) logger.error({ err: error }, "placing a bid failed");
      return refuse(requestId, "unavailable", highestCents());
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
      const amount = checkAmount(message.amount);
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
      const answer = atStore(requestId, name.value, amount.value);
      pending.add(answer);
      try {
        return await answer;
      } finally {
        pending.delete(answer);
      }
    },
    async close() {
      closed = true;
      await Promise.allSettled([...pending]);
    },
  };
}
