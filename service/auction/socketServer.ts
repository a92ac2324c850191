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
import { createCoalescer } from "../coalescedReads.ts";
import type { ServiceConfig } from "../config.ts";
import { clientAddress, limitKey, maskAddress } from "../http/clientAddress.ts";
import { DEFAULT_CONNECTION_LIMITS } from "../http/connectionLimits.ts";
import { createFairShares } from "../http/fairShares.ts";

import { isOriginAllowed } from "../http/originPolicy.ts";
import { createRateLimiter } from "../http/rateLimiter.ts";
import { refuseUpgrade } from "../http/requestGuard.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { createNameFilter } from "../names/nameFilter.ts";
import type { PaymentSocketLink } from "../payments/sockets.ts";
import { createRepeatedWarnings, MAX_LOGGED_CHARS, visitorAnswered, visitorUnanswered } from "../repeatedWarnings.ts";
import type { BidStore } from "../storage/types.ts";
import { createBidDesk } from "./bidDesk.ts";
import { createBroadcaster } from "./broadcaster.ts";
import { createFrameBudget, type FrameBudget } from "./frameBudget.ts";
import { createKnownStanding } from "./knownStanding.ts";
import { readOpening, readResumePoint } from "./opening.ts";
import { createRoundClock } from "./roundClock.ts";
import { dropIfBacklogged } from "./slowSockets.ts";
import { encodeMessage } from "./wire.ts";

/** How long a closing handshake may take before the socket is cut. */
const CLOSE_GRACE_MS = 1_000;
/**
 * Frames a socket may send per bid rate window, as a multiple of the bid rate limit: a page
 * bidding at the limit sends one frame a bid and a ping every 25 s (realtimeClient.ts), about half
 * of it; the rest leaves room for the refusals of a visitor who bids faster (docs/design.md#11).
 */
const FRAMES_PER_ALLOWED_BID = 2;

export type SocketServerConfig = Pick<
  ServiceConfig,
  | "allowedOrigins"
  | "maxSocketsPerAddress"
  | "bidRateLimit"
  | "bidRateWindowMs"
  | "trustProxy"
  | "heartbeatIntervalMs"
  | "maxBufferedBytes"
  | "maxFramesPerSecond"
> &
  /** The listener's connections, whose nested shares the sockets keep too (none: the per-address cap alone). */
  Partial<Pick<ServiceConfig, "maxConnections" | "networkSharePercent" | "trustedProxies">>;

export interface SocketServer {
  /** Reads where the auction stands and starts broadcasting; call before accepting connections. */
  start(): Promise<void>;
  /** The HTTP server's "upgrade" handler, given the target the server parsed (docs/design.md#11). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: RequestTarget): void;
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
  frames: FrameBudget;
  /** Over its frame budget: nothing more is read from it, and it is closed once answered. */
  overBudget: boolean;
  /** Its bids still waiting for their answers. */
  answering: number;
}

export interface SocketServerOptions {
  /** The frame budgets' clock, in milliseconds (tests pass their own). */
  now?: () => number;
  /** The payments' live status on this socket (docs/design.md#8); absent while payments are off. */
  payments?: PaymentSocketLink | undefined;
}

