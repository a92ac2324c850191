/**
 * A BidStore the test drives by hand, for the parts of the service that only read and listen (the
 * notice feed, the broadcaster): its reads are the test's own, and bid notifications and readiness
 * changes happen when the test says. Every write refuses ("not used"). One endless round, as the
 * service runs with AUCTION_ROUND_SECONDS=0.
 *
 *   const scripted = scriptedStore({ view: async () => endlessRoundView(rows, rows, 3), bidsAfter: … });
 *   scripted.notify({ bid: scriptedBid(4), bidders: 4, moderation: 0, round: 1, endsAt: null });
 *   scripted.setReady(false);
 */
import {
  type AuctionView,
  type BidNotice,
  type BidStore,
  ENDLESS_ROUNDS,
  type StoredBid,
} from "../../service/storage/types.ts";

/** Bid `id`, its name and amount made from the id. */
export function scriptedBid(id: number): StoredBid {
  return { id, bidderName: `b${id}`, amountCents: id * 100, createdAt: new Date(0).toISOString() };
}

/** A read's answer: `bids` listed, the standing from the `visible` bids (oldest first), `lastId` the newest id stored. */
export function endlessRoundView(bids: StoredBid[], visible: StoredBid[], lastId: number): AuctionView {
  return {
    bids,
    highest: visible.at(-1) ?? null,
    bidders: visible.length,
    moderation: 0,
    lastId,
    blockedKeys: [],
    round: { number: 1, endsAt: null, closed: false },
    pastWinners: [],
    now: "2026-11-21T12:00:00.000Z",
  };
}

export function scriptedStore(reads: Pick<BidStore, "view" | "bidsAfter">) {
  const bidListeners = new Set<(notice: BidNotice) => void>();
  const readyListeners = new Set<(ready: boolean) => void>();
  let ready = true;
  const notUsed = () => Promise.reject(new Error("not used"));
  const store: BidStore = {
    backend: "postgres",
    rounds: ENDLESS_ROUNDS,
    placeBid: notUsed,
    placeBids: notUsed,
    placeEntries: notUsed,
    ownMaximum: notUsed,
    settleRound: notUsed,
    winners: notUsed,
    ...reads,
    moderate: notUsed,
    moderationView: notUsed,
    onModeration: () => () => {},
    onRoundClosed: () => () => {},
    onBid(listener) {
      bidListeners.add(listener);
      return () => bidListeners.delete(listener);
    },
    onReadyChange(listener) {
      readyListeners.add(listener);
      return () => readyListeners.delete(listener);
    },
    isReady: () => ready,
    admin: {
      openSession: notUsed,
      isSessionLive: notUsed,
      revokeSession: notUsed,
      revokeEverySession: notUsed,
      onSessionRevoked: () => () => {},
      reserveSignIn: notUsed,
      forgetSignIn: notUsed,
      signInFailures: notUsed,
      issueDevice: notUsed,
      reserveDeviceSignIn: notUsed,
      forgetDeviceSignIn: notUsed,
      revokeEveryDevice: notUsed,
      pulse: notUsed,
    },
    close: async () => {},
  };
  return {
    store,
    /** Hands the notice to every bid listener, as the database's NOTIFY would. */
    notify(notice: BidNotice) {
      for (const listener of bidListeners) listener(notice);
    },
    setReady(value: boolean) {
      ready = value;
      for (const listener of readyListeners) listener(value);
    },
    /** Bid and readiness listeners subscribed now. */
    get listeners(): number {
      return bidListeners.size + readyListeners.size;
    },
  };
}
