/**
 * The resync (service/auction/resync.ts) on its own: after a moderation action or a round's end,
 * every live socket is put on hold and gets one list of the auction as it now stands, read after it
 * was held (docs/design.md#7). Over a scripted store whose notifications the test sends and whose
 * reads wait until the test answers them (as of when they were made, or as the test says), and
 * fake sockets that record the lists they get and complain of one sent to a socket not on hold.
 * The retry runs on fake timers. The property's seed is fixed and printed; FC_SEED=<n> runs another.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import fc from "fast-check";
import { beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { createKnownStanding } from "../../service/auction/knownStanding.ts";
import { readOpening } from "../../service/auction/opening.ts";
import { createResync, type ResyncSockets } from "../../service/auction/resync.ts";
import { isBehind, type Standing } from "../../service/auction/standing.ts";
import { createCoalescer } from "../../service/coalescedReads.ts";
import { createLogger } from "../../service/logger.ts";
import {
  type AuctionView,
  type BidStore,
  ENDLESS_ROUNDS,
  type ModerationNotice,
  type RoundClosedNotice,
} from "../../service/storage/types.ts";
import { SNAPSHOT_SIZE, type StateMessage } from "../../src/lib/auction/protocol.ts";
import { pendingReads } from "../harness/pendingReads.ts";

const SEED = Number(process.env.FC_SEED ?? 20_261_125);
const RUNS = 500;
const RETRY_MS = 1_000;

/** What a read saw of the auction; the rest is as in a fresh endless round 1. */
interface Seen {
  moderation?: number;
  round?: number;
  closed?: boolean;
  lastId?: number;
  highestCents?: number | null;
  blockedKeys?: string[];
}

function viewOf(seen: Seen = {}): AuctionView {
  const lastId = seen.lastId ?? 0;
  const cents = seen.highestCents ?? null;
  const highest =
    cents === null
      ? null
      : { id: lastId, bidderName: "high", amountCents: cents, createdAt: new Date(0).toISOString() };
  return {
    bids: highest ? [highest] : [],
    highest,
    bidders: highest ? 1 : 0,
    moderation: seen.moderation ?? 0,
    lastId,
    blockedKeys: seen.blockedKeys ?? [],
    round: { number: seen.round ?? 1, endsAt: null, closed: seen.closed ?? false },
    pastWinners: [],
    now: "2026-11-21T12:00:00.000Z",
  };
}

interface ReadCall {
  limit: number;
  /** What the auction was when the read was made (a query's snapshot). */
  seenAtCall: Seen;
}

/**
 * A store with only what the resync may use; anything else it touches throws. `auction` is what a
 * read made now would see; notifications are sent by the test.
 */
function scriptedStore() {
  const moderationListeners = new Set<(notice: ModerationNotice) => void>();
  const roundListeners = new Set<(notice: RoundClosedNotice) => void>();
  const reads = pendingReads<AuctionView, ReadCall>();
  const auction: Required<Pick<Seen, "moderation" | "round" | "closed">> = { moderation: 0, round: 1, closed: false };
  const used: Pick<BidStore, "rounds" | "view" | "onModeration" | "onRoundClosed"> = {
    rounds: ENDLESS_ROUNDS,
    view: (limit) => reads.wait({ limit, seenAtCall: { ...auction } }),
    onModeration(listener) {
      moderationListeners.add(listener);
      return () => moderationListeners.delete(listener);
    },
    onRoundClosed(listener) {
      roundListeners.add(listener);
      return () => roundListeners.delete(listener);
    },
  };
  const store = new Proxy(used, {
    get(target, key) {
      if (key in target) return target[key as keyof typeof target];
      throw new Error(`the resync does not use store.${String(key)}`);
    },
  }) as BidStore;

  return {
    store,
    auction,
    get pendingReads(): readonly ReadCall[] {
      return reads.waiting;
    },
    /** Listeners still subscribed. */
    get listening(): number {
      return moderationListeners.size + roundListeners.size;
    },
    /** An operator's action (on any instance), committed and notified. */
    moderate() {
      auction.moderation++;
      for (const listener of moderationListeners) listener({ moderation: auction.moderation });
    },
    /** The current round's end, committed and notified. */
    closeRound() {
      auction.closed = true;
      for (const listener of roundListeners) listener({ round: auction.round, moderation: auction.moderation });
    },
    /** Answers the oldest waiting read with what it saw when made, or with `seen`. */
    answerRead: (seen?: Seen) => reads.answer((call) => viewOf(seen ?? call.seenAtCall)),
    failRead: () => reads.fail(),
  };
}

