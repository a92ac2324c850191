/**
 * The frame budget for the bids a socket is sent (docs/design.md#10), not to be confused with the
 * budget for the frames a socket sends (frameBudget.ts). A socket is sent at most
 * `maxFramesPerSecond` bid frames a second, each at least 1000 / maxFramesPerSecond ms after the
 * one before, and none while something is still buffered for it in the process (a socket that
 * reads slowly). Bids that come meanwhile wait for it and leave as one frame: the bid's own "bid"
 * frame when one waits, else a "bids" frame with every bid of the round since its last frame, up
 * to SNAPSHOT_SIZE (the page's list: older ones would fall off it anyway), the standing after the
 * newest and its id. So an instance's work is bounded by its sockets times the budget, whatever the
 * bid rate, and a slow reader gets fewer, larger frames instead of a growing buffer.
 *
 * A frenzy gets half the budget: after a frame that carried several bids (they came faster than
 * the budget), the socket waits FRENZY_INTERVALS intervals, not one. A frame's cost is one write
 * per socket whatever it carries, so this keeps an instance's fan-out at a frenzy near its cost at
 * 10 bids a second (docs/design.md#10), while a lone bid still leaves within one interval.
 *
 * A socket is
 * - ready: up to date and free to be sent a frame: the next bid goes at the end of the turn of the
 *   event loop it came in, with the rest of that turn's bids;
 * - waiting: sent a frame (or a list) less than its wait ago, or still buffering the last one when
 *   its time came: looked at again once its wait is up. Sockets wait in one line per length of
 *   wait, in the order they began to wait, which within a line is the order they are due;
 * - paused: not live (its opening or a list is on the way, which says where it stands), or gone.
 *
 * A frame is built once per last id sent: sockets in step (which those that saw the same bid are)
 * share one frame, as the broadcast without the budget does.
 */
import { SNAPSHOT_SIZE, type WireBid } from "../../src/lib/auction/protocol.ts";
import type { BidNotice } from "../storage/types.ts";
import { encodeMessage, prebuiltTextFrame, toWireBid } from "./wire.ts";

/** Intervals a socket waits after a conflated frame: a frenzy is paced at half the budget. */
export const FRENZY_INTERVALS = 2;

/** What the conflation keeps on each socket's own record (the broadcaster's subscriber). */
export interface PacedSocket {
  /** The newest bid id the socket was sent, or shown by its opening or a list. */
  lastSentId: number;
  pace: "ready" | "waiting" | "paused";
  /** While waiting: when it may be sent its next frame. */
  dueAt: number;
  /** Which of its entries in the queue of waiting sockets is current (the others are stale). */
  ticket: number;
}

/** A socket's record before it is live. */
export function pausedSocket(): PacedSocket {
  return { lastSentId: 0, pace: "paused", dueAt: 0, ticket: 0 };
}

/** The clock and timers of the budget; the broadcaster passes the real ones, tests fake timers. */
export interface PacingClock {
  /** Milliseconds, monotonic. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Runs the callback once the current turn of the event loop is done (its other bids are in). */
  setImmediate(callback: () => void): void;
}

/** Looked up on every call, so fake timers installed later still drive them. */
export const realPacingClock: PacingClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  setImmediate: (callback) => globalThis.setImmediate(callback),
};

/** What one pass over the sockets (a turn's end, or a waiting interval up) wrote. */
export interface PassReport {
  /** Frames written carrying one bid ("bid") and several ("bids"). */
  single: number;
  conflated: number;
  /** From the arrival of the oldest bid a frame of the pass carried to the pass, in ms. */
  longestWaitMs: number;
}

export interface ConflationOptions<S extends PacedSocket> {
  /** At least 1 (0, the budget off, is the broadcaster's other path). */
  maxFramesPerSecond: number;
  clock?: PacingClock;
  /** Writes one prebuilt frame to the socket; false when it cannot take it any more (closed, dropped). */
  write(socket: S, frame: Buffer): boolean;
  /** Whether part of what was written to the socket is still in the process, not yet handed to the kernel. */
  isBacklogged(socket: S): boolean;
  /** After each pass that wrote a frame. */
  onPass?(report: PassReport): void;
}

