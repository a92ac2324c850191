/** Storage rows to wire messages, serialised once per message. */
import type { ServerMessage, WireBid } from "../../src/lib/auction/protocol.ts";
import type { StoredBid } from "../storage/types.ts";

export function toWireBid(bid: StoredBid): WireBid {
  return { id: bid.id, bidderName: bid.bidderName, amountCents: bid.amountCents, createdAt: bid.createdAt };
}

/** UTF-8 bytes of one message: a Buffer is written to every socket as is, with no per-socket encoding. */
export function encodeMessage(message: ServerMessage): Buffer {
  return Buffer.from(JSON.stringify(message));
}
