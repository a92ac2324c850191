/**
 * The ceiling for the realtime benchmark: a bare `ws` broadcast server with no database, no
 * validation and no limits, speaking just enough of the auction's protocol for the same load
 * generators. Each bid message is acknowledged and broadcast to every socket at once, the way
 * ws's README broadcasts: the message serialised once, then `send` to each client.
 *
 * Usage (by scripts/bench-realtime.ts): node bareServer.ts <port>; prints "listening <port>".
 */
import { createServer } from "node:http";
import { WebSocket, WebSocketServer } from "ws";

const port = Number(process.argv[2] ?? 0);
const server = createServer((_request, response) => {
  response.writeHead(404).end();
});
const wss = new WebSocketServer({ server, perMessageDeflate: false });
const EMPTY_SNAPSHOT = JSON.stringify({ type: "snapshot", bids: [], highest: null, bidders: 0 });
let lastId = 0;

wss.on("connection", (socket) => {
  socket.send(EMPTY_SNAPSHOT);
  socket.on("error", () => {});
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { type: string; requestId: string; bidderName: string; amount: number };
    if (message.type !== "bid") return;
    lastId += 1;
    const bid = {
      id: lastId,
      bidderName: message.bidderName,
      amountCents: Math.round(message.amount * 100),
      createdAt: new Date().toISOString(),
    };
    socket.send(JSON.stringify({ type: "accepted", requestId: message.requestId, bid }));
    const broadcast = Buffer.from(JSON.stringify({ type: "bid", bid, bidders: 1 }));
    for (const client of wss.clients) {
      if (client.readyState === WebSocket.OPEN) client.send(broadcast, { binary: false });
    }
  });
});

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : port}`);
});
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
