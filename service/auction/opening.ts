/**
 * The first message of a connection: a snapshot, or with `?after=<id>&moderation=<version>&round=<n>`
 * a resume of every visible bid of the round after that id, oldest first. A resume is only right
 * while no moderation action has happened since the page's version (a hide leaves no trace in the
 * bids after an id) and the page's round is still the current one, so otherwise it is answered
 * with a snapshot: the page sees from it that its round ended and who won. Also says which ids
 * and which standing the message covers, so the broadcaster flushes only the bids above them and
 * knows whether an action or a round's end came after it.
 */
import {
  RESUME_AFTER_PARAMETER,
  RESUME_LIMIT,
  RESUME_MODERATION_PARAMETER,
  RESUME_ROUND_PARAMETER,
  type ServerMessage,
  SNAPSHOT_SIZE,
  type WireRound,
} from "../../src/lib/auction/protocol.ts";
import type { Coalesce } from "../coalescedReads.ts";
import type { AuctionView, BidStore, RoundSettings } from "../storage/types.ts";
import type { Standing } from "./standing.ts";
import { toWireBid, toWireWinner } from "./wire.ts";

export interface Opening {
  message: ServerMessage;
  /** Every bid with an id up to this one is in the message, hidden, older than its oldest bid or of an earlier round. */
  coveredId: number;
  /** The moderation version and the round the message reflects. */
  standing: Standing;
}

export interface ResumePoint {
  after: number;
  /** 0 when the page sent none (no moderation seen). */
  moderation: number;
  /** The round the page shows; -1 when it sent none or an unreadable one (it gets a snapshot). */
  round: number;
}

const ID = /^\d{1,15}$/;

/**
 * The resume's query parameters (the upgrade's query, parsed once by the server:
 * docs/design.md#11); null for a snapshot (no `after`, or not a valid id).
 */
export function readResumePoint(parameters: URLSearchParams): ResumePoint | null {
  const after = parameters.get(RESUME_AFTER_PARAMETER);
  if (after === null || !ID.test(after) || Number(after) < 1) return null;
  const moderation = parameters.get(RESUME_MODERATION_PARAMETER) ?? "0";
  const round = parameters.get(RESUME_ROUND_PARAMETER) ?? "";
  // An unreadable version or round cannot match: the page gets a snapshot.
  return {
    after: Number(after),
    moderation: ID.test(moderation) ? Number(moderation) : -1,
    round: ID.test(round) ? Number(round) : -1,
  };
}

/**
 * The first message for a socket registered before this call. Reads go through `coalesce`, so
 * sockets opening together share them (same key, same read).
 */
export async function readOpening(
  store: BidStore,
  resumePoint: ResumePoint | null,
  coalesce: Coalesce = (_key, read) => read(),
): Promise<Opening> {
  const { rounds } = store;
  const view = () => coalesce("view", () => store.view(SNAPSHOT_SIZE));
  if (resumePoint === null) return snapshot("snapshot", await view(), rounds);
  const { after } = resumePoint;

  // One more than the limit tells "exactly RESUME_LIMIT missed" from "more than that".
  const missed = await coalesce(`after:${after}`, () => store.bidsAfter(after, RESUME_LIMIT + 1));
  if (missed.bids.length > RESUME_LIMIT) return snapshot("snapshot", await view(), rounds);
  // The operator changed the list since the page's version: only a snapshot says how.
  if (missed.moderation !== resumePoint.moderation) return snapshot("snapshot", await view(), rounds);
  // The page's round is over and another has begun: its list is not the one to add to.
  if (missed.round.number !== resumePoint.round) return snapshot("snapshot", await view(), rounds);
  // A client ahead of the newest bid saw another auction (a reset database): it starts over.
  if (missed.lastId < after) return snapshot("snapshot", await view(), rounds);
  // One read, one snapshot: every visible bid of the round from `after` up to lastId is in `bids`.
  return {
    message: { type: "resume", bids: missed.bids.map(toWireBid), ...standingOf(missed, rounds) },
    coveredId: missed.lastId,
    standing: standingKey(missed),
  };
}

/** A snapshot, or a message that replaces a live page's state after an action or a round's end. */
export function snapshot(
  type: "snapshot" | "moderated" | "roundEnded",
  view: AuctionView,
  rounds: RoundSettings,
): Opening {
  return {
    message: { type, bids: view.bids.map(toWireBid), ...standingOf(view, rounds) },
    coveredId: view.lastId,
    standing: standingKey(view),
  };
}

export function standingKey(view: AuctionView): Standing {
  return { moderation: view.moderation, round: view.round.number, roundClosed: view.round.closed };
}

function standingOf(view: AuctionView, rounds: RoundSettings) {
  const round: WireRound = {
    number: view.round.number,
    endsAt: view.round.endsAt,
    ended: view.round.closed,
    seconds: rounds.roundSeconds,
    softCloseSeconds: rounds.softCloseSeconds,
  };
  return {
    highest: view.highest ? toWireBid(view.highest) : null,
    bidders: view.bidders,
    moderation: view.moderation,
    round,
    pastWinners: view.pastWinners.map(toWireWinner),
    now: view.now,
  };
}
