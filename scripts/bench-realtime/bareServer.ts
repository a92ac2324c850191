/**
 * The ceiling for the realtime benchmark (docs/design.md#6c): a bare `ws` broadcast server with no
 * database, no validation and no limits, speaking just enough of the auction's protocol for the
 * same load generators. Each bid is acknowledged and broadcast the way the service broadcasts, so
 * the ratio between the two is the service's own cost: the message serialised once, framed once
 * (service/auction/wire.ts's prebuiltTextFrame), and that one frame written to every open
 * socket's TCP socket (tcpSocketOf): one write per frame and socket, docs/design.md#6c's ceiling; with
 * `coalesced`, the frames of one turn of the event loop as one write per socket
 * (coalescedWrites.ts), as the service now writes a batch's: the ceiling of that technique.
 *
 * Usage (by scripts/bench-realtime.ts): node bareServer.ts <port> [coalesced]; prints "listening <port>".
 */
import { createServer } from "node:http";
import { WebSocket, WebSocketServer } from "ws";
import { createCoalescedWrites } from "../../service/auction/coalescedWrites.ts";
import { encodeMessage, prebuiltTextFrame, tcpSocketOf } from "../../service/auction/wire.ts";
import type { ServerMessage, WireBid } from "../../src/lib/auction/protocol.ts";

const port = Number(process.argv[2] ?? 0);
const server = createServer((_request, response) => {
  response.writeHead(404).end();
});
const wss = new WebSocketServer({ server, perMessageDeflate: false });
const ROUND = { number: 1, endsAt: null, ended: false, seconds: 0, softCloseSeconds: 0 };
let lastId = 0;
const coalesced = process.argv[3] === "coalesced";
const writes = createCoalescedWrites();

function snapshot(): Buffer {
  return encodeMessage({
    type: "snapshot",
    bids: [],
    highest: null,
    bidders: 0,
    moderation: 0,
    round: { ...ROUND, number: 0 },
    pastWinners: [],
    now: new Date().toISOString(),
  });
}

const sockets = new Map<WebSocket, ReturnType<typeof tcpSocketOf>>();

wss.on("connection", (socket) => {
  socket.send(snapshot(), { binary: false });
  sockets.set(socket, tcpSocketOf(socket));
  socket.on("error", () => {});
  socket.on("close", () => sockets.delete(socket));
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { type: string; requestId: string; bidderName: string; amount: number };
    if (message.type !== "bid") return;
    lastId += 1;
    const bid: WireBid = {
      id: lastId,
      bidderName: message.bidderName,
      amountCents: Math.round(message.amount * 100),
      createdAt: new Date().toISOString(),
    };
    const accepted: ServerMessage = { type: "accepted", requestId: message.requestId, bid, round: ROUND.number };
    socket.send(encodeMessage(accepted), { binary: false });
    const frame = prebuiltTextFrame(
      encodeMessage({ type: "bid", bid, bidders: 1, round: ROUND.number, endsAt: ROUND.endsAt }),
    );
    for (const [client, tcp] of sockets) {
      if (client.readyState === WebSocket.OPEN)
        if (coalesced) writes.write(tcp, frame);
        else tcp.write(frame);
    }
  });
});

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : port}`);
});
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