type Script = ReturnType<typeof scriptedStore>;
type SocketState = "opening" | "live" | "held";

/**
 * Sockets as the broadcaster keeps them, by name: each list they get is recorded as
 * "name: type m<moderation> r<round>[ ended] to <coveredId>".
 */
function fakeSockets() {
  const states = new Map<string, SocketState>();
  const lists: string[] = [];
  const side: ResyncSockets<string> = {
    holdLive() {
      const live = [...states].filter(([, state]) => state === "live").map(([name]) => name);
      for (const name of live) states.set(name, "held");
      return live;
    },
    holdIfLive(name) {
      if (states.get(name) !== "live") return false;
      states.set(name, "held");
      return true;
    },
    replaceList(name, list, coveredId) {
      if (states.get(name) !== "held") lists.push(`${name}: a list while ${states.get(name) ?? "gone"}`);
      const message = JSON.parse(String(list)) as StateMessage;
      const { number, ended } = message.round;
      lists.push(`${name}: ${message.type} m${message.moderation} r${number}${ended ? " ended" : ""} to ${coveredId}`);
      states.set(name, "live");
    },
  };
  return { side, states, lists };
}

interface HarnessOptions {
  /** A store already scripted (another resync listened on it before); a fresh one otherwise. */
  script?: Script;
  /** Where the auction stood when the instance started. */
  start?: Seen;
  /** Sockets live from the start. */
  live?: string[];
  /** Reads through a real coalescer, as the service shares them with the openings; else each at once. */
  coalesce?: "shared";
}

/** A resync listening on a scripted store, stopped when the test ends. */
function resyncOn(options: HarnessOptions = {}) {
  const script = options.script ?? scriptedStore();
  const sockets = fakeSockets();
  const known = createKnownStanding();
  const coalesce = options.coalesce === "shared" ? createCoalescer() : undefined;
  const resync = createResync({
    store: script.store,
    logger: createLogger("silent"),
    known,
    coalesce: coalesce ?? ((_key, read) => read()),
    sockets: sockets.side,
  });
  onTestFinished(() => resync.stop());
  resync.listen();
  resync.observeStart(viewOf(options.start ?? {}));
  for (const name of options.live ?? []) sockets.states.set(name, "live");
  return {
    script,
    resync,
    known,
    coalesce,
    states: sockets.states,
    lists: sockets.lists,
    /** A socket whose opening (reflecting `standing`) was just sent, as the broadcaster's goLive. */
    goLive(name: string, standing: Standing) {
      sockets.states.set(name, "live");
      resync.afterOpening(name, standing);
    },
    /** A socket gone (closed or dropped), as the broadcaster's forget. */
    close(name: string) {
      sockets.states.delete(name);
      resync.forget(name);
    },
  };
}

// The retry's timer is faked; setImmediate stays real (nextTurn).
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  return () => vi.useRealTimers();
});

