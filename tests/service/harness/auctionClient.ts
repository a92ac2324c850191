/**
 * A test client of the /realtime socket (the `ws` client, so tests can set Origin, skip pongs and
 * send binary or oversized frames): records every message, places bids and waits, always bounded.
 *
 *   const client = await connectClient(service.socketUrl);
 *   const opening = await client.opening();             // snapshot or resume
 *   const answer = await client.bid("Nobody", 12.5);    // accepted or error, matched by requestId
 *   await client.waitForBroadcasts(3);
 *   const { code } = await client.closed;
 */
import WebSocket from "ws";
import { closeSocket } from "../../../scripts/harness/sockets.ts";
import {
  type ErrorMessage,
  parseServerMessage,
  type ResumeMessage,
  type ServerMessage,
  type SnapshotMessage,
  type WireBid,
} from "../../../src/lib/auction/protocol.ts";
import { waitFor } from "./stores.ts";

type Accepted = Extract<ServerMessage, { type: "accepted" }>;
type MaximumSet = Extract<ServerMessage, { type: "maximumSet" }>;
type MaximumAnswer = MaximumSet | ErrorMessage;
type MyMaximum = Extract<ServerMessage, { type: "myMaximum" }>;
/** What a socket gets first: the snapshot, or the resume it asked for. */
export type OpeningMessage = SnapshotMessage | ResumeMessage;
export type BidAnswer = Accepted | ErrorMessage;

export interface TestClient {
  socket: WebSocket;
  /** Every message received, parsed and checked against the protocol's schemas. */
  messages: ServerMessage[];
  /** Every text frame as received, before parsing (which drops fields the schemas do not name). */
  frames: string[];
  /** Resolves with the close code and reason, whoever closes. */
  closed: Promise<{ code: number; reason: string }>;
  opening(): Promise<OpeningMessage>;
  /** The bids broadcast to this client so far, one by one or several in a frame (docs/design.md#10), in arrival order. */
  broadcastBids(): WireBid[];
  waitForBroadcasts(count: number, timeoutMs?: number): Promise<WireBid[]>;
  waitForMessage<T extends ServerMessage>(what: string, match: (message: ServerMessage) => message is T): Promise<T>;
  /** Sends a bid with a fresh requestId; resolves with the answer to it. */
  bid(bidderName: string, amount: number): Promise<BidAnswer>;
  /** Sends without waiting: for floods and races. */
  sendBid(bidderName: string, amount: number): string;
  answerTo(requestId: string): Promise<BidAnswer>;
  /** Sends a secret maximum (dollars) with a fresh requestId; resolves with the answer to it. */
  maximum(bidderName: string, maximum: number, bidderSecret: string): Promise<MaximumAnswer>;
  /** Asks where the secret's maximum stands; resolves with the next myMaximum answer. */
  myMaximum(bidderSecret: string): Promise<MyMaximum>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  origin?: string;
  headers?: Record<string, string>;
  after?: number;
  /** The round the resume is for (with `after`; default 1, the one endless round of rounds off). */
  round?: number;
  /** false: the client ignores the service's heartbeat pings, as a dead peer would. */
  autoPong?: boolean;
}

const WAIT_MS = 15_000;
let requestCounter = 0;

export class UpgradeRefused extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`upgrade refused with HTTP ${status}: ${body}`);
    this.status = status;
    this.body = body;
  }
}

