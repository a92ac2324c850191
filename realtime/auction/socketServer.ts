/**
 * The /realtime WebSocket endpoint of one instance: the upgrade checks (path, Origin, per-address
 * cap), each connection's opening message, its messages, the heartbeat and the drain on shutdown.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import {
  CLOSE_CODES,
  MAX_MESSAGE_BYTES,
  PROTOCOL_PATH,
  parseClientMessage,
  type ServerMessage,
} from "../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS } from "../../src/lib/auction/refusalTexts.ts";
import { globalTimers } from "../../src/lib/timers.ts";
import type { ServiceConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { BidStore } from "../storage/types.ts";
import { createBidDesk } from "./bidDesk.ts";
import { createBroadcaster } from "./broadcaster.ts";
import { clientAddress, limitKey, maskAddress } from "./clientAddress.ts";
import { createCoalescer } from "./coalescedReads.ts";
import { createConnectionCap } from "./connectionCap.ts";
import { createKnownStanding } from "./knownStanding.ts";
import { createNameFilter } from "./nameFilter.ts";
import { readOpening, readResumePoint } from "./opening.ts";
import { isOriginAllowed } from "./originPolicy.ts";
import { createRateLimiter } from "./rateLimiter.ts";
import { createRoundClock } from "./roundClock.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import { encodeMessage } from "./wire.ts";

/** How long a closing handshake may take before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;

export type SocketServerConfig = Pick<
  ServiceConfig,
  | "allowedOrigins"
  | "maxSocketsPerAddress"
  | "bidRateLimit"
  | "bidRateWindowMs"
  | "trustProxy"
  | "heartbeatIntervalMs"
  | "maxBufferedBytes"
>;

export interface SocketServer {
  /** Reads where the auction stands and starts broadcasting; call before accepting connections. */
  start(): Promise<void>;
  /** The HTTP server's "upgrade" handler. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Database reachable and LISTEN active, and not shutting down. */
  isReady(): boolean;
  readonly openSockets: number;
  /**
   * Shutdown: refuses new connections and bids, waits for the bids already at the store, then
   * closes every socket with 1001. Resolves once all are closed (or cut after a short grace).
   */
  drain(): Promise<void>;
}

interface Connection {
  address: string;
  alive: boolean;
}

