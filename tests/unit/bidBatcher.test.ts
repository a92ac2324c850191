/**
 * Group commit's scheduling (realtime/auction/bidBatcher.ts) over a store whose transactions the
 * test finishes by hand: a lone bid goes at once, bids arriving meanwhile go together in arrival
 * order, a batch is bounded, and failures reach exactly the bids they touch.
 */
import { describe, expect, it } from "vitest";
import { createBidBatcher } from "../../realtime/auction/bidBatcher.ts";
import type { BidToPlace, PlaceBidOutcome } from "../../realtime/storage/types.ts";

interface Transaction {
  bids: BidToPlace[];
  finish(outcomes: PlaceBidOutcome[]): void;
  fail(error: unknown): void;
}

/** A store whose transactions (a batch, or one bid placed alone) wait until the test finishes them. */
function manualStore() {
  const transactions: Transaction[] = [];
  return {
    transactions,
    placeBids(bids: readonly BidToPlace[]) {
      return new Promise<PlaceBidOutcome[]>((resolve, reject) => {
        transactions.push({ bids: [...bids], finish: resolve, fail: reject });
      });
    },
    placeBid(bidderName: string, amountCents: number) {
      return new Promise<PlaceBidOutcome>((resolve, reject) => {
        transactions.push({
          bids: [{ bidderName, amountCents }],
          finish: (outcomes) => resolve(outcomes[0] as PlaceBidOutcome),
          fail: reject,
        });
      });
    },
  };
}

const bid = (amountCents: number): BidToPlace => ({ bidderName: `Bidder ${amountCents}`, amountCents });

function accepted(amountCents: number, id = amountCents): PlaceBidOutcome {
  return {
    accepted: true,
    bid: { id, bidderName: `Bidder ${amountCents}`, amountCents, createdAt: "2026-11-23T12:00:00.000Z" },
    bidders: 1,
    moderation: 0,
    round: 1,
    endsAt: null,
    closedRoundBids: null,
  };
}

function tooLow(highestCents: number): PlaceBidOutcome {
  return {
    accepted: false,
    code: "too_low",
    highestCents,
    moderation: 0,
    round: 1,
    endsAt: null,
    closedRoundBids: null,
  };
}

const settled = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

/** Lets resolved transactions run their continuations. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("group commit", () => {
  it("sends a bid that arrives alone at once, in a transaction of its own", async () => {
    const store = manualStore();
    const sizes: number[] = [];
    const batcher = createBidBatcher({ store, onBatch: (size) => sizes.push(size) });
    const answer = batcher.place(bid(100));
    expect(store.transactions.map((transaction) => transaction.bids)).toEqual([[bid(100)]]);
    store.transactions[0]?.finish([accepted(100)]);
    expect(await answer).toEqual(accepted(100));
    expect(sizes).toEqual([1]);
  });

  it("sends the bids that arrived during a transaction together next, in arrival order, each with its own answer", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store });
    const first = batcher.place(bid(100));
    const waiting = [batcher.place(bid(300)), batcher.place(bid(200)), batcher.place(bid(400))];
    expect(store.transactions).toHaveLength(1);
    store.transactions[0]?.finish([accepted(100)]);
    await first;
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(300), bid(200), bid(400)]);
    store.transactions[1]?.finish([accepted(300), tooLow(300), accepted(400)]);
    expect(await Promise.all(waiting)).toEqual([accepted(300), tooLow(300), accepted(400)]);
    // Idle again: the next lone bid goes at once.
    const later = batcher.place(bid(500));
    expect(store.transactions[2]?.bids).toEqual([bid(500)]);
    store.transactions[2]?.finish([accepted(500)]);
    await later;
  });

  it("bounds a batch: what is over the bound goes in the next transaction", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store, maxBatchSize: 3 });
    const first = batcher.place(bid(1));
    const waiting = [2, 3, 4, 5, 6].map((cents) => batcher.place(bid(cents)));
    store.transactions[0]?.finish([accepted(1)]);
    await first;
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(2), bid(3), bid(4)]);
    store.transactions[1]?.finish([accepted(2), accepted(3), accepted(4)]);
    await turn();
    expect(store.transactions[2]?.bids).toEqual([bid(5), bid(6)]);
    store.transactions[2]?.finish([accepted(5), accepted(6)]);
    expect((await Promise.all(waiting)).map((outcome) => outcome.accepted)).toEqual([true, true, true, true, true]);
  });

  it("fails every bid of a failed transaction with its error, and carries on with the next", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store });
    const first = batcher.place(bid(100));
    const doomed = [batcher.place(bid(200)), batcher.place(bid(300))].map(settled);
    const lost = new Error("connection lost");
    store.transactions[0]?.finish([accepted(100)]);
    await first;
    await turn();
    const after = batcher.place(bid(400));
    store.transactions[1]?.fail(lost);
    expect(await Promise.all(doomed)).toEqual([{ error: lost }, { error: lost }]);
    await turn();
    expect(store.transactions[2]?.bids).toEqual([bid(400)]);
    store.transactions[2]?.finish([accepted(400)]);
    expect(await after).toEqual(accepted(400));
  });

  it("places each bid of a batch the table refused alone, so only the refused bid fails", async () => {
    const store = manualStore();
    const sizes: number[] = [];
    const batcher = createBidBatcher({ store, onBatch: (size) => sizes.push(size) });
    const first = batcher.place(bid(100));
    const batch = [batcher.place(bid(200)), batcher.place(bid(300)), batcher.place(bid(400))].map(settled);
    store.transactions[0]?.finish([accepted(100)]);
    await first;
    await turn();
    // A check constraint (SQLSTATE 23514) refused one row: the batch's one statement failed whole.
    const refused = Object.assign(new Error("violates check constraint"), { code: "23514" });
    store.transactions[1]?.fail(refused);
    await turn();
    expect(store.transactions[2]?.bids).toEqual([bid(200)]);
    store.transactions[2]?.finish([accepted(200)]);
    await turn();
    expect(store.transactions[3]?.bids).toEqual([bid(300)]);
    store.transactions[3]?.fail(refused);
    await turn();
    expect(store.transactions[4]?.bids).toEqual([bid(400)]);
    store.transactions[4]?.finish([accepted(400)]);
    expect(await Promise.all(batch)).toEqual([{ value: accepted(200) }, { error: refused }, { value: accepted(400) }]);
    expect(sizes).toEqual([1, 3, 1, 1, 1]);
  });
});
