/**
 * The page after conflated frames (docs/design.md#10), over generated bid sequences and budgets:
 * the service's own conflation (service/auction/conflation.ts, on fake timers) paces the bids to
 * one page; a second page gets the same bids one by one, as "bid" messages, at the moment each
 * frame leaves. After every frame both pages show the same state (list, highest, count, round),
 * and the conflated page raised at most one "New Bid!" toast: the last of those the frame's bids
 * raised one by one. Both pages are the product's own connection (src/stores/auctionConnection.ts
 * over src/lib/auction/realtimeClient.ts), fed through a socket the test drives.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { createConflation, type PacedSocket, pausedSocket, realPacingClock } from "../../service/auction/conflation.ts";
import type { BidNotice } from "../../service/storage/types.ts";
import {
  type BidMessage,
  parseServerMessage,
  type ServerMessage,
  SNAPSHOT_SIZE,
  type WireBid,
} from "../../src/lib/auction/protocol.ts";
import type { SocketLike } from "../../src/lib/auction/realtimeClient.ts";
import { createAuctionConnection } from "../../src/stores/auctionConnection.ts";
import type { ToastInput } from "../../src/stores/toasts.ts";
import { fakePacingTimersForEachTest } from "../harness/fakePacingTimers.ts";
import { ManualTimers } from "../harness/manualTimers.ts";
import { seededRuns } from "../harness/seededRuns.ts";
import { textFramePayload } from "../harness/textFrames.ts";

const TYPED_NAME = "Me";
const NAMES = [TYPED_NAME, "Ada", "Bo", "Grace", "Linus"];
const NOW = "2026-11-21T12:00:00.000Z";

/** A page on a socket the test drives: connected, live, its visitor's name typed. */
function drivenPage() {
  const toasts: ToastInput[] = [];
  let socket: SocketLike | undefined;
  const connection = createAuctionConnection({
    url: "ws://auction.test/realtime",
    createSocket: () => {
      socket = { readyState: 1, send() {}, close() {}, onopen: null, onclose: null, onerror: null, onmessage: null };
      return socket;
    },
    // Never advanced: no heartbeat or acknowledgement deadline runs.
    timers: new ManualTimers(),
    log: {
      error: (...parts: unknown[]) => {
        throw new Error(`the page logged an error: ${parts.join(" ")}`);
      },
    },
    notify: (toast) => toasts.push(toast),
    // Held still: the page's service clock is the last message's now.
    monotonicNow: () => 0,
  });
  connection.connect();
  socket?.onopen?.({});
  connection.$typedBidderName.set(TYPED_NAME);
  const deliver = (text: string) => socket?.onmessage?.({ data: text });
  return { connection, toasts, deliver, send: (message: ServerMessage) => deliver(JSON.stringify(message)) };
}

/** What the page shows, less what no broadcast touches (the connection status, the clock). */
const shown = (page: ReturnType<typeof drivenPage>) => {
  const { bids, highest, bidders, round, pastWinners } = page.connection.$auction.get();
  return { bids, highest, bidders, round, pastWinners };
};

interface Step {
  /** Milliseconds after the previous bid. */
  gapMs: number;
  name: string;
  /** The first bid of the next round (the amounts start again). */
  nextRound: boolean;
  /** This visitor's own bid: its acknowledgement reaches the page before any broadcast of it. */
  own: boolean;
  /** A bid in the soft-close window moves the end. */
  movesEnd: boolean;
  /** The socket still holds its last frame in the process for this long after the bid (a slow reader). */
  stallMs: number;
}

const step: fc.Arbitrary<Step> = fc.record({
  // Bursts within a turn, a few milliseconds apart, and pauses longer than an interval.
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 120 })),
  name: fc.constantFrom(...NAMES),
  // One bid in 40 opens the next round.
  nextRound: fc.integer({ min: 0, max: 39 }).map((roll) => roll === 0),
  own: fc.boolean(),
  movesEnd: fc.boolean(),
  stallMs: fc.oneof(
    { weight: 9, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 400 }) },
  ),
});

fakePacingTimersForEachTest();

