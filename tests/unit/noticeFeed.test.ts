/**
 * The notice feed (service/auction/noticeFeed.ts) on its own, over a scripted store whose commits,
 * notifications, readiness and reads the test drives by hand: every bid committed after the feed's
 * opening read is handed on once, in id order, with no gap (docs/design.md#7), across outages,
 * notifications queued and duplicated during a catch-up, a long outage read in pages, a failed read
 * and its retry, an outage during the catch-up, and then over generated schedules of all of these.
 * The retry runs on fake timers; reads stay pending until the test answers them, so every ordering
 * is forced rather than hoped for. The property's seed is fixed and printed; FC_SEED=<n> runs another.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createNoticeFeed } from "../../service/auction/noticeFeed.ts";
import { createLogger } from "../../service/logger.ts";
import type { AuctionView, StoredBid } from "../../service/storage/types.ts";
import { RESUME_LIMIT } from "../../src/lib/auction/protocol.ts";
import { endlessRoundView, scriptedBid, scriptedStore } from "../harness/scriptedStore.ts";
import { seededRuns } from "../harness/seededRuns.ts";

const RETRY_MS = 1_000;

/** Lets every promise continuation the feed has queued run (setImmediate stays real). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface PendingRead {
  kind: "view" | "bidsAfter";
  afterId: number;
  limit: number;
  /** The rows as they were when the read was made (a query's snapshot). */
  rowsAtCall: Row[];
  resolve(view: AuctionView): void;
  reject(error: Error): void;
}

interface Row {
  bid: StoredBid;
  /** Hidden by an operator: left out of reads, still counted in lastId. */
  hidden: boolean;
}

/**
 * A store whose reads wait until the test answers them, from the rows as they stood when the read
 * was made (or, on request, as they stand when it is answered).
 */
function scriptedFeedStore() {
  const rows: Row[] = [];
  const pending: PendingRead[] = [];
  /** afterId of every bidsAfter read, in the order they were made. */
  const catchUpReads: number[] = [];

  function viewOf(snapshot: Row[], afterId: number, limit: number, newestFirst: boolean): AuctionView {
    const visible = snapshot.filter((row) => !row.hidden).map((row) => row.bid);
    const above = visible.filter((row) => row.id > afterId);
    const listed = newestFirst ? above.reverse().slice(0, limit) : above.slice(0, limit);
    return endlessRoundView(listed, visible, snapshot.at(-1)?.bid.id ?? 0);
  }

  function waitForAnswer(kind: PendingRead["kind"], afterId: number, limit: number): Promise<AuctionView> {
    return new Promise((resolve, reject) => {
      pending.push({ kind, afterId, limit, rowsAtCall: [...rows], resolve, reject });
    });
  }

  const scripted = scriptedStore({
    view: (limit) => waitForAnswer("view", 0, limit),
    bidsAfter: (afterId, limit) => {
      catchUpReads.push(afterId);
      return waitForAnswer("bidsAfter", afterId, limit);
    },
  });

  function takeRead(): PendingRead {
    const read = pending.shift();
    if (!read) throw new Error("no read is waiting for an answer");
    return read;
  }

  return {
    store: scripted.store,
    catchUpReads,
    /** Commits the next bid (ids rise in commit order) and returns its id. */
    commit(options: { hidden?: boolean } = {}): number {
      const id = (rows.at(-1)?.bid.id ?? 0) + 1;
      rows.push({ bid: scriptedBid(id), hidden: options.hidden ?? false });
      return id;
    },
    notify(id: number) {
      scripted.notify({ bid: scriptedBid(id), bidders: id, moderation: 0, round: 1, endsAt: null });
    },
    setReady: scripted.setReady,
    get pendingReads(): readonly PendingRead[] {
      return pending;
    },
    get listeners(): number {
      return scripted.listeners;
    },
    /** Answers the oldest waiting read from its snapshot, or from the rows as they stand now. */
    async answerRead(snapshot: "at call" | "now" = "at call") {
      const read = takeRead();
      const source = snapshot === "now" ? [...rows] : read.rowsAtCall;
      read.resolve(viewOf(source, read.afterId, read.limit, read.kind === "view"));
      await nextTurn();
    },
    async failRead() {
      takeRead().reject(new Error("the database is away"));
      await nextTurn();
    },
  };
}

type Script = ReturnType<typeof scriptedFeedStore>;

