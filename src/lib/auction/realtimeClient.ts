/**
 * The browser's side of the auction socket, without DOM or React: connect, heartbeat, reconnect
 * with the product's backoff (docs/product-reference.md#9) and resume after the last bid received in order. The WebSocket constructor,
 * the timers and the log are passed in (the page passes the browser's, src/stores/auction.ts), so
 * tests drive it against a real server with a controllable clock.
 */

import type { Timers } from "../timers.ts";
import {
  type ClientMessage,
  PROTOCOL_PATH,
  parseServerMessage,
  RESUME_AFTER_PARAMETER,
  RESUME_MODERATION_PARAMETER,
  RESUME_ROUND_PARAMETER,
  type ServerMessage,
} from "./protocol.ts";

export const HEARTBEAT_INTERVAL_MS = 25_000;
export const HEARTBEAT_TIMEOUT_MS = 10_000;
/** Reconnect after 1, 2, 5, 10 s, then every 10 s. */
const STEADY_RECONNECT_DELAY_MS = 10_000;
const RECONNECT_DELAYS_MS = [1_000, 2_000, 5_000, STEADY_RECONNECT_DELAY_MS] as const;

export type ConnectionStatus = "connecting" | "live" | "reconnecting";

/** The part of the WebSocket API the client uses (the browser's and Node's global WebSocket fit). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
}

export interface RealtimeClientOptions {
  /** ws: or wss: URL of the endpoint, without query. */
  url: string;
  onMessage(message: ServerMessage): void;
  onStatus(status: ConnectionStatus): void;
  createSocket(url: string): SocketLike;
  timers: Timers;
  /** The product's 25 s (docs/product-reference.md#9) unless given (fault tests use shorter ones on real sockets). */
  heartbeatIntervalMs?: number;
  /** The product's 10 s (docs/product-reference.md#9) unless given. */
  heartbeatTimeoutMs?: number;
  log: Pick<Console, "error">;
}

export interface RealtimeClient {
  start(): void;
  /** Sends when live; false when there is no open connection to send on. */
  send(message: ClientMessage): boolean;
  stop(): void;
}

const OPEN = 1;

export function createRealtimeClient(options: RealtimeClientOptions): RealtimeClient {
  const { createSocket, timers, log } = options;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS;

  let socket: SocketLike | null = null;
  let failedAttempts = 0;
  let stopped = true;
  let reconnectTimer: unknown;
  let heartbeatTimer: unknown;
  let heartbeatDeadline: unknown = null;
  /**
   * The newest bid that came in id order (snapshot, resume, broadcasts): a reconnect resumes after
   * it. Not an acknowledgement's id: an ack can outrun the broadcasts of lower ids, and resuming
   * after it would skip them.
   */
  let resumeAfter: number | null = null;
  /** The moderation version of the list the page shows: a resume is only right while it holds. */
  let moderation = 0;
  /** The round of the list the page shows: likewise. */
  let round = 0;

  function connect() {
    const url = new URL(options.url);
    if (resumeAfter !== null) {
      url.searchParams.set(RESUME_AFTER_PARAMETER, String(resumeAfter));
      url.searchParams.set(RESUME_MODERATION_PARAMETER, String(moderation));
      url.searchParams.set(RESUME_ROUND_PARAMETER, String(round));
    }
    let opened = false;
    const current = createSocket(url.href);
    socket = current;

    current.onopen = () => {
      opened = true;
      failedAttempts = 0;
      options.onStatus("live");
      scheduleHeartbeat();
    };
    current.onmessage = (event) => {
      // Any message proves the connection alive, not only the pong.
      clearHeartbeatDeadline();
      if (typeof event.data !== "string") return;
      const parsed = parseServerMessage(event.data);
      if (parsed.ok) {
        noteResumePoint(parsed.message);
        options.onMessage(parsed.message);
      } else log.error("Auction: ignored a malformed message from the service:", parsed.reason);
    };
    current.onerror = () => {
      // The close event follows and schedules the retry; a failed load is only logged (docs/product-reference.md#8).
      if (!opened) log.error(`Auction: could not load bids from ${options.url}`);
    };
    current.onclose = () => {
      if (socket !== current) return;
      socket = null;
      stopHeartbeat();
      if (stopped) return;
      options.onStatus("reconnecting");
      const delay = RECONNECT_DELAYS_MS[failedAttempts] ?? STEADY_RECONNECT_DELAY_MS;
      failedAttempts += 1;
      reconnectTimer = timers.setTimeout(connect, delay);
    };
  }

  function noteResumePoint(message: ServerMessage) {
    if (message.type === "snapshot") resumeAfter = message.bids[0]?.id ?? null;
    // The newest bids may be the hidden ones: keep the newer point, which has seen them go.
    else if (message.type === "moderated" || message.type === "roundEnded") {
      resumeAfter = Math.max(resumeAfter ?? 0, message.bids[0]?.id ?? 0) || null;
    } else if (message.type === "resume") resumeAfter = message.bids.at(-1)?.id ?? resumeAfter;
    else if (message.type === "bid" || message.type === "bids") {
      // Every bid up to a "bids" frame's lastId is in it or older than the page's list (docs/design.md#10).
      resumeAfter = Math.max(resumeAfter ?? 0, message.type === "bid" ? message.bid.id : message.lastId);
      // The first bid of the next round: the page's list is now that round's.
      round = Math.max(round, message.round);
    }
    if (message.type !== "bid" && "moderation" in message) {
      moderation = message.moderation;
      round = message.round.number;
    }
  }

  function scheduleHeartbeat() {
    heartbeatTimer = timers.setTimeout(() => {
      if (!socket || socket.readyState !== OPEN) return;
      socket.send(JSON.stringify({ type: "ping" } satisfies ClientMessage));
      // An earlier unanswered ping keeps its own deadline: with a timeout longer than the interval,
      // replacing it would leave a deadline that no message can clear.
      heartbeatDeadline ??= timers.setTimeout(() => {
        heartbeatDeadline = null;
        log.error("Auction: no answer to the heartbeat in time; reconnecting");
        dropConnection();
      }, heartbeatTimeoutMs);
      scheduleHeartbeat();
    }, heartbeatIntervalMs);
  }

  function clearHeartbeatDeadline() {
    if (heartbeatDeadline === null) return;
    timers.clearTimeout(heartbeatDeadline);
    heartbeatDeadline = null;
  }

  function stopHeartbeat() {
    timers.clearTimeout(heartbeatTimer);
    clearHeartbeatDeadline();
  }

  /** Treats the connection as lost now; a half-open socket may never deliver its close event. */
  function dropConnection() {
    const lost = socket;
    if (!lost) return;
    lost.onclose?.({});
    lost.onopen = lost.onmessage = lost.onerror = lost.onclose = null;
    lost.close();
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      options.onStatus("connecting");
      connect();
    },
    send(message) {
      if (!socket || socket.readyState !== OPEN) return false;
      socket.send(JSON.stringify(message));
      return true;
    },
    stop() {
      stopped = true;
      timers.clearTimeout(reconnectTimer);
      stopHeartbeat();
      const current = socket;
      socket = null;
      current?.close(1000);
    },
  };
}

/** The socket URL: PUBLIC_REALTIME_URL when set, else this page's origin with /realtime. */
export function realtimeEndpoint(configured: string, location: { protocol: string; host: string }): string {
  if (configured) return configured;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${PROTOCOL_PATH}`;
}
