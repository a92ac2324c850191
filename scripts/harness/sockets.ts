import { once } from "node:events";
import WebSocket from "ws";

/** Closes with 1000 and resolves once closed, cutting the socket if the closing handshake takes over 2 s. */
export async function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return;
  const closed = once(socket, "close");
  socket.close(1000);
  const timer = setTimeout(() => socket.terminate(), 2_000);
  await closed;
  clearTimeout(timer);
}
