/**
 * The frame budget for the bids a socket is sent (service/auction/conflation.ts,
 * docs/design.md#10), on fake timers: when frames leave, what they carry, and that a socket whose
 * last frame is still in the process waits for it.
 */
import { describe, expect, it, vi } from "vitest";
import {
  type Conflation,
  createConflation,
  FRENZY_INTERVALS,
  type PacedSocket,
  type PassReport,
  pausedSocket,
  realPacingClock,
} from "../../service/auction/conflation.ts";
import {
  type BidMessage,
  type BidsMessage,
  parseServerMessage,
  SNAPSHOT_SIZE,
} from "../../src/lib/auction/protocol.ts";
import { fakePacingTimersForEachTest } from "../harness/fakePacingTimers.ts";
import { scriptedBid } from "../harness/scriptedStore.ts";
import { textFramePayload } from "../harness/textFrames.ts";

type BidFrame = BidMessage | BidsMessage;

interface TestSocket extends PacedSocket {
  name: string;
  frames: BidFrame[];
  /** The prebuilt frames as written, to tell shared ones apart. */
  wires: Buffer[];
  /** When each frame was written (the fake clock). */
  sentAt: number[];
  backlogged: boolean;
  open: boolean;
}

function testSocket(name: string): TestSocket {
  return { ...pausedSocket(), name, frames: [], wires: [], sentAt: [], backlogged: false, open: true };
}

/** Every id a socket was sent, in order, across its frames. */
const idsOf = (socket: TestSocket) =>
  socket.frames.flatMap((frame) => (frame.type === "bid" ? [frame.bid.id] : frame.bids.map((bid) => bid.id)));

const notice = (id: number, round = 1, endsAt: string | null = null) => ({
  bid: scriptedBid(id),
  bidders: id,
  moderation: 0,
  round,
  endsAt,
});

let passes: PassReport[];

function conflationOf(maxFramesPerSecond: number): Conflation<TestSocket> {
  passes = [];
  return createConflation<TestSocket>({
    maxFramesPerSecond,
    clock: realPacingClock,
    write(socket, wire) {
      if (!socket.open) return false;
      const parsed = parseServerMessage(textFramePayload(wire));
      if (!parsed.ok) throw new Error(`a frame the protocol refuses: ${parsed.reason}`);
      if (parsed.message.type !== "bid" && parsed.message.type !== "bids") throw new Error("not a bid frame");
      socket.frames.push(parsed.message);
      socket.wires.push(wire);
      socket.sentAt.push(performance.now());
      return true;
    },
    isBacklogged: (socket) => socket.backlogged,
    onPass: (pass) => passes.push(pass),
  });
}

/** The socket live after an opening that covered ids up to `coveredId`, past its first interval. */
function liveSocket(conflation: Conflation<TestSocket>, name: string, coveredId = 0, intervalMs = 50) {
  const socket = testSocket(name);
  socket.lastSentId = coveredId;
  conflation.live(socket);
  vi.advanceTimersByTime(intervalMs);
  return socket;
}

/** The end of the current turn of the event loop: the turn's bids leave to the ready sockets. */
const endTurn = () => vi.advanceTimersByTime(0);

fakePacingTimersForEachTest();

