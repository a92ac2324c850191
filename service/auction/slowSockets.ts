import type { WebSocket } from "ws";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";

/**
 * Drops a socket whose unsent backlog passed `maxBufferedBytes` instead of buffering for it
 * without end: a client that does not read (broadcasts, or the answers to its own pings and bad
 * messages) must not grow the service's memory. The client reconnects and resumes.
 * Returns true when the socket was dropped, so the caller sends nothing more to it.
 */
export function dropIfBacklogged(
  socket: WebSocket,
  maxBufferedBytes: number,
  logger: Logger,
  metrics: Metrics,
): boolean {
  if (socket.bufferedAmount <= maxBufferedBytes) return false;
  logger.warn({ bufferedBytes: socket.bufferedAmount }, "dropping a socket that does not read what it is sent");
  metrics.slowSocketsDropped.inc();
  socket.terminate();
  return true;
}