describe("a page after conflated frames", () => {
  it("shows what it would after the same bids one by one, with one New Bid! toast for the newest from someone else", () => {
    const scenario = fc.record({
      maxFramesPerSecond: fc.oneof(fc.constantFrom(1, 20), fc.integer({ min: 1, max: 200 })),
      openingBids: fc.integer({ min: 0, max: 60 }),
      steps: fc.array(step, { minLength: 1, maxLength: 300, size: "large" }),
    });
    const tally = { frames: 0, conflated: 0, full: 0, roundsOpened: 0 };
    fc.assert(
      fc.property(scenario, ({ maxFramesPerSecond, openingBids, steps }) => {
        vi.setSystemTime(0);
        const conflated = drivenPage();
        const oneByOne = drivenPage();

        // Both open on the same snapshot of round 1.
        let round = 1;
        let lastId = 0;
        let amountCents = 0;
        const roundNames = new Set<string>();
        const history: { bid: WireBid; message: BidMessage }[] = [];
        const opening: WireBid[] = [];
        for (let index = 0; index < openingBids; index++) {
          const name = NAMES[index % NAMES.length] as string;
          lastId += 1;
          amountCents += 100;
          opening.unshift({ id: lastId, bidderName: name, amountCents, createdAt: NOW });
          roundNames.add(name);
        }
        const snapshot = {
          type: "snapshot" as const,
          bids: opening.slice(0, SNAPSHOT_SIZE),
          highest: opening[0] ?? null,
          bidders: roundNames.size,
          moderation: 0,
          round: { number: 1, endsAt: "2026-11-21T13:00:00.000Z", ended: false, seconds: 3600, softCloseSeconds: 30 },
          pastWinners: [],
          now: NOW,
        };
        conflated.send(snapshot);
        oneByOne.send(snapshot);

        // The service's side: one socket, live after that snapshot, paced by the budget.
        let stalledUntil = 0;
        const socket: PacedSocket = { ...pausedSocket(), lastSentId: lastId };
        let delivered = 0;
        const conflation = createConflation<PacedSocket>({
          maxFramesPerSecond,
          clock: realPacingClock,
          isBacklogged: () => performance.now() < stalledUntil,
          write(_socket, wire) {
            const text = textFramePayload(wire);
            const parsed = parseServerMessage(text);
            if (!parsed.ok || (parsed.message.type !== "bid" && parsed.message.type !== "bids")) {
              throw new Error(`not a bid frame: ${text}`);
            }
            const frame = parsed.message;
            tally.frames += 1;
            if (frame.type === "bids") tally.conflated += 1;
            if (frame.type === "bids" && frame.bids.length === SNAPSHOT_SIZE) tally.full += 1;
            if (frame.round > (conflated.connection.$auction.get().round?.number ?? 0)) tally.roundsOpened += 1;
            const newestId = frame.type === "bid" ? frame.bid.id : frame.lastId;
            const carried = new Set(frame.type === "bid" ? [frame.bid.id] : frame.bids.map((bid) => bid.id));
            // The same bids, one by one, to the other page: every one since the last frame.
            const toastsBefore = conflated.toasts.length;
            let lastToast: ToastInput | undefined;
            for (const { bid, message } of history.slice(delivered)) {
              if (bid.id > newestId) break;
              const before = oneByOne.toasts.length;
              oneByOne.send(message);
              delivered += 1;
              if (oneByOne.toasts.length > before && carried.has(bid.id)) lastToast = oneByOne.toasts.at(-1);
            }
            conflated.deliver(text);
            expect(shown(conflated)).toEqual(shown(oneByOne));
            expect(conflated.toasts.slice(toastsBefore)).toEqual(lastToast ? [lastToast] : []);
            return true;
          },
        });
        conflation.live(socket);

        for (const each of steps) {
          vi.advanceTimersByTime(each.gapMs);
          if (each.nextRound) {
            round += 1;
            amountCents = 0;
            roundNames.clear();
          }
          roundNames.add(each.name);
          lastId += 1;
          amountCents += 1 + (lastId % 7);
          const bid: WireBid = { id: lastId, bidderName: each.name, amountCents, createdAt: NOW };
          const endsAt = `2026-11-21T13:00:${String(each.movesEnd ? lastId % 60 : 0).padStart(2, "0")}.000Z`;
          const message: BidMessage = { type: "bid", bid, bidders: roundNames.size, round, endsAt };
          history.push({ bid, message });
          if (each.own) {
            const accepted = { type: "accepted" as const, requestId: `own-${bid.id}`, bid, round };
            conflated.send(accepted);
            oneByOne.send(accepted);
          }
          if (each.stallMs > 0) stalledUntil = performance.now() + each.stallMs;
          const notice: BidNotice = {
            bid: { ...bid },
            bidders: message.bidders,
            moderation: 0,
            round,
            endsAt,
          };
          conflation.add(notice, performance.now());
        }
        // Every bid leaves within the longest stall and a few intervals.
        vi.advanceTimersByTime(1_000 + 4_000 / maxFramesPerSecond);
        expect(delivered).toBe(history.length);
        expect(shown(conflated)).toEqual(shown(oneByOne));
        conflation.stop();
        conflated.connection.stop();
        oneByOne.connection.stop();
      }),
      seededRuns(20_261_124, 300),
    );
    console.info(`frames: ${JSON.stringify(tally)}`);
    // The runs met every case: several bids in a frame, a full one, a frame opening a round.
    expect(Math.min(tally.conflated, tally.full, tally.roundsOpened)).toBeGreaterThan(0);
  });
});
