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
  const top = missed.highest?.id ?? 0;
  // A client ahead of the newest bid saw another auction (a reset database): it starts over.
  if (top < after) return snapshot(await view());
  // One read, one snapshot: every bid from `after` up to the highest is in `bids`.
  return {
    message: {
      type: "resume",
      bids: missed.bids.map(toWireBid),
      highest: missed.highest ? toWireBid(missed.highest) : null,
      bidders: missed.bidders,
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
