/**
 * The first message of a connection: a snapshot, or with `?after=<id>` a resume of every bid after
 * that id, oldest first. Also says which ids the message covers, so the broadcaster flushes only
 * the bids above them.
 */
import { RESUME_LIMIT, type ServerMessage, SNAPSHOT_SIZE } from "../../src/lib/auction/protocol.ts";
import type { AuctionView, BidStore } from "../storage/types.ts";
import type { Coalesce } from "./coalescedReads.ts";
import { toWireBid } from "./wire.ts";

export interface Opening {
  message: ServerMessage;
  /** Every bid with an id up to this one is in the message or older than its oldest bid. */
  coveredId: number;
}

/** The `after` query parameter: a bid id, or null for a snapshot (absent or not a valid id). */
export function readAfterParameter(url: string | undefined): number | null {
  const raw = new URL(url ?? "/", "http://localhost").searchParams.get("after");
  if (raw === null || !/^\d{1,15}$/.test(raw)) return null;
  const after = Number(raw);
  return after >= 1 ? after : null;
}

/**
 * The first message for a socket registered before this call. Reads go through `coalesce`, so
 * sockets opening together share them (same key, same read).
 */
export async function readOpening(
  store: BidStore,
  after: number | null,
  coalesce: Coalesce = (_key, read) => read(),
): Promise<Opening> {
  const view = () => coalesce("view", () => store.view(SNAPSHOT_SIZE));
  if (after === null) return snapshot(await view());

  // One more than the limit tells "exactly RESUME_LIMIT missed" from "more than that".
  const missed = await coalesce(`after:${after}`, () => store.bidsAfter(after, RESUME_LIMIT + 1));
  if (missed.bids.length > RESUME_LIMIT) return snapshot(await view());
  const newest = missed.bids.at(-1);
  if (newest) {
    // Accepted amounts rise with the id, so the newest bid is the highest.
    const bids = missed.bids.map(toWireBid);
    return {
      message: { type: "resume", bids, highest: bids.at(-1) ?? null, bidders: missed.bidders },
      coveredId: newest.id,
    };
  }

  // Nothing after `after`: the resume is empty, but it still needs the highest bid.
  const current = await view();
  const top = current.highest?.id ?? 0;
  // A client ahead of the newest bid saw another auction (a reset database): it starts over.
  if (top < after) return snapshot(current);
  // Bids placed between the two reads, if all of them are in the view, complete the resume.
  const since = current.bids.filter((bid) => bid.id > after).reverse();
  if (since.length > 0 && since.length === current.bids.length) return snapshot(current);
  return {
    message: {
      type: "resume",
      bids: since.map(toWireBid),
      highest: current.highest ? toWireBid(current.highest) : null,
      bidders: current.bidders,
    },
    coveredId: top,
  };
}

function snapshot(view: AuctionView): Opening {
  return {
    message: {
      type: "snapshot",
      bids: view.bids.map(toWireBid),
      highest: view.highest ? toWireBid(view.highest) : null,
      bidders: view.bidders,
    },
    coveredId: view.bids[0]?.id ?? 0,
  };
}