describe("the resync", () => {
  it("sends every live socket one moderated list, read after they were held, and leaves opening sockets alone", async () => {
    const { script, resync, states, lists } = resyncOn({ start: { lastId: 3 }, live: ["a", "b"] });
    states.set("c", "opening");
    await nextTurn();
    expect(script.pendingReads).toHaveLength(0);

    script.moderate();
    expect([...states]).toEqual([
      ["a", "held"],
      ["b", "held"],
      ["c", "opening"],
    ]);
    expect(script.pendingReads.map((read) => read.limit)).toEqual([SNAPSHOT_SIZE]);
    await script.answerRead({ moderation: 1, lastId: 5 });
    expect(lists).toEqual(["a: moderated m1 r1 to 5", "b: moderated m1 r1 to 5"]);
    expect(states.get("a")).toBe("live");

    // The same version again (another listener's echo) is no news.
    resync.observeStanding({ moderation: 1, round: 1, roundClosed: false });
    expect(script.pendingReads).toHaveLength(0);
    expect(states.get("a")).toBe("live");
  });

  it("says roundEnded when a round's end is in the list, even with an action, then moderated again", async () => {
    const { script, lists } = resyncOn({ live: ["a"] });

    script.moderate();
    script.closeRound(); // before the read is answered: the same list covers both
    await script.answerRead({ moderation: 1, closed: true });
    script.moderate();
    await script.answerRead();
    expect(lists).toEqual(["a: roundEnded m1 r1 ended to 0", "a: moderated m2 r1 ended to 0"]);
    expect(script.pendingReads).toHaveLength(0);
  });

  it("lets the bid that opens the round after an end heard through, and resyncs on a round whose end was not heard", async () => {
    const { script, resync, lists } = resyncOn({ start: { round: 0 }, live: ["a"] });

    resync.observeBidRound(1); // round 1's first bid, after none: no news
    resync.observeBidRound(1);
    script.closeRound();
    await script.answerRead({ round: 1, closed: true });
    resync.observeBidRound(2); // the round after the end heard: its round number tells the page
    expect(script.pendingReads).toHaveLength(0);
    resync.observeBidRound(4); // rounds 2 and 3 ended unheard (an outage): the whole state
    await script.answerRead({ round: 4, lastId: 9 });
    expect(lists).toEqual(["a: roundEnded m0 r1 ended to 0", "a: roundEnded m0 r4 to 9"]);
  });

  it("resyncs on a catch-up read's standing only when it is newer than what was heard", async () => {
    const { script, resync, lists } = resyncOn({ start: { moderation: 2, round: 3 }, live: ["a"] });

    resync.observeStanding({ moderation: 1, round: 3, roundClosed: false });
    resync.observeStanding({ moderation: 2, round: 2, roundClosed: true });
    expect(script.pendingReads).toHaveLength(0);
    resync.observeStanding({ moderation: 4, round: 3, roundClosed: false });
    await script.answerRead({ moderation: 4, round: 3 });
    resync.observeStanding({ moderation: 4, round: 3, roundClosed: true });
    await script.answerRead({ moderation: 4, round: 3, closed: true });
    expect(lists).toEqual(["a: moderated m4 r3 to 0", "a: roundEnded m4 r3 ended to 0"]);
  });

  it("sends another list when an action is heard while the list is read, and none when the read already has it", async () => {
    const { script, lists } = resyncOn({ live: ["a"] });

    script.moderate();
    script.moderate(); // committed after the read's snapshot
    await script.answerRead({ moderation: 1 });
    expect(lists).toEqual(["a: moderated m1 r1 to 0"]);
    expect(script.pendingReads).toHaveLength(1);
    await script.answerRead({ moderation: 2 });

    script.moderate();
    script.moderate(); // committed before the read's snapshot
    await script.answerRead({ moderation: 4 });
    expect(lists).toEqual(["a: moderated m1 r1 to 0", "a: moderated m2 r1 to 0", "a: moderated m4 r1 to 0"]);
    expect(script.pendingReads).toHaveLength(0);
  });

  it("resyncs a socket whose opening is behind what was heard, with the next read, not the one running", async () => {
    const { script, states, lists, goLive } = resyncOn({ live: ["a"] });

    script.moderate();
    expect(script.pendingReads).toHaveLength(1);
    goLive("b", { moderation: 0, round: 1, roundClosed: false }); // read before the action
    goLive("c", { moderation: 1, round: 1, roundClosed: false }); // already has it
    expect(states.get("b")).toBe("held");
    expect(states.get("c")).toBe("live");
    await script.answerRead({ moderation: 1, lastId: 4 });
    // The read that ran had started before b was held: b waits for the next one.
    expect(lists).toEqual(["a: moderated m1 r1 to 4"]);
    expect(script.pendingReads).toHaveLength(1);
    await script.answerRead({ moderation: 1, lastId: 6 });
    expect(lists).toEqual(["a: moderated m1 r1 to 4", "b: moderated m1 r1 to 6"]);
    expect(script.pendingReads).toHaveLength(0);
  });

  it(`retries a failed read after ${RETRY_MS} ms with the same sockets on hold, skipping those gone`, async () => {
    const { script, states, lists, close } = resyncOn({ live: ["a", "b", "c"] });

    script.moderate();
    await script.failRead();
    expect(lists).toEqual([]);
    expect(states.get("a")).toBe("held");
    close("b");
    vi.advanceTimersByTime(RETRY_MS - 1);
    await nextTurn();
    expect(script.pendingReads).toHaveLength(0);
    vi.advanceTimersByTime(1);
    await nextTurn();
    expect(script.pendingReads).toHaveLength(1);
    close("c"); // gone while the retried read runs
    await script.answerRead({ moderation: 1 });
    expect(lists).toEqual(["a: moderated m1 r1 to 0"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("feeds known with each list read: the highest of an open round and the blocked names", async () => {
    const { script, known } = resyncOn({ start: { highestCents: 500, blockedKeys: ["eve"] }, live: ["a"] });
    expect(known.highestCents()).toBe(500);
    expect(known.isBlocked("eve")).toBe(true);

    script.moderate();
    expect(known.highestCents()).toBeNull(); // unknown since the action: no quick refusal
    await script.answerRead({ moderation: 1, highestCents: 300, blockedKeys: ["mallory"] });
    expect(known.highestCents()).toBe(300);
    expect(known.isBlocked("eve")).toBe(false);
    expect(known.isBlocked("mallory")).toBe(true);

    script.closeRound();
    await script.answerRead({ moderation: 1, closed: true, highestCents: 300 });
    expect(known.highestCents()).toBeNull(); // the next round has no bid yet
  });

  it("shares its read with the openings made at the same moment", async () => {
    const { script, lists, coalesce } = resyncOn({ coalesce: "shared", live: ["a"] });

    script.moderate();
    const opening = readOpening(script.store, null, coalesce);
    await nextTurn();
    expect(script.pendingReads).toHaveLength(1);
    await script.answerRead();
    expect((await opening).message.type).toBe("snapshot");
    expect(lists).toEqual(["a: moderated m1 r1 to 0"]);
  });

  it("once stopped, listens no more and sends nothing, neither from a read in flight nor after a retry", async () => {
    const first = resyncOn({ live: ["a"] });
    const { script } = first;
    script.moderate();
    first.resync.stop();
    expect(script.listening).toBe(0);
    await script.answerRead();
    expect(first.lists).toEqual([]);

    const second = resyncOn({ script, start: { moderation: 1 }, live: ["a"] });
    script.moderate();
    await script.failRead();
    second.resync.stop();
    vi.advanceTimersByTime(RETRY_MS);
    await nextTurn();
    expect(script.pendingReads).toHaveLength(0);
    expect(second.lists).toEqual([]);
  });
});

// ---- Generated schedules ----

type Step =
  | { kind: "open"; socket: number; age: number }
  | { kind: "close"; socket: number }
  | { kind: "moderate" }
  | { kind: "closeRound" }
  /** A bid, in a round `unheardEnds` ends past the last one heard of (lost notifications). */
  | { kind: "bid"; unheardEnds: number }
  /** The oldest read waiting answered as of when it was made, or as of now, or failed. */
  | { kind: "read"; outcome: "as made" | "as now" | "failed" }
  | { kind: "tick" };

const SOCKETS = 4;
const socketIndex = fc.integer({ min: 0, max: SOCKETS - 1 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("open" as const), socket: socketIndex, age: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const), socket: socketIndex }) },
  { weight: 2, arbitrary: fc.constant({ kind: "moderate" } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: "closeRound" } as const) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("bid" as const), unheardEnds: fc.oneof(fc.constant(0), fc.nat(2)) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      outcome: fc.constantFrom("as made" as const, "as now" as const, "failed" as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "tick" } as const) },
);