/** A feed on the script that records what it hands on, and when each hook ran. */
function feedOn(script: Script) {
  const handedOn: number[] = [];
  const events: string[] = [];
  const feed = createNoticeFeed({
    store: script.store,
    logger: createLogger("silent"),
    onStart: (view) => events.push(`start at ${view.lastId}`),
    onCatchUpRead: (read) => events.push(`read ${read.bids.map((row) => row.id).join(",")}`),
    onBid: (notice) => {
      handedOn.push(notice.bid.id);
      events.push(`bid ${notice.bid.id}`);
    },
  });
  return { feed, handedOn, events };
}

/** Starts the feed and answers its opening read at once. */
async function startedFeed(script: Script) {
  const harness = feedOn(script);
  const started = harness.feed.start();
  await script.answerRead();
  await started;
  return harness;
}

// The retry waits on setTimeout: every test here steps it by hand.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A feed started after bid 1, then an outage during which bid 2 was committed, unheard, and the
 * store back: the catch-up read waits for its answer.
 */
async function feedCatchingUpOnBid2() {
  const script = scriptedFeedStore();
  script.commit();
  const harness = await startedFeed(script);
  script.setReady(false);
  script.commit();
  script.setReady(true);
  return { script, ...harness };
}

describe("the notice feed", () => {
  it("hands on each bid after its opening read once, in id order, and drops duplicates and stale ones", async () => {
    const script = scriptedFeedStore();
    script.commit();
    script.commit();
    const { feed, handedOn, events } = await startedFeed(script);

    const third = script.commit();
    script.notify(third);
    script.notify(third);
    script.notify(2); // already covered by the opening read
    const fourth = script.commit();
    script.notify(fourth);
    expect(handedOn).toEqual([3, 4]);
    expect(events).toEqual(["start at 2", "bid 3", "bid 4"]);
    expect(script.catchUpReads).toEqual([]);
    feed.stop();
  });

  it("queues the notifications that arrive during its opening read and flushes those above it, in id order", async () => {
    const script = scriptedFeedStore();
    script.commit();
    const { feed, handedOn, events } = feedOn(script);
    const started = feed.start();

    const second = script.commit();
    const third = script.commit();
    script.notify(third);
    script.notify(second);
    script.notify(1); // committed before the read: it covers it
    expect(handedOn).toEqual([]);
    await script.answerRead();
    await started;
    expect(handedOn).toEqual([2, 3]);
    expect(events).toEqual(["start at 1", "bid 2", "bid 3"]);
    feed.stop();
  });

  it("catches up after an outage: the bids committed meanwhile, then the queued notifications, each once", async () => {
    const script = scriptedFeedStore();
    script.commit();
    const { feed, handedOn, events } = await startedFeed(script);

    script.setReady(false);
    script.commit(); // placed through other instances while this one was not listening
    script.commit();
    script.commit();
    const fifth = script.commit();
    script.notify(fifth); // read together with the LISTEN reply, before ready(true)
    script.setReady(true);
    expect(script.catchUpReads).toEqual([1]);

    // During the catch-up read: new bids and a duplicate wait behind it.
    const sixth = script.commit();
    script.notify(sixth);
    script.notify(fifth);
    expect(handedOn).toEqual([]);
    await script.answerRead();
    expect(handedOn).toEqual([2, 3, 4, 5, 6]);
    expect(events.slice(1, 3)).toEqual(["read 2,3,4,5", "bid 2"]);

    const seventh = script.commit();
    script.notify(seventh);
    expect(handedOn).toEqual([2, 3, 4, 5, 6, 7]);
    expect(script.pendingReads).toHaveLength(0);
    feed.stop();
  });

  it(`reads a long outage in pages of ${RESUME_LIMIT}, gapless, stepping over hidden bids`, async () => {
    const script = scriptedFeedStore();
    script.commit();
    const { feed, handedOn } = await startedFeed(script);

    script.setReady(false);
    const visible: number[] = [];
    for (let index = 0; index < 2_300; index++) {
      const hidden = index % 10 === 9;
      const id = script.commit({ hidden });
      if (!hidden) visible.push(id);
    }
    const lastHidden = script.commit({ hidden: true });
    script.notify(lastHidden); // heard before it was hidden, queued behind the catch-up
    script.setReady(true);
    for (let page = 0; page < 5 && script.pendingReads.length > 0; page++) await script.answerRead();
    // Each page reads on from the last bid of the one before: none of the 2,070 visible is skipped.
    expect(script.catchUpReads).toEqual([1, visible[RESUME_LIMIT - 1], visible[2 * RESUME_LIMIT - 1]]);
    expect(handedOn).toEqual(visible);

    const next = script.commit();
    script.notify(next);
    expect(handedOn.at(-1)).toBe(next);
    expect(handedOn).toHaveLength(visible.length + 1);
    feed.stop();
  });

  it("steps over the bids a catch-up read leaves out: a hidden bid's queued notification is not handed on", async () => {
    const script = scriptedFeedStore();
    script.commit();
    const { feed, handedOn } = await startedFeed(script);

    script.setReady(false);
    script.commit({ hidden: true });
    const hidden = script.commit({ hidden: true });
    script.notify(hidden); // heard before it was hidden, queued behind the catch-up
    script.setReady(true);
    await script.answerRead();
    expect(handedOn).toEqual([]);
    const next = script.commit();
    script.notify(next);
    expect(handedOn).toEqual([next]);
    expect(script.catchUpReads).toEqual([1]);
    feed.stop();
  });

  it("keeps holding the queue when the store goes down again during the catch-up read, until the next one", async () => {
    const { script, feed, handedOn } = await feedCatchingUpOnBid2();
    script.setReady(false); // the pool still answers the read, LISTEN is lost again
    script.commit(); // unheard
    const fourth = script.commit();
    script.notify(fourth); // LISTEN back, ready not yet reported
    await script.answerRead();
    expect(handedOn).toEqual([2]);
    expect(script.pendingReads).toHaveLength(0);

    script.setReady(true);
    expect(script.catchUpReads).toEqual([1, 2]);
    await script.answerRead();
    expect(handedOn).toEqual([2, 3, 4]);
    feed.stop();
  });

  it("reads again before flushing when the store was lost and back during the catch-up read", async () => {
    const { script, feed, handedOn } = await feedCatchingUpOnBid2();
    script.setReady(false);
    script.commit(); // unheard, after the first read's snapshot
    script.setReady(true);
    const fourth = script.commit();
    script.notify(fourth);
    await script.answerRead();
    expect(handedOn).toEqual([2]);
    expect(script.catchUpReads).toEqual([1, 2]);
    await script.answerRead();
    expect(handedOn).toEqual([2, 3, 4]);
    feed.stop();
  });

  it(`holds the queue through a failed catch-up read and retries after ${RETRY_MS} ms`, async () => {
    const { script, feed, handedOn } = await feedCatchingUpOnBid2();
    const third = script.commit();
    script.notify(third);
    await script.failRead();
    expect(handedOn).toEqual([]);
    expect(script.pendingReads).toHaveLength(0);

    vi.advanceTimersByTime(RETRY_MS - 1);
    expect(script.pendingReads).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(script.catchUpReads).toEqual([1, 1]);
    await script.answerRead();
    expect(handedOn).toEqual([2, 3]);
    feed.stop();
  });

  it("catches up at once on a ready event while a retry waits, and drops that retry", async () => {
    const { script, feed, handedOn } = await feedCatchingUpOnBid2();
    await script.failRead();
    script.setReady(false);
    script.setReady(true);
    expect(script.catchUpReads).toEqual([1, 1]);
    await script.answerRead();
    expect(handedOn).toEqual([2]);

    vi.advanceTimersByTime(RETRY_MS);
    expect(script.catchUpReads).toEqual([1, 1]);
    feed.stop();
  });

  it("started while the store is down, it hands on nothing until the store is ready and it has caught up", async () => {
    const script = scriptedFeedStore();
    script.commit();
    script.setReady(false);
    const { feed, handedOn, events } = await startedFeed(script);

    script.commit();
    const third = script.commit();
    script.notify(third);
    expect(handedOn).toEqual([]);
    script.setReady(true);
    await script.answerRead();
    expect(handedOn).toEqual([2, 3]);
    expect(events).toEqual(["start at 1", "read 2,3", "bid 2", "bid 3"]);
    feed.stop();
  });

  it("rejects start when the opening read fails", async () => {
    const script = scriptedFeedStore();
    const { feed } = feedOn(script);
    const rejected = expect(feed.start()).rejects.toThrow("the database is away");
    await script.failRead();
    await rejected;
    feed.stop();
  });

  it("hands on nothing after stop, not what a read in flight brings back, and drops a pending retry", async () => {
    const first = await feedCatchingUpOnBid2();
    const { script } = first;
    first.feed.stop();
    expect(script.listeners).toBe(0);
    await script.answerRead();
    expect(first.handedOn).toEqual([]);

    const second = await startedFeed(script);
    script.setReady(false);
    script.commit();
    script.setReady(true);
    await script.failRead();
    second.feed.stop();
    vi.advanceTimersByTime(RETRY_MS);
    expect(script.pendingReads).toHaveLength(0);
    expect(second.handedOn).toEqual([]);
  });
});

