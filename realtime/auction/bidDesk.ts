/**
 * Takes one bid from a client to an answer: the bid rules, then the per-address rate limit, then
 * the atomic insert. Knows nothing of sockets, so its answers are plain protocol messages.
 */
import { checkAboveHighest, checkAmount, checkBidderName } from "../../src/lib/auction/bidRules.ts";
import type { ErrorCode, PlaceBidMessage, ServerMessage } from "../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS } from "../../src/lib/auction/refusalTexts.ts";
import { formatCents } from "../../src/lib/format.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { type BidStore, StoreUnavailableError } from "../storage/types.ts";
import type { NameFilter } from "./nameFilter.ts";
import type { RateLimiter } from "./rateLimiter.ts";
import { toWireBid } from "./wire.ts";

export interface BidDeskOptions {
  store: BidStore;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  logger: Logger;
  /** The newest amount this instance knows of, for refusals decided before the database is asked. */
  knownHighestCents(): number | null;
  /** Names refused as name_not_allowed (nameFilter.ts). */
  nameFilter: NameFilter;
}

export interface BidDesk {
  place(message: PlaceBidMessage, clientAddress: string): Promise<ServerMessage>;
  /** From now on every bid is answered unavailable; resolves once the bids already at the store are answered. */
  close(): Promise<void>;
}

export function createBidDesk({
  store,
  rateLimiter,
  metrics,
  logger,
  knownHighestCents,
  nameFilter,
}: BidDeskOptions): BidDesk {
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  // The store's own answers are news too: the broadcast of a bid this desk just accepted may not
  // have arrived yet, and a refusal must not name a highest below a bid already acknowledged.
  let answeredHighestCents: number | null = null;

  function learn(cents: number) {
    if (answeredHighestCents === null || cents > answeredHighestCents) answeredHighestCents = cents;
  }

  function highestCents(): number | null {
    const broadcast = knownHighestCents();
    if (broadcast === null) return answeredHighestCents;
    return answeredHighestCents === null ? broadcast : Math.max(broadcast, answeredHighestCents);
  }

  function refuse(requestId: string, code: ErrorCode, highestCents: number | null, message?: string): ServerMessage {
    metrics.bidsRejected.inc({ code });
    return { type: "error", requestId, code, message: message ?? REFUSAL_TEXTS[code], highestCents };
  }

  async function atStore(requestId: string, name: string, amountCents: number): Promise<ServerMessage> {
    try {
      const outcome = await store.placeBid(name, amountCents);
      learn(outcome.accepted ? outcome.bid.amountCents : outcome.highestCents);
      if (!outcome.accepted) {
        const higherThan = formatCents(outcome.highestCents);
        return refuse(requestId, "too_low", outcome.highestCents, `Your bid must be higher than ${higherThan}`);
      }
      metrics.bidsAccepted.inc();
      return { type: "accepted", requestId, bid: toWireBid(outcome.bid) };
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
      if (!nameFilter(name.value).allowed) return refuse(requestId, "name_not_allowed", highestCents());
      const amount = checkAmount(message.amount);
      if (!amount.ok) return refuse(requestId, amount.code, highestCents());
      // A quick answer from what this instance knows; the database decides for real, atomically.
      const known = highestCents();
      // `known !== null` never changes the outcome (the rule passes on null) but narrows known for formatCents.
      if (!checkAboveHighest(amount.value, known).ok && known !== null) {
        return refuse(requestId, "too_low", known, `Your bid must be higher than ${formatCents(known)}`);
      }
      // Not ready means the database (or our LISTEN on it) is gone: answer at once rather than let
      // the bid wait out the pool's reconnect and land after the visitor was told nothing.
      if (closed || !store.isReady()) return refuse(requestId, "unavailable", known);
      if (!rateLimiter.take(clientAddress)) return refuse(requestId, "rate_limited", known);
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
