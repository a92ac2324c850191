/**
 * Group commit's scheduling (service/auction/bidBatcher.ts) over a store whose transactions the
 * test finishes by hand: a lone bid goes on the next turn, bids read in one turn or arriving while
 * a transaction is in flight go together in arrival order, a batch is bounded, and failures reach
 * exactly the bids they touch.
 */
import { describe, expect, it } from "vitest";
import { createBidBatcher } from "../../service/auction/bidBatcher.ts";
import type { BidToPlace, MaximumOutcome, PlaceBidOutcome, Placement } from "../../service/storage/types.ts";

interface Transaction {
  bids: Placement[];
  finish(outcomes: (PlaceBidOutcome | MaximumOutcome)[]): void;
  fail(error: unknown): void;
}

/** A store whose transactions (a batch, or one bid placed alone) wait until the test finishes them. */
function manualStore() {
  const transactions: Transaction[] = [];
  return {
    transactions,
    placeEntries(bids: readonly Placement[]) {
      return new Promise<(PlaceBidOutcome | MaximumOutcome)[]>((resolve, reject) => {
        transactions.push({ bids: [...bids], finish: resolve, fail: reject });
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
  it("sends a bid that arrives alone on the next turn of the event loop, in a transaction of its own", async () => {
    const store = manualStore();
    const sizes: number[] = [];
    const batcher = createBidBatcher({ store, onBatch: (size) => sizes.push(size) });
    const answer = batcher.place(bid(100));
    await turn();
    expect(store.transactions.map((transaction) => transaction.bids)).toEqual([[bid(100)]]);
    store.transactions[0]?.finish([accepted(100)]);
    expect(await answer).toEqual(accepted(100));
    expect(sizes).toEqual([1]);
  });

  it("sends the bids read in one turn together, and those that arrive during a transaction together next", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store });
    // Read in the same turn (one poll of the sockets): one transaction.
    const sameTurn = [batcher.place(bid(100)), batcher.place(bid(150))];
    await turn();
    expect(store.transactions.map((transaction) => transaction.bids)).toEqual([[bid(100), bid(150)]]);
    const waiting = [batcher.place(bid(300)), batcher.place(bid(200)), batcher.place(bid(400))];
    await turn();
    expect(store.transactions).toHaveLength(1);
    store.transactions[0]?.finish([accepted(100), accepted(150)]);
    await Promise.all(sameTurn);
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(300), bid(200), bid(400)]);
    store.transactions[1]?.finish([accepted(300), tooLow(300), accepted(400)]);
    expect(await Promise.all(waiting)).toEqual([accepted(300), tooLow(300), accepted(400)]);
    // Idle again: the next lone bid goes on the next turn.
    const later = batcher.place(bid(500));
    await turn();
    expect(store.transactions[2]?.bids).toEqual([bid(500)]);
    store.transactions[2]?.finish([accepted(500)]);
    await later;
  });

  it("bounds a batch: what is over the bound goes in the next transaction", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store, maxBatchSize: 3 });
    const answers = [1, 2, 3, 4, 5].map((cents) => batcher.place(bid(cents)));
    await turn();
    expect(store.transactions[0]?.bids).toEqual([bid(1), bid(2), bid(3)]);
    store.transactions[0]?.finish([accepted(1), accepted(2), accepted(3)]);
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(4), bid(5)]);
    store.transactions[1]?.finish([accepted(4), accepted(5)]);
    expect((await Promise.all(answers)).map((outcome) => outcome.accepted)).toEqual([true, true, true, true, true]);
  });

  it("fails every bid of a failed transaction with its error, and carries on with the next", async () => {
    const store = manualStore();
    const batcher = createBidBatcher({ store });
    const doomed = [batcher.place(bid(200)), batcher.place(bid(300))].map(settled);
    await turn();
    const after = batcher.place(bid(400));
    const lost = new Error("connection lost");
    store.transactions[0]?.fail(lost);
    expect(await Promise.all(doomed)).toEqual([{ error: lost }, { error: lost }]);
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(400)]);
    store.transactions[1]?.finish([accepted(400)]);
    expect(await after).toEqual(accepted(400));
  });

  it("places each bid of a batch the table refused alone, so only the refused bid fails", async () => {
    const store = manualStore();
    const sizes: number[] = [];
    const batcher = createBidBatcher({ store, onBatch: (size) => sizes.push(size) });
    const batch = [batcher.place(bid(200)), batcher.place(bid(300)), batcher.place(bid(400))].map(settled);
    await turn();
    // A check constraint (SQLSTATE 23514) refused one row: the batch's one statement failed whole.
    const refused = Object.assign(new Error("violates check constraint"), { code: "23514" });
    store.transactions[0]?.fail(refused);
    await turn();
    expect(store.transactions[1]?.bids).toEqual([bid(200)]);
    store.transactions[1]?.finish([accepted(200)]);
    await turn();
    expect(store.transactions[2]?.bids).toEqual([bid(300)]);
    store.transactions[2]?.fail(refused);
    await turn();
    expect(store.transactions[3]?.bids).toEqual([bid(400)]);
    store.transactions[3]?.finish([accepted(400)]);
    expect(await Promise.all(batch)).toEqual([{ value: accepted(200) }, { error: refused }, { value: accepted(400) }]);
    expect(sizes).toEqual([3, 1, 1, 1]);
  });
});
