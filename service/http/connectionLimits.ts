/**
 * What keeps strangers from holding the public listener's connections (docs/deploying.md#connections).
 * Node's defaults let one address open connections until the process ran out of files: 19,845
 * half-sent requests from 127.0.0.1 made every /healthz fail for 46 s.
 *
 * - Fair shares (fairShares.ts): a client (an IPv4 address, an IPv6 /64) holds at most
 *   maxConnectionsPerClient at once, sockets and requests together, its /56 and its /48 or /24 at
 *   most a share of maxConnections each, and the last fifth of maxConnections goes only to networks
 *   holding little. Without TRUST_PROXY every TCP connection counts under its peer's address
 *   from the moment it is accepted, so half-sent requests, idle keep-alives and open sockets count
 *   alike; one past the cap is answered 429 and closed before anything of it is read. Behind
 *   TRUST_PROXY the peers are the proxies, each carrying many clients: there each client's requests
 *   in progress and open sockets count, by its forwarded address, and one past the cap is answered 429.
 * - Time: a connection must send its whole head within headersTimeoutMs of opening, and its whole
 *   request within requestTimeoutMs. Node times a head only from its first byte, so a connection
 *   that sends nothing is cut here; Node cuts the rest, checked every second instead of every 30.
 * - The whole listener: maxConnections (from the process's file limit, openFileBudget) keeps files
 *   for the database, the metrics listener and the pages being read; past it Node closes a new
 *   connection as soon as it is accepted.
 *
 * Refusals are counted by reason and logged once a minute per client (repeatedWarnings.ts).
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../logger.ts";
import { createRepeatedWarnings } from "../repeatedWarnings.ts";
import { clientAddress, isTrustedProxy, LOOPBACK_PROXIES, maskAddress } from "./clientAddress.ts";
import { addressGroups, createFairShares, type ShareRefusal } from "./fairShares.ts";
import { refuseUpgrade } from "./requestGuard.ts";

export interface ConnectionLimits {
  /** Connections (without TRUST_PROXY) or requests and sockets (behind it) one client may hold. */
  maxConnectionsPerClient: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** The listener's connections at once; 0: no cap of its own. */
  maxConnections: number;
  /** The share of maxConnections an IPv6 /48 or an IPv4 /24 may hold, in percent (fairShares.ts). */
  networkSharePercent: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnectionsPerClient: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnections: 0,
  networkSharePercent: 10,
};

/** How often Node looks for heads and requests past their time (its default is 30 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** How long a client refused for its cap is asked to wait. */
const REFUSED_RETRY_AFTER_SECONDS = 10;
/** What the answer says; the client's own connections, or its network's, are the cause. */
const REFUSAL_TEXT = "Too many connections from your address.";
const NETWORK_REFUSAL_TEXT = "Too many connections from your network.";

/** Why the listener refused: the client over its cap, its network over its share, or the listener full. */
type ConnectionRefusalReason = "per_client" | "per_network" | "server_full";

/** The counter the refusals go to. */
export interface ConnectionRefusals {
  inc(labels: { reason: ConnectionRefusalReason }): void;
}

/** Node's options for a listener under these limits. */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
  };
}