/** The auction as a standing, as a read made now would see it. */
function standingNow(script: Script): Standing {
  const { moderation, round, closed } = script.auction;
  return { moderation, round, roundClosed: closed };
}

function standingOfList(list: string): Standing {
  const [, moderation, round, ended] = /m(\d+) r(\d+)( ended)? /.exec(list) ?? [];
  return { moderation: Number(moderation), round: Number(round), roundClosed: ended !== undefined };
}

describe("the resync over generated schedules", () => {
  it("reads one list at a time, sends lists only to sockets on hold, and at rest leaves none behind", async () => {
    console.info(`fast-check seed ${SEED} (FC_SEED=${SEED} to replay), ${RUNS} runs`);
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60, size: "max" }), async (steps) => {
        const harness = resyncOn();
        const { script } = harness;
        /** What each socket's page shows: its opening's standing, then its last list's. */
        const shows = new Map<string, Standing>();
        const history: Standing[] = [standingNow(script)];
        let listsSeen = 0;
        const record = () => {
          for (const list of harness.lists.slice(listsSeen))
            shows.set(list.split(":")[0] as string, standingOfList(list));
          listsSeen = harness.lists.length;
        };
        const run = async (next: Step) => {
          switch (next.kind) {
            case "open": {
              const name = `s${next.socket}`;
              if (harness.states.has(name)) break;
              // Its opening was read a few changes ago, or now.
              const opening = history[Math.max(0, history.length - 1 - next.age)] as Standing;
              shows.set(name, opening);
              harness.goLive(name, opening);
              break;
            }
            case "close":
              harness.close(`s${next.socket}`);
              shows.delete(`s${next.socket}`);
              break;
            case "moderate":
              script.moderate();
              break;
            case "closeRound":
              if (!script.auction.closed) script.closeRound();
              break;
            case "bid": {
              const { auction } = script;
              // The round after an end heard opens with this bid; each end unheard skips one more.
              const round = auction.round + (auction.closed ? 1 : 0) + next.unheardEnds;
              Object.assign(auction, { round, closed: false });
              harness.resync.observeBidRound(round);
              // Broadcast to every page (held for those on hold): a later round's bid begins its new list.
              for (const [name, shown] of shows) {
                if (shown.round < round) shows.set(name, { ...shown, round, roundClosed: false });
              }
              break;
            }
            case "read":
              if (script.pendingReads.length === 0) break;
              if (next.outcome === "failed") await script.failRead();
              else await script.answerRead(next.outcome === "as now" ? { ...script.auction } : undefined);
              break;
            case "tick":
              vi.advanceTimersByTime(RETRY_MS);
              break;
          }
          await nextTurn();
          record();
          history.push(standingNow(script));
          expect(script.pendingReads.length).toBeLessThanOrEqual(1);
        };
        try {
          for (const next of steps) await run(next);
          for (let turn = 0; turn < 20 && (script.pendingReads.length > 0 || vi.getTimerCount() > 0); turn++) {
            await run(script.pendingReads.length > 0 ? { kind: "read", outcome: "as made" } : { kind: "tick" });
          }
          expect(script.pendingReads).toHaveLength(0);
          expect(harness.lists.filter((list) => list.includes("a list while"))).toEqual([]);
          for (const [name, state] of harness.states) {
            expect(state).toBe("live");
            expect(isBehind(shows.get(name) as Standing, standingNow(script))).toBe(false);
          }
        } finally {
          // A failed run's retry timer must not count in the next run's rest (while shrinking).
          harness.resync.stop();
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