export function createSocketServer(
  store: BidStore,
  config: SocketServerConfig,
  logger: Logger,
  metrics: Metrics,
): SocketServer {
  // permessage-deflate off: the broadcaster's prebuilt frames (wire.ts) are only valid uncompressed,
  // and ~120-byte messages gain nothing from it.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
  const connections = new Map<WebSocket, Connection>();
  const cap = createConnectionCap(config.maxSocketsPerAddress);
  const rateLimiter = createRateLimiter(config.bidRateLimit, config.bidRateWindowMs);
  const known = createKnownStanding();
  const coalesce = createCoalescer();
  const broadcaster = createBroadcaster({
    store,
    logger,
    metrics,
    maxBufferedBytes: config.maxBufferedBytes,
    known,
    coalesce,
  });
  const roundClock = createRoundClock({ store, logger, metrics, timers: globalTimers });
  const desk = createBidDesk({
    store,
    rateLimiter,
    metrics,
    logger,
    known,
    nameFilter: createNameFilter(),
    roundClock,
  });
  let draining = false;
  let heartbeat: NodeJS.Timeout | undefined;

  function refuseUpgrade(socket: Duplex, status: number, reason: string, body: string) {
    const bytes = Buffer.byteLength(body);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes}\r\n\r\n${body}`,
    );
    // end() only half-closes: a client that never closes its side would hold the connection open.
    // Destroy once the refusal is written, as ws does for the handshakes it refuses.
    socket.once("finish", () => socket.destroy());
  }

  function send(socket: WebSocket, message: ServerMessage) {
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, config.maxBufferedBytes, logger, metrics)) return;
    socket.send(encodeMessage(message), { binary: false });
  }

  function onConnection(socket: WebSocket, req: IncomingMessage, address: string) {
    const connection: Connection = { address, alive: true };
    connections.set(socket, connection);
    metrics.openSockets.inc();
    // Registered before the opening is read: bids accepted meanwhile are held, not lost.
    broadcaster.add(socket);

    socket.on("pong", () => {
      connection.alive = true;
    });
    socket.on("message", (data, isBinary) => onMessage(socket, connection, data, isBinary));
    socket.on("error", (error) => logger.debug({ err: error }, "socket error"));
    socket.on("close", () => {
      connections.delete(socket);
      broadcaster.remove(socket);
      cap.release(address);
      metrics.openSockets.dec();
    });

    readOpening(store, readResumePoint(req.url), coalesce).then(
      ({ message, coveredId, standing }) => {
        if (socket.readyState === socket.OPEN) {
          broadcaster.goLive(socket, encodeMessage(message), coveredId, standing);
        }
      },
      (error: unknown) => {
        logger.warn({ err: error }, "could not read the opening snapshot");
        send(socket, { type: "error", code: "unavailable", message: REFUSAL_TEXTS.unavailable });
        socket.close(CLOSE_CODES.tryAgainLater, "Auction unavailable");
      },
    );
  }

  function onMessage(socket: WebSocket, connection: Connection, data: RawData, isBinary: boolean) {
    // Any frame proves the peer alive as well as a pong does.
    connection.alive = true;
    if (isBinary) {
      socket.close(CLOSE_CODES.unsupportedData, "Text frames only");
      return;
    }
    const parsed = parseClientMessage(String(data));
    if (!parsed.ok) {
      const refusal: ServerMessage = {
        type: "error",
        code: "bad_message",
        message: `${REFUSAL_TEXTS.bad_message} ${parsed.reason}`,
      };
      if (parsed.requestId !== undefined) refusal.requestId = parsed.requestId;
      metrics.bidsRejected.inc({ code: "bad_message" });
      send(socket, refusal);
      return;
    }
    const message = parsed.message;
    if (message.type === "ping") {
      send(socket, { type: "pong" });
      return;
    }
    desk.place(message, connection.address).then(
      (answer) => send(socket, answer),
      (error: unknown) => logger.error({ err: error }, "answering a bid failed"),
    );
  }

  function beat() {
    for (const [socket, connection] of connections) {
      // Already closing (its grace timer will cut it): closing it again would log and arm a second cut.
      if (socket.readyState !== socket.OPEN) continue;
      if (!connection.alive) {
        logger.debug({ client: maskAddress(connection.address) }, "closing a socket that missed its heartbeat");
        closeSocket(socket, CLOSE_CODES.heartbeatTimeout, "Heartbeat timeout");
        continue;
      }
      connection.alive = false;
      socket.ping();
    }
    rateLimiter.sweep();
  }

  /** Sends the close frame, and cuts the socket if the peer does not finish the handshake in time. */
  function closeSocket(socket: WebSocket, code: number, reason: string): Promise<void> {
    return new Promise((resolve) => {
      if (socket.readyState === socket.CLOSED) {
        resolve();
        return;
      }
      const cut = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
      socket.once("close", () => {
        clearTimeout(cut);
        resolve();
      });
      socket.close(code, reason);
    });
  }

  return {
    async start() {
      await broadcaster.start();
      await roundClock.start();
      heartbeat = setInterval(beat, config.heartbeatIntervalMs);
      heartbeat.unref();
    },

    handleUpgrade(req, socket, head) {
      socket.on("error", (error) => logger.debug({ err: error }, "upgrade socket error"));
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (path !== PROTOCOL_PATH) {
        refuseUpgrade(socket, 404, "Not Found", "No WebSocket endpoint here; the auction is at /realtime.");
        return;
      }
      if (draining) {
        refuseUpgrade(socket, 503, "Service Unavailable", "Shutting down; try again in a moment.");
        return;
      }
      // The limit key, not the address: the cap and the bid limit hold an IPv6 client by its /64.
      const address = limitKey(clientAddress(req, config.trustProxy));
      if (!isOriginAllowed(req, config.allowedOrigins)) {
        logger.warn(
          { origin: req.headers.origin, client: maskAddress(address) },
          "refused a socket from a foreign origin",
        );
        refuseUpgrade(socket, 403, "Forbidden", "This origin may not connect to the auction.");
        return;
      }
      if (!cap.tryOpen(address)) {
        logger.warn({ client: maskAddress(address) }, "refused a socket over the per-address cap");
        refuseUpgrade(socket, 429, "Too Many Requests", "Too many connections from your address.");
        return;
      }
      let accepted = false;
      // ws answers a malformed handshake itself (400) without calling back: free the slot then.
      socket.once("close", () => {
        if (!accepted) cap.release(address);
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        accepted = true;
        onConnection(ws, req, address);
      });
    },

    isReady: () => !draining && store.isReady(),

    get openSockets() {
      return connections.size;
    },

    async drain() {
      draining = true;
      clearInterval(heartbeat);
      await desk.close();
      await Promise.all(
        [...connections.keys()].map((socket) => closeSocket(socket, CLOSE_CODES.goingAway, "Service restarting")),
      );
      broadcaster.stop();
      roundClock.stop();
      wss.close();
    },
  };
}