describe("the frame budget for bids sent", () => {
  it("sends a lone bid at the end of its turn as its own bid frame, one frame shared by the sockets in step", () => {
    const conflation = conflationOf(20);
    const [a, b] = [liveSocket(conflation, "a"), liveSocket(conflation, "b")];
    conflation.add(notice(1), performance.now());
    expect(a.frames).toEqual([]);
    endTurn();
    expect(a.frames).toEqual([
      {
        type: "bid",
        bid: { ...scriptedBid(1), createdAt: scriptedBid(1).createdAt },
        bidders: 1,
        round: 1,
        endsAt: null,
      },
    ]);
    expect(b.frames).toEqual(a.frames);
    expect(b.wires[0]).toBe(a.wires[0]);
    expect(passes).toEqual([{ single: 2, conflated: 0, longestWaitMs: 0 }]);
  });

  it("sends the bids of one turn to a ready socket as one bids frame, oldest first, with the newest's standing", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    for (const id of [1, 2, 3]) conflation.add(notice(id, 1, `2026-11-21T13:00:0${id}.000Z`), performance.now());
    endTurn();
    expect(socket.frames).toEqual([
      {
        type: "bids",
        lastId: 3,
        bidders: 3,
        round: 1,
        endsAt: "2026-11-21T13:00:03.000Z",
        bids: [1, 2, 3].map(scriptedBid),
      },
    ]);
    // lastId leads the frame, so a reader finds it without reading the list.
    expect(textFramePayload(socket.wires[0] as Buffer).startsWith('{"type":"bids","lastId":3,')).toBe(true);
  });

  it("holds the bids that come within an interval of the last frame and sends them together when it is up", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    conflation.add(notice(1), performance.now());
    endTurn();
    vi.advanceTimersByTime(10);
    conflation.add(notice(2), performance.now());
    endTurn();
    vi.advanceTimersByTime(10);
    conflation.add(notice(3), performance.now());
    vi.advanceTimersByTime(29);
    expect(idsOf(socket)).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(socket.frames.map((frame) => frame.type)).toEqual(["bid", "bids"]);
    expect(idsOf(socket)).toEqual([1, 2, 3]);
    expect(socket.sentAt).toEqual([socket.sentAt[0], (socket.sentAt[0] as number) + 50]);
    // The oldest bid of the pass waited from 10 ms to 50 ms.
    expect(passes.at(-1)).toEqual({ single: 0, conflated: 1, longestWaitMs: 40 });
    // The bids came faster than the budget: after that frame the socket waits two intervals, and
    // one bid waiting then leaves as its own frame.
    vi.advanceTimersByTime(5);
    conflation.add(notice(4), performance.now());
    vi.advanceTimersByTime(94);
    expect(idsOf(socket)).toEqual([1, 2, 3]);
    vi.advanceTimersByTime(1);
    expect(socket.frames.at(-1)).toMatchObject({ type: "bid", bid: { id: 4 } });
    expect(socket.sentAt.at(-1)).toBe((socket.sentAt[1] as number) + 50 * FRENZY_INTERVALS);
    // After a lone bid's frame one interval again: then the socket is ready, and the next bid goes at once.
    vi.advanceTimersByTime(50);
    conflation.add(notice(5), performance.now());
    endTurn();
    expect(socket.sentAt.at(-1)).toBe(performance.now());
  });

  it("paces a frenzy at half the budget, and a socket after a lone bid at the full budget, each in due order", () => {
    const conflation = conflationOf(20);
    // Bids 1 and 2 in one turn leave as a bids frame to the first socket; the second socket went
    // live 20 ms later and covered them, so bid 3 is a lone bid to it and a lone bid to the first.
    const frenzied = liveSocket(conflation, "frenzied");
    conflation.add(notice(1), performance.now());
    conflation.add(notice(2), performance.now());
    endTurn();
    vi.advanceTimersByTime(20);
    const calm = testSocket("calm");
    calm.lastSentId = 2;
    conflation.live(calm);
    const start = performance.now() - 20;
    conflation.add(notice(3), performance.now());
    endTurn();
    expect(frenzied.frames).toHaveLength(1);
    // The calm socket's opening counts as a frame: one interval, bid 3 at 70 ms; the frenzied
    // socket's wait is two intervals, bid 3 at 100 ms, after the calm one although it began first.
    vi.advanceTimersByTime(200);
    expect(calm.sentAt).toEqual([start + 70]);
    expect(frenzied.sentAt).toEqual([start, start + 100]);
    expect(idsOf(frenzied)).toEqual([1, 2, 3]);
    expect(idsOf(calm)).toEqual([3]);
  });

  it("never sends a socket more frames a second than the budget, however fast the bids come, and leaves none out", () => {
    for (const budget of [1, 7, 20, 60]) {
      const conflation = conflationOf(budget);
      const socket = liveSocket(conflation, "a", 0, 1000 / budget);
      // 6,000 bids over 3 s, 1 to 3 a millisecond.
      let id = 0;
      for (let ms = 0; ms < 3_000; ms++) {
        for (let count = 1 + (ms % 3); count > 0; count--) conflation.add(notice(++id), performance.now());
        vi.advanceTimersByTime(1);
      }
      vi.advanceTimersByTime(1_000);
      for (let index = budget; index < socket.sentAt.length; index++) {
        expect(
          (socket.sentAt[index] as number) - (socket.sentAt[index - budget] as number),
          `budget ${budget}`,
        ).toBeGreaterThanOrEqual(1000);
      }
      // And a frenzy's share of it is used: a frame every FRENZY_INTERVALS intervals, rounded up
      // to the timers' whole milliseconds, and never a longer wait.
      const frenzyMs = Math.ceil((FRENZY_INTERVALS * 1000) / budget);
      expect(socket.sentAt.length, `budget ${budget}`).toBeGreaterThanOrEqual(Math.floor(3_000 / frenzyMs));
      for (let index = 2; index < socket.sentAt.length; index++) {
        const gap = (socket.sentAt[index] as number) - (socket.sentAt[index - 1] as number);
        expect(gap, `budget ${budget}`).toBeLessThanOrEqual(frenzyMs);
      }
      expect(socket.frames.at(-1)).toMatchObject({ lastId: id });
      // Each frame carries every bid since the one before, or the newest SNAPSHOT_SIZE of them.
      let last = 0;
      for (const frame of socket.frames) {
        const ids = frame.type === "bid" ? [frame.bid.id] : frame.bids.map((bid) => bid.id);
        const since = (ids.at(-1) as number) - last;
        expect(ids).toEqual(
          Array.from(
            { length: Math.min(since, SNAPSHOT_SIZE) },
            (_, k) => (ids.at(-1) as number) - Math.min(since, SNAPSHOT_SIZE) + 1 + k,
          ),
        );
        last = ids.at(-1) as number;
      }
      conflation.stop();
    }
  });

  it("sends nothing while the socket's last frame is still in the process, then everything since in one frame", () => {
    const conflation = conflationOf(20);
    const slow = liveSocket(conflation, "slow");
    const quick = liveSocket(conflation, "quick");
    conflation.add(notice(1), performance.now());
    endTurn();
    slow.backlogged = true;
    for (let id = 2; id <= 80; id++) {
      conflation.add(notice(id), performance.now());
      vi.advanceTimersByTime(10);
    }
    expect(idsOf(slow)).toEqual([1]);
    // 790 ms of a frenzy at half the budget: a frame every 100 ms after the first.
    expect(quick.frames.length).toBeGreaterThanOrEqual(8);
    slow.backlogged = false;
    // Long enough for the quick socket's frenzied wait too.
    vi.advanceTimersByTime(50 * FRENZY_INTERVALS);
    expect(slow.frames).toHaveLength(2);
    // 79 bids waited: the newest 50, the rest older than the page's list.
    expect(slow.frames[1]).toMatchObject({ type: "bids", lastId: 80 });
    expect(idsOf(slow).slice(1)).toEqual(Array.from({ length: SNAPSHOT_SIZE }, (_, k) => 31 + k));
    expect(idsOf(quick).at(-1)).toBe(80);
  });

  it("carries only the newest round's bids: the page's list starts afresh with its first", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    conflation.add(notice(1, 1), performance.now());
    endTurn();
    for (const [id, round] of [
      [2, 1],
      [3, 1],
      [4, 2],
      [5, 2],
    ] as const) {
      conflation.add(notice(id, round), performance.now());
    }
    vi.advanceTimersByTime(50);
    expect(socket.frames[1]).toMatchObject({ type: "bids", round: 2, lastId: 5, bids: [{ id: 4 }, { id: 5 }] });
  });

  it("counts an opening or a list as a frame and sends only the bids above what it covered", () => {
    const conflation = conflationOf(20);
    for (const id of [1, 2, 3]) conflation.add(notice(id), performance.now());
    const socket = testSocket("opening");
    // Its opening was read after bid 2.
    socket.lastSentId = 2;
    conflation.live(socket);
    endTurn();
    vi.advanceTimersByTime(49);
    expect(socket.frames).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(idsOf(socket)).toEqual([3]);
  });

  it("sends nothing to a paused socket, and picks it up again once it is live", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    conflation.add(notice(1), performance.now());
    conflation.pause(socket);
    endTurn();
    vi.advanceTimersByTime(200);
    expect(socket.frames).toEqual([]);
    // A list covering bid 1 was sent; its wait in the queue before the pause is stale now.
    socket.lastSentId = 1;
    conflation.live(socket);
    conflation.add(notice(2), performance.now());
    vi.advanceTimersByTime(50);
    expect(idsOf(socket)).toEqual([2]);
  });

  it("stops sending to a socket that can no longer take a frame", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    socket.open = false;
    conflation.add(notice(1), performance.now());
    endTurn();
    expect(socket.pace).toBe("paused");
    conflation.add(notice(2), performance.now());
    vi.advanceTimersByTime(500);
    expect(socket.frames).toEqual([]);
    expect(passes).toEqual([]);
  });

  it("does nothing after stop", () => {
    const conflation = conflationOf(20);
    const socket = liveSocket(conflation, "a");
    conflation.add(notice(1), performance.now());
    conflation.stop();
    vi.advanceTimersByTime(500);
    expect(socket.frames).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