/**
 * One step of a generated schedule. "lose" drops LISTEN and the notifications still on their way,
 * then reports the outage; "relisten" gets LISTEN back (notifications flow, readiness not yet
 * reported); "ready" reports it. Notifications travel in commit order and arrive when the schedule
 * says; a step that does not apply in the current state does nothing.
 */
type Step =
  | { kind: "commit" }
  | { kind: "arrive"; count: number }
  | { kind: "repeat" }
  | { kind: "lose" }
  | { kind: "relisten" }
  | { kind: "ready" }
  | { kind: "answer"; snapshot: "at call" | "now" }
  | { kind: "fail" }
  | { kind: "tick" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "commit" } as const) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 3 }).map((count) => ({ kind: "arrive", count }) as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "repeat" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "lose" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "relisten" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "ready" } as const) },
  {
    weight: 3,
    arbitrary: fc.constantFrom("at call", "now").map((snapshot) => ({ kind: "answer", snapshot }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "fail" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "tick" } as const) },
);

/** The world around the feed: whether LISTEN is up, whether the store reported ready, what is on the wire. */
function world(script: Script, startedDown: boolean) {
  let listening = !startedDown;
  let up = !startedDown;
  const wire: number[] = [];
  let lastArrived: number | null = null;
  const committed: number[] = [];

  function arrive(count: number): void {
    for (const id of wire.splice(0, count)) {
      lastArrived = id;
      script.notify(id);
    }
  }

  return {
    committed,
    get quiet() {
      return up && wire.length === 0 && script.pendingReads.length === 0 && vi.getTimerCount() === 0;
    },
    async run(next: Step): Promise<void> {
      switch (next.kind) {
        case "commit": {
          const id = script.commit();
          committed.push(id);
          if (listening) wire.push(id);
          break;
        }
        case "arrive":
          arrive(next.count);
          break;
        case "repeat":
          if (lastArrived !== null) script.notify(lastArrived);
          break;
        case "lose":
          if (!up) break;
          listening = false;
          up = false;
          wire.length = 0;
          script.setReady(false);
          break;
        case "relisten":
          if (!up) listening = true;
          break;
        case "ready":
          if (up || !listening) break;
          up = true;
          script.setReady(true);
          break;
        case "answer":
          if (script.pendingReads.length > 0) await script.answerRead(next.snapshot);
          break;
        case "fail":
          if (script.pendingReads.length > 0) await script.failRead();
          break;
        case "tick":
          vi.advanceTimersByTime(RETRY_MS);
          break;
      }
      await nextTurn();
    },
    /** Brings everything to rest: the store up, every notification arrived, every read answered. */
    async settle(): Promise<void> {
      for (let round = 0; round < 20 && !this.quiet; round++) {
        await this.run({ kind: "relisten" });
        await this.run({ kind: "ready" });
        arrive(wire.length);
        for (let read = 0; read < 10 && script.pendingReads.length > 0; read++) await script.answerRead();
        vi.advanceTimersByTime(RETRY_MS);
        await nextTurn();
      }
    },
  };
}

describe("the notice feed over generated schedules", () => {
  it("always hands on a gapless prefix of the bids committed after its start, and at rest all of them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.array(step, { maxLength: 80, size: "max" }),
        async (before, startedDown, steps) => {
          const script = scriptedFeedStore();
          for (let index = 0; index < before; index++) script.commit();
          if (startedDown) script.setReady(false);
          const { feed, handedOn } = await startedFeed(script);
          const around = world(script, startedDown);
          try {
            for (const next of steps) {
              await around.run(next);
              expect(handedOn).toEqual(around.committed.slice(0, handedOn.length));
            }
            await around.settle();
            expect(around.quiet).toBe(true);
            expect(handedOn).toEqual(around.committed);
          } finally {
            // A failed run's retry timer must not count in the next run's quiet (while shrinking).
            feed.stop();
          }
        },
      ),
      seededRuns(20_261_124, 1_000),
    );
  });
});