export interface Conflation<S extends PacedSocket> {
  /** A bid, in id order, heard when `arrivedAt` (the clock's time). */
  add(notice: BidNotice, arrivedAt: number): void;
  /**
   * The socket was just sent a message that covers every id up to its lastSentId (its opening, or
   * a list after an action or a round's end): live, and that message counts as its frame.
   */
  live(socket: S): void;
  /** Nothing more is sent to the socket until live() again. */
  pause(socket: S): void;
  stop(): void;
}

interface Entry {
  id: number;
  round: number;
  bid: WireBid;
  bidders: number;
  endsAt: string | null;
  arrivedAt: number;
  /** Its "bid" frame, built the first time a socket is sent this bid alone. */
  single: Buffer | null;
}

interface Built {
  wire: Buffer;
  conflated: boolean;
  oldestArrivedAt: number;
}

interface Queued<S> {
  socket: S;
  ticket: number;
}

/** Sockets that began to wait the same number of intervals, in the order they began: so, due order. */
interface WaitLine<S> {
  intervals: number;
  entries: Queued<S>[];
  head: number;
}

export function createConflation<S extends PacedSocket>(options: ConflationOptions<S>): Conflation<S> {
  const { write, isBacklogged, onPass } = options;
  const clock = options.clock ?? realPacingClock;
  const intervalMs = 1000 / options.maxFramesPerSecond;
  /** The newest bids heard, oldest first: all a frame can carry. */
  const recent: Entry[] = [];
  let newestId = 0;
  /** Frames built since the newest bid, by the last id the sockets they go to were sent. */
  const built = new Map<number, Built>();
  const ready = new Set<S>();
  const lines: WaitLine<S>[] = [1, FRENZY_INTERVALS].map((intervals) => ({ intervals, entries: [], head: 0 }));
  const [afterOneFrame, afterFrenzy] = lines as [WaitLine<S>, WaitLine<S>];
  let timer: unknown = null;
  /** When the socket the timer was set for is due. */
  let timerDueAt = 0;
  let flushScheduled = false;
  let stopped = false;

  /** The frame for a socket last sent `afterId`: the newest round's bids above it. */
  function frameAfter(afterId: number): Built | null {
    const cached = built.get(afterId);
    if (cached) return cached;
    const newest = recent.at(-1);
    if (!newest || newest.id <= afterId) return null;
    let start = recent.length - 1;
    for (; start > 0; start--) {
      const before = recent[start - 1] as Entry;
      // A bid of an earlier round is not on the page's list once the newer round's first bid is.
      if (before.id <= afterId || before.round !== newest.round) break;
    }
    const carried = recent.slice(start);
    const oldestArrivedAt = (carried[0] as Entry).arrivedAt;
    let frame: Built;
    if (carried.length === 1) {
      newest.single ??= prebuiltTextFrame(
        encodeMessage({
          type: "bid",
          bid: newest.bid,
          bidders: newest.bidders,
          round: newest.round,
          endsAt: newest.endsAt,
        }),
      );
      frame = { wire: newest.single, conflated: false, oldestArrivedAt };
    } else {
      // lastId first: readers can tell where they stand without reading the list (protocol.ts).
      const message = encodeMessage({
        type: "bids",
        lastId: newest.id,
        bidders: newest.bidders,
        round: newest.round,
        endsAt: newest.endsAt,
        bids: carried.map((entry) => entry.bid),
      });
      frame = { wire: prebuiltTextFrame(message), conflated: true, oldestArrivedAt };
    }
    built.set(afterId, frame);
    return frame;
  }

  function startPass(): PassReport {
    return { single: 0, conflated: 0, longestWaitMs: 0 };
  }

  function endPass(pass: PassReport): void {
    if (pass.single + pass.conflated > 0) onPass?.(pass);
  }

  function wait(socket: S, now: number, line: WaitLine<S>): void {
    socket.pace = "waiting";
    socket.dueAt = now + intervalMs * line.intervals;
    socket.ticket += 1;
    line.entries.push({ socket, ticket: socket.ticket });
  }

  /** The first entry of a line that is still current (a paused or re-queued socket's is stale). */
  function firstCurrent(line: WaitLine<S>): Queued<S> | undefined {
    for (let next = line.entries[line.head]; next !== undefined; next = line.entries[line.head]) {
      if (next.ticket === next.socket.ticket && next.socket.pace === "waiting") return next;
      line.head += 1;
    }
    return undefined;
  }

  /** Drops what was visited once it is most of a line, so each stays the size of its waiting. */
  function compact(): void {
    for (const line of lines) {
      if (line.head > 1_024 && line.head * 2 > line.entries.length) {
        line.entries = line.entries.slice(line.head);
        line.head = 0;
      }
    }
  }

  /** The waiting socket due first, across the lines. */
  function nextDue(): { line: WaitLine<S>; socket: S } | null {
    let first: { line: WaitLine<S>; socket: S } | null = null;
    for (const line of lines) {
      const entry = firstCurrent(line);
      if (entry && (first === null || entry.socket.dueAt < first.socket.dueAt)) first = { line, socket: entry.socket };
    }
    return first;
  }

  function makeReady(socket: S): void {
    socket.pace = "ready";
    ready.add(socket);
  }

  /** Sends what the socket is behind by, unless its last frame is still in the process; it waits either way. */
  function sendOrWait(socket: S, now: number, pass: PassReport): void {
    if (isBacklogged(socket)) {
      wait(socket, now, afterOneFrame);
      return;
    }
    const frame = frameAfter(socket.lastSentId);
    if (!frame) {
      makeReady(socket);
      return;
    }
    if (!write(socket, frame.wire)) {
      socket.pace = "paused";
      return;
    }
    socket.lastSentId = newestId;
    if (frame.conflated) pass.conflated += 1;
    else pass.single += 1;
    pass.longestWaitMs = Math.max(pass.longestWaitMs, now - frame.oldestArrivedAt);
    wait(socket, now, frame.conflated ? afterFrenzy : afterOneFrame);
  }

  /** The turn's bids to every ready socket, one frame each. */
  function flushReady(): void {
    flushScheduled = false;
    if (stopped) return;
    const now = clock.now();
    const pass = startPass();
    for (const socket of ready) {
      if (socket.lastSentId >= newestId) continue;
      // Deleting the entry being visited is safe in a Set's iteration.
      ready.delete(socket);
      sendOrWait(socket, now, pass);
    }
    endPass(pass);
    arm(now);
  }

  /**
   * Sets the timer for the socket due first; one that began a shorter wait may be due before the timer set.
   * Called once a pass is done, not per socket it queued: mid-pass the socket due first is one the
   * pass has yet to reach, and a timer armed for it would wake a pass with nothing to do.
   */
  function arm(now: number): void {
    if (stopped) return;
    const next = nextDue();
    if (!next || (timer !== null && timerDueAt <= next.socket.dueAt)) return;
    if (timer !== null) clock.clearTimeout(timer);
    timerDueAt = next.socket.dueAt;
    // At least 1 ms: a timer may fire a little before the clock says it is due.
    timer = clock.setTimeout(onDue, Math.max(1, Math.ceil(timerDueAt - now)));
  }

  /** The waiting sockets whose wait is up, in the order they are due: sent what they are behind by, or ready again. */
  function onDue(): void {
    timer = null;
    if (stopped) return;
    const now = clock.now();
    const pass = startPass();
    for (let next = nextDue(); next !== null && next.socket.dueAt <= now; next = nextDue()) {
      const { line, socket } = next;
      line.head += 1;
      if (socket.lastSentId >= newestId) makeReady(socket);
      else sendOrWait(socket, now, pass);
    }
    compact();
    endPass(pass);
    arm(now);
  }

  return {
    add(notice, arrivedAt) {
      const { bid } = notice;
      recent.push({
        id: bid.id,
        round: notice.round,
        bid: toWireBid(bid),
        bidders: notice.bidders,
        endsAt: notice.endsAt,
        arrivedAt,
        single: null,
      });
      if (recent.length > SNAPSHOT_SIZE) recent.shift();
      newestId = bid.id;
      built.clear();
      if (ready.size > 0 && !flushScheduled && !stopped) {
        flushScheduled = true;
        clock.setImmediate(flushReady);
      }
    },
    live(socket) {
      ready.delete(socket);
      const now = clock.now();
      wait(socket, now, afterOneFrame);
      arm(now);
    },
    pause(socket) {
      ready.delete(socket);
      socket.pace = "paused";
    },
    stop() {
      stopped = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      ready.clear();
      for (const line of lines) {
        line.entries = [];
        line.head = 0;
      }
    },
  };
}