export interface ConnectionGuard {
  /** Behind TRUST_PROXY: counts the request under its client until answered; false when refused (answered 429). */
  admitRequest(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same for a socket's upgrade, counted until the socket closes; false when refused. */
  admitUpgrade(req: IncomingMessage, socket: Duplex): boolean;
}

/**
 * Puts `server` (made with serverOptions) under the limits. The server's own request and upgrade
 * handlers call admitRequest and admitUpgrade first.
 */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  {
    trustProxy,
    trustedProxies = LOOPBACK_PROXIES,
    logger,
    refusals,
    now = () => performance.now(),
  }: {
    trustProxy: number;
    trustedProxies?: readonly string[] | undefined;
    logger: Logger;
    refusals?: ConnectionRefusals | undefined;
    now?: () => number;
  },
): ConnectionGuard {
  // Without a listener cap of its own (tests), only the per-client cap holds.
  const shares = createFairShares({
    capacity: limits.maxConnections > 0 ? limits.maxConnections : Number.POSITIVE_INFINITY,
    perClient: limits.maxConnectionsPerClient,
    wideShare: limits.networkSharePercent / 100,
  });
  const refusalLines = createRepeatedWarnings({ now });
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;

  function serverFull() {
    refusals?.inc({ reason: "server_full" });
    refusalLines.note("server", (repeated) =>
      logger.warn(
        { maxConnections: limits.maxConnections, repeated },
        "refused a connection: the listener holds MAX_CONNECTIONS already",
      ),
    );
  }

  /** Counts and logs a refusal of `address` for its share; the text to answer with. */
  function overShare(address: string, refusal: ShareRefusal): string {
    const groups = addressGroups(address);
    if (refusal === "client") {
      refusals?.inc({ reason: "per_client" });
      refusalLines.note(`c ${groups.client}`, (repeated) =>
        logger.warn(
          { client: maskAddress(groups.client), cap: shares.budgets.client, repeated },
          "refused a client over MAX_CONNECTIONS_PER_CLIENT",
        ),
      );
      return REFUSAL_TEXT;
    }
    refusals?.inc({ reason: "per_network" });
    const network = (refusal === "mid" ? groups.mid : groups.wide) ?? groups.client;
    refusalLines.note(`${refusal} ${network}`, (repeated) =>
      logger.warn(
        { network: maskAddress(network), share: refusal, held: shares.held(address), repeated },
        "refused a client over its network's share of MAX_CONNECTIONS",
      ),
    );
    return NETWORK_REFUSAL_TEXT;
  }

  server.on("drop", serverFull);
  server.on("connection", (socket: Socket) => {
    // Cut unless the head arrives in time; a request or an upgrade lifts it.
    socket.setTimeout(limits.headersTimeoutMs);
    // A proxy's connections carry many clients: their requests are counted instead (admit).
    if (fromProxy(socket.remoteAddress)) return;
    const outcome = shares.take(socket.remoteAddress ?? "unknown");
    if (!outcome.taken) {
      refuseConnection(socket, overShare(socket.remoteAddress ?? "unknown", outcome.refusal));
      return;
    }
    socket.once("close", outcome.release);
  });
  // Node lets a connection that sends nothing live forever: its head timer starts at the first byte.
  server.on("request", (req: IncomingMessage) => req.socket.setTimeout(0));

  function fromProxy(peer: string | undefined): boolean {
    return trustProxy > 0 && isTrustedProxy(peer ?? "", trustedProxies);
  }

  /** Through a proxy: null when admitted (counted until `closed`), else the refusal's text. */
  function admit(req: IncomingMessage, closed: NodeJS.EventEmitter): string | null {
    // A direct connection was counted as itself when it was accepted.
    if (!fromProxy(req.socket.remoteAddress)) return null;
    const address = clientAddress(req, trustProxy, trustedProxies);
    const outcome = shares.take(address);
    if (!outcome.taken) return overShare(address, outcome.refusal);
    closed.once("close", outcome.release);
    return null;
  }

  return {
    admitRequest(req, res) {
      const refusal = admit(req, res);
      if (refusal === null) return true;
      res
        .writeHead(429, {
          "Content-Type": "text/plain; charset=utf-8",
          "Retry-After": REFUSED_RETRY_AFTER_SECONDS,
          Connection: "close",
        })
        .end(refusal);
      return false;
    },
    admitUpgrade(req, socket) {
      (socket as Socket).setTimeout?.(0);
      const refusal = admit(req, socket);
      if (refusal === null) return true;
      refuseUpgrade(socket, 429, refusal, { retryAfterSeconds: REFUSED_RETRY_AFTER_SECONDS });
      return false;
    },
  };
}

/**
 * The 429 for a connection over its share, written before its request is read, and the
 * connection closed at once: waiting for the client to read it would let it hold the connection.
 */
function refuseConnection(socket: Socket, text: string): void {
  socket.on("error", () => {});
  refuseUpgrade(socket, 429, text, { retryAfterSeconds: REFUSED_RETRY_AFTER_SECONDS, destroyAtOnce: true });
}

/** Files kept from the connections' share: at least this many, or a tenth of the limit if more. */
const MIN_RESERVED_FILES = 256;
const RESERVED_FILES_SHARE = 0.1;
/** Without a file limit to read (not Linux): connections at most. */
const UNKNOWN_LIMIT_MAX_CONNECTIONS = 10_000;

export interface OpenFileBudget {
  /** The process's soft limit on open files; null when it cannot be read. */
  fileLimit: number | null;
  /** Connections the public listener may hold; the rest of the files stay for everything else. */
  maxConnections: number;
}

/** The soft limit on open files (`ulimit -n`), from /proc; null elsewhere or when unlimited. */
export function readOpenFileLimit(read = () => readFileSync("/proc/self/limits", "utf8")): number | null {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(read())?.[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}

/** The connections a file limit leaves room for, after the files the rest of the process needs. */
export function openFileBudget(fileLimit: number | null): OpenFileBudget {
  if (fileLimit === null) return { fileLimit, maxConnections: UNKNOWN_LIMIT_MAX_CONNECTIONS };
  const reserved = Math.max(MIN_RESERVED_FILES, Math.ceil(fileLimit * RESERVED_FILES_SHARE));
  return { fileLimit, maxConnections: Math.max(0, fileLimit - reserved) };
}