export function connectClient(url: string, options: ConnectOptions = {}): Promise<TestClient> {
  const target = new URL(url);
  if (options.after !== undefined) {
    target.searchParams.set("after", String(options.after));
    target.searchParams.set("round", String(options.round ?? 1));
  }
  const socket = new WebSocket(target, {
    origin: options.origin,
    headers: options.headers,
    autoPong: options.autoPong ?? true,
    handshakeTimeout: WAIT_MS,
  });
  const messages: ServerMessage[] = [];
  const frames: string[] = [];
  const malformed: string[] = [];
  socket.on("message", (data) => frames.push(String(data)));
  onServerMessages(
    socket,
    (message) => messages.push(message),
    (text) => malformed.push(text),
  );
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on("close", (code, reason) => resolve({ code, reason: String(reason) }));
  });

  async function waitForMessage<T extends ServerMessage>(
    what: string,
    match: (message: ServerMessage) => message is T,
  ): Promise<T> {
    let found: T | undefined;
    await waitFor(
      what,
      () => {
        if (malformed.length > 0) throw new Error(`malformed message from the service: ${malformed[0]}`);
        found = messages.find(match);
        return found !== undefined;
      },
      WAIT_MS,
    );
    return found as T;
  }

  function broadcastBids(): WireBid[] {
    return messages.flatMap((message) =>
      message.type === "bid" ? [message.bid] : message.type === "bids" ? message.bids : [],
    );
  }

  function sendBid(bidderName: string, amount: number): string {
    requestCounter += 1;
    const requestId = `req-${process.pid}-${requestCounter}`;
    socket.send(JSON.stringify({ type: "bid", requestId, bidderName, amount }));
    return requestId;
  }

  function answerTo(requestId: string): Promise<BidAnswer> {
    return waitForMessage(
      `the answer to ${requestId}`,
      (message): message is BidAnswer =>
        (message.type === "accepted" || message.type === "error") && message.requestId === requestId,
    );
  }

  async function maximum(bidderName: string, amount: number, bidderSecret: string): Promise<MaximumAnswer> {
    requestCounter += 1;
    const requestId = `max-${process.pid}-${requestCounter}`;
    socket.send(JSON.stringify({ type: "maximum", requestId, bidderName, maximum: amount, bidderSecret }));
    return waitForMessage(
      `the answer to ${requestId}`,
      (message): message is MaximumAnswer =>
        (message.type === "maximumSet" || message.type === "error") && message.requestId === requestId,
    );
  }

  async function myMaximum(bidderSecret: string): Promise<MyMaximum> {
    const before = messages.length;
    socket.send(JSON.stringify({ type: "myMaximum", bidderSecret }));
    let found: MyMaximum | undefined;
    await waitFor(
      "the myMaximum answer",
      () => {
        found = messages.slice(before).find((message): message is MyMaximum => message.type === "myMaximum");
        return found !== undefined;
      },
      WAIT_MS,
    );
    return found as MyMaximum;
  }

  const client: TestClient = {
    socket,
    messages,
    frames,
    closed,
    opening: () =>
      waitForMessage(
        "the snapshot or resume",
        (message): message is OpeningMessage => message.type === "snapshot" || message.type === "resume",
      ),
    broadcastBids,
    async waitForBroadcasts(count, timeoutMs = WAIT_MS) {
      await waitFor(
        `${count} broadcast bids (have ${broadcastBids().length})`,
        () => broadcastBids().length >= count,
        timeoutMs,
      );
      return broadcastBids();
    },
    waitForMessage,
    bid: (bidderName, amount) => answerTo(sendBid(bidderName, amount)),
    sendBid,
    answerTo,
    maximum,
    myMaximum,
    close: () => closeSocket(socket),
  };

  return resolveOnOpen(socket, client);
}

/**
 * Hands every text frame from the service, checked against the protocol's schemas, to `onMessage`,
 * and anything else (binary, malformed) to `onMalformed`.
 */
export function onServerMessages(
  socket: WebSocket,
  onMessage: (message: ServerMessage) => void,
  onMalformed: (text: string) => void,
): void {
  socket.on("message", (data, isBinary) => {
    const parsed = isBinary ? null : parseServerMessage(String(data));
    if (parsed?.ok) onMessage(parsed.message);
    else onMalformed(String(data));
  });
}

/** Resolves with the client once the socket opens; a refused upgrade rejects with UpgradeRefused. */
export function resolveOnOpen<T>(socket: WebSocket, client: T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let opened = false;
    socket.once("open", () => {
      opened = true;
      resolve(client);
    });
    // After the handshake, errors end in a close event, which `closed` reports.
    socket.on("error", (error) => {
      if (!opened) reject(error);
    });
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => {
        socket.terminate();
        reject(new UpgradeRefused(response.statusCode ?? 0, body));
      });
    });
  });
}