export function createSocketServer(
  store: BidStore,
  config: SocketServerConfig,
  logger: Logger,
  metrics: Metrics,
  { now = performance.now.bind(performance), payments }: SocketServerOptions = {},
): SocketServer {
  // permessage-deflate off: the broadcaster's prebuilt frames (wire.ts) are only valid uncompressed,
  // and ~120-byte messages gain nothing from it.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
  const connections = new Map<WebSocket, Connection>();
  // Per client MAX_SOCKETS_PER_ADDRESS, per /56, /48 and /24 a share of the listener (fairShares.ts).
  const sockets = createFairShares({
    capacity: config.maxConnections ? config.maxConnections : Number.POSITIVE_INFINITY,
    perClient: config.maxSocketsPerAddress,
    wideShare: (config.networkSharePercent ?? DEFAULT_CONNECTION_LIMITS.networkSharePercent) / 100,
  });
  const rateLimiter = createRateLimiter(config.bidRateLimit, config.bidRateWindowMs);
  const known = createKnownStanding();
  const coalesce = createCoalescer();
  const broadcaster = createBroadcaster({
    store,
    logger,
    metrics,
    maxBufferedBytes: config.maxBufferedBytes,
    maxFramesPerSecond: config.maxFramesPerSecond,
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
  metrics.health.ready = () => !draining && store.isReady();
  metrics.health.databaseUp = () => store.isReady();
  // Apart, so a flood of made-up paths cannot push a real origin's refusal out of memory.
  const wrongPaths = createRepeatedWarnings({ now });
  const foreignOrigins = createRepeatedWarnings({ now });
  const allowed = config.allowedOrigins.length > 0 ? config.allowedOrigins : "same origin";

  function send(socket: WebSocket, message: ServerMessage) {
    if (socket.readyState !== socket.OPEN) return;
    if (dropIfBacklogged(socket, config.maxBufferedBytes, logger, metrics)) return;
    socket.send(encodeMessage(message), { binary: false });
  }
  payments?.attach(send);

  function onConnection(socket: WebSocket, query: URLSearchParams, address: string, releaseShare: () => void) {
    const frames = createFrameBudget(FRAMES_PER_ALLOWED_BID * config.bidRateLimit, config.bidRateWindowMs, now);
    const connection: Connection = { address, alive: true, frames, overBudget: false, answering: 0 };
    connections.set(socket, connection);
    metrics.openSockets.inc();
    // Registered before the opening is read: bids accepted meanwhile are held, not lost.
    broadcaster.add(socket);
    payments?.hooks.opened(socket);

    socket.on("pong", () => {
      connection.alive = true;
    });
    socket.on("message", (data, isBinary) => onMessage(socket, connection, data, isBinary));
    socket.on("error", (error) => logger.debug({ err: error }, "socket error"));
    socket.on("close", () => {
      connections.delete(socket);
      broadcaster.remove(socket);
      payments?.hooks.closed(socket);
      releaseShare();
      metrics.openSockets.dec();
    });

    readOpening(store, readResumePoint(query), coalesce).then(
      ({ message, coveredId, standing }) => {
        visitorAnswered(logger);
        if (socket.readyState === socket.OPEN) {
          broadcaster.goLive(socket, encodeMessage(message), coveredId, standing);
        }
      },
      (error: unknown) => {
        visitorUnanswered(logger, "the opening snapshot", loggedError(error));
        send(socket, { type: "error", code: "unavailable", message: REFUSAL_TEXTS.unavailable });
        socket.close(CLOSE_CODES.tryAgainLater, "Auction unavailable");
      },
    );
  }

  function onMessage(socket: WebSocket, connection: Connection, data: RawData, isBinary: boolean) {
    if (connection.overBudget) return;
    if (!connection.frames.take()) {
      stopOverBudget(socket, connection);
      return;
    }
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
    if (message.type === "watchPayment") {
      payments?.hooks.watch(socket, message.reference);
      return;
    }
    connection.answering++;
    const answering =
      message.type === "myMaximum" ? desk.ownMaximum(message.bidderSecret) : desk.place(message, connection.address);
    answering.then(
      (answer) => {
        send(socket, answer);
        answered(socket, connection);
      },
      (error: unknown) => {
        logger.error({ err: error }, "answering a bid failed");
        answered(socket, connection);
      },
    );
  }

  function answered(socket: WebSocket, connection: Connection) {
    connection.answering--;
    if (connection.overBudget && connection.answering === 0) {
      void closeSocket(socket, CLOSE_CODES.policyViolation, "Too many messages");
    }
  }

  /**
   * A flood: stop reading the socket, so the frames it has already sent are not parsed either,
   * answer the bids it sent within its budget, then close it with 1008 (its close reply is not
   * read: the grace's cut ends the socket).
   */
  function stopOverBudget(socket: WebSocket, connection: Connection) {
    connection.overBudget = true;
    socket.pause();
    metrics.socketsOverFrameBudget.inc();
    logger.warn({ client: maskAddress(connection.address) }, "closing a socket that sent more frames than its budget");
    if (connection.answering === 0) void closeSocket(socket, CLOSE_CODES.policyViolation, "Too many messages");
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

    handleUpgrade(req, socket, head, target) {
      const origin = req.headers.origin?.slice(0, MAX_LOGGED_CHARS) ?? null;
      if (target.path !== PROTOCOL_PATH) {
        const path = target.path.slice(0, MAX_LOGGED_CHARS);
        wrongPaths.note(`${path} ${origin}`, (repeated) =>
          logger.warn(
            {
              path,
              origin,
              client: maskAddress(limitKey(clientAddress(req, config.trustProxy, config.trustedProxies))),
              repeated,
            },
            `refused a socket on a path other than ${PROTOCOL_PATH}: the pages' PUBLIC_REALTIME_URL must end in ${PROTOCOL_PATH} (logged once a minute per path and origin)`,
          ),
        );
        refuseUpgrade(socket, 404, "No WebSocket endpoint here; the auction is at /realtime.");
        return;
      }
      if (draining) {
        refuseUpgrade(socket, 503, "Shutting down; try again in a moment.");
        return;
      }
      // The limit key, not the address: the cap and the bid limit hold an IPv6 client by its /64.
      const address = limitKey(clientAddress(req, config.trustProxy, config.trustedProxies));
      if (!isOriginAllowed(req, config.allowedOrigins)) {
        foreignOrigins.note(String(origin), (repeated) =>
          logger.warn(
            { origin, allowed, client: maskAddress(address), repeated },
            "refused a socket from a foreign origin: if its pages are yours, add it to ALLOWED_ORIGINS (logged once a minute per origin)",
          ),
        );
        refuseUpgrade(socket, 403, "This origin may not connect to the auction.");
        return;
      }
      const share = sockets.take(clientAddress(req, config.trustProxy, config.trustedProxies));
      if (!share.taken) {
        const own = share.refusal === "client";
        logger.warn(
          { client: maskAddress(address), share: share.refusal },
          own ? "refused a socket over the per-address cap" : "refused a socket over its network's share",
        );
        refuseUpgrade(
          socket,
          429,
          own ? "Too many connections from your address." : "Too many connections from your network.",
        );
        return;
      }
      let accepted = false;
      // ws answers a malformed handshake itself (400) without calling back: free the slot then.
      socket.once("close", () => {
        if (!accepted) share.release();
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        accepted = true;
        onConnection(ws, target.query, address, share.release);
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
