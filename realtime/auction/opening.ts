/**
 * The first message of a connection: a snapshot, or with `?after=<id>&moderation=<version>` a
 * resume of every visible bid after that id, oldest first. A resume is only right while no
 * moderation action has happened since the page's version (a hide leaves no trace in the bids
 * after an id), so a differing version is answered with a snapshot. Also says which ids the
 * message covers, so the broadcaster flushes only the bids above them.
 */
import {
  RESUME_AFTER_PARAMETER,
  RESUME_LIMIT,
  RESUME_MODERATION_PARAMETER,
  type ServerMessage,
  SNAPSHOT_SIZE,
} from "../../src/lib/auction/protocol.ts";
import type { AuctionView, BidStore } from "../storage/types.ts";
import type { Coalesce } from "./coalescedReads.ts";
import { toWireBid } from "./wire.ts";

export interface Opening {
  message: ServerMessage;
  /** Every bid with an id up to this one is in the message, hidden, or older than its oldest bid. */
  coveredId: number;
  /** The moderation version the message reflects. */
  moderation: number;
}

export interface ResumePoint {
  after: number;
  /** 0 when the page sent none (no moderation seen). */
  moderation: number;
}

const ID = /^\d{1,15}$/;

/** The resume's query parameters; null for a snapshot (no `after`, or not a valid id). */
export function readResumePoint(url: string | undefined): ResumePoint | null {
  const parameters = new URL(url ?? "/", "http://localhost").searchParams;
  const after = parameters.get(RESUME_AFTER_PARAMETER);
  if (after === null || !ID.test(after) || Number(after) < 1) return null;
  const moderation = parameters.get(RESUME_MODERATION_PARAMETER) ?? "0";
  // An unreadable version cannot match: the page gets a snapshot.
  return { after: Number(after), moderation: ID.test(moderation) ? Number(moderation) : -1 };
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
  const view = () => coalesce("view", () => store.view(SNAPSHOT_SIZE));
  if (resumePoint === null) return snapshot("snapshot", await view());
  const { after } = resumePoint;

  // One more than the limit tells "exactly RESUME_LIMIT missed" from "more than that".
  const missed = await coalesce(`after:${after}`, () => store.bidsAfter(after, RESUME_LIMIT + 1));
  if (missed.bids.length > RESUME_LIMIT) return snapshot("snapshot", await view());
  // The operator changed the list since the page's version: only a snapshot says how.
  if (missed.moderation !== resumePoint.moderation) return snapshot("snapshot", await view());
  // A client ahead of the newest bid saw another auction (a reset database): it starts over.
  if (missed.lastId < after) return snapshot("snapshot", await view());
  // One read, one snapshot: every visible bid from `after` up to lastId is in `bids`.
  return {
    message: {
      type: "resume",
      bids: missed.bids.map(toWireBid),
      highest: missed.highest ? toWireBid(missed.highest) : null,
      bidders: missed.bidders,
      moderation: missed.moderation,
    },
    coveredId: missed.lastId,
    moderation: missed.moderation,
  };
}

/** A snapshot, or the "moderated" message that replaces a live page's list after an action. */
export function snapshot(type: "snapshot" | "moderated", view: AuctionView): Opening {
  return {
    message: {
      type,
      bids: view.bids.map(toWireBid),
      highest: view.highest ? toWireBid(view.highest) : null,
      bidders: view.bidders,
      moderation: view.moderation,
    },
    coveredId: view.lastId,
    moderation: view.moderation,
  };
}
