/** Storage rows to wire messages, serialised once per message, and frames built once per broadcast. */
import * as ws from "ws";
import type { ServerMessage, WireBid, WireWinner } from "../../src/lib/auction/protocol.ts";
import type { RoundWinner, StoredBid } from "../storage/types.ts";

export function toWireBid(bid: StoredBid): WireBid {
  return { id: bid.id, bidderName: bid.bidderName, amountCents: bid.amountCents, createdAt: bid.createdAt };
}

export function toWireWinner(winner: RoundWinner): WireWinner {
  return { round: winner.round, bid: toWireBid(winner.bid), endedAt: winner.endedAt };
}

/** UTF-8 bytes of one message: a Buffer is written to every socket as is, with no per-socket encoding. */
export function encodeMessage(message: ServerMessage): Buffer {
  return Buffer.from(JSON.stringify(message));
}

// The fan-out writes prebuilt frames through two parts of ws that its types do not declare: the
// Sender class it exports at run time (docs/design.md#notes-ws) and the TCP socket each WebSocket keeps
// in `_socket`. Both are checked where they are used, and fail loudly rather than fall back to a
// slower path unnoticed; tests/service/storage/libraryInternals.test.ts pins them against the installed ws.
const { Sender } = ws as unknown as {
  Sender?: {
    frame?(
      data: Buffer,
      options: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean },
    ): Buffer[];
  };
};
if (typeof Sender?.frame !== "function") {
  throw new Error("ws no longer exports Sender.frame: service/auction/wire.ts builds broadcast frames with it");
}
const frame = Sender.frame.bind(Sender);

const TEXT_OPCODE = 1;

/**
 * One complete, unmasked WebSocket text frame (header and payload in one Buffer), built once per
 * broadcast and written as is to every socket. Safe only with permessage-deflate off, which the
 * socket server sets: then no frame is compressed per socket or held back by ws's sender.
 */
export function prebuiltTextFrame(payload: Buffer): Buffer {
  return Buffer.concat(frame(payload, { fin: true, opcode: TEXT_OPCODE, mask: false, readOnly: false, rsv1: false }));
}

interface Writable {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

/**
 * The TCP socket under a WebSocket, where prebuilt frames are written: one write per socket
 * instead of ws framing the payload again for every one (about half the time of socket.send for
 * 1,000 sockets, measured), corked for a turn while several go out (coalescedWrites.ts). Throws
 * if ws stops keeping it in `_socket`.
 */
export function tcpSocketOf(socket: ws.WebSocket): Writable {
  const tcp = (socket as unknown as { _socket?: Partial<Writable> })._socket;
  if (typeof tcp?.write !== "function" || typeof tcp.cork !== "function" || typeof tcp.uncork !== "function") {
    throw new Error(
      "ws no longer keeps the TCP socket in WebSocket._socket: service/auction/wire.ts writes frames to it",
    );
  }
  return tcp as Writable;
}
