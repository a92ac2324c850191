/**
 * A socket for adversarial tests: sends any text or bytes, then takes the service's answers one at a
 * time, in order, without polling (thousands of exchanges per test). Broadcast bids are kept apart,
 * since they arrive in between answers; every message is checked against the protocol's schemas.
 *
 *   const raw = await connectRaw(service.socketUrl);
 *   await raw.opening();                         // snapshot or resume
 *   const answer = await raw.exchange('{"type":"ping"}');  // { type: "pong" }, or { type: "closed", code }
 */
import WebSocket from "ws";
import { closeSocket } from "../../../scripts/harness/sockets.ts";
import { type ServerMessage, SNAPSHOT_SIZE, type WireBid } from "../../../src/lib/auction/protocol.ts";
import { type OpeningMessage, onServerMessages, resolveOnOpen } from "./auctionClient.ts";

type Answer = Exclude<ServerMessage, { type: "bid" | "bids" | "snapshot" | "resume" | "moderated" | "roundEnded" }>;
export type Outcome = Answer | { type: "closed"; code: number; reason: string };

export interface RawClient {
  socket: WebSocket;
  /** Bids broadcast to this socket so far, frame by frame: a `bid` frame's one, a `bids` frame's several (docs/design.md#10). */
  bidFrames: WireBid[][];
  /** The same bids in arrival order, read from bidFrames. */
  readonly broadcasts: WireBid[];
  /** The moderation versions of the lists that replaced this socket's after an operator's action. */
  moderated: number[];
  /** The rounds whose end replaced this socket's state. */
  roundsEnded: number[];
  opening(): Promise<OpeningMessage>;
  /** Sends one frame and resolves with the next answer (accepted, error, pong) or the close. */
  exchange(frame: string | Buffer, options?: { binary?: boolean }): Promise<Outcome>;
  /** The next answer or the close, without sending anything first. */
  next(): Promise<Outcome>;
  close(): Promise<void>;
}

const WAIT_MS = 10_000;

export function connectRaw(url: string, options: { origin?: string } = {}): Promise<RawClient> {
  const socket = new WebSocket(url, { origin: options.origin, handshakeTimeout: WAIT_MS });
  const bidFrames: WireBid[][] = [];
  const moderated: number[] = [];
  const roundsEnded: number[] = [];
  const queue: Outcome[] = [];
  const waiting: ((outcome: Outcome) => void)[] = [];
  let firstMessage: OpeningMessage | undefined;
  let onOpening: (() => void) | undefined;
  let failure: Error | undefined;

  function deliver(outcome: Outcome) {
    const waiter = waiting.shift();
    if (waiter) waiter(outcome);
    else queue.push(outcome);
  }

  onServerMessages(
    socket,
    (message) => {
      if (message.type === "bid" || message.type === "bids") {
        bidFrames.push(message.type === "bid" ? [message.bid] : message.bids);
      } else if (message.type === "moderated") moderated.push(message.moderation);
      else if (message.type === "roundEnded") roundsEnded.push(message.round.number);
      else if (message.type === "snapshot" || message.type === "resume") {
        if (firstMessage) failure ??= new Error(`a second opening message: ${JSON.stringify(message)}`);
        firstMessage = message;
        onOpening?.();
      } else deliver(message);
    },
    (text) => {
      failure ??= new Error(`malformed message from the service: ${text}`);
    },
  );
  const _closed = new Promise<void>((resolve) => {
    socket.on("close", (code, reason) => {
      deliver({ type: "closed", code, reason: String(reason) });
      resolve();
    });
  });

  function bounded<T>(what: string, promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Timed out after ${WAIT_MS} ms waiting for ${what}`)), WAIT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  function next(): Promise<Outcome> {
    if (failure) return Promise.reject(failure);
    const ready = queue.shift();
    if (ready) return Promise.resolve(ready);
    return bounded(
      "an answer",
      new Promise<Outcome>((resolve) => {
        waiting.push(resolve);
      }).then((outcome) => {
        if (failure) throw failure;
        return outcome;
      }),
    );
  }

  const client: RawClient = {
    socket,
    bidFrames,
    get broadcasts() {
      return bidFrames.flat();
    },
    moderated,
    roundsEnded,
    opening() {
      if (firstMessage) return Promise.resolve(firstMessage);
      return bounded(
        "the opening message",
        new Promise((resolve) => {
          onOpening = () => resolve(firstMessage as OpeningMessage);
        }),
      );
    },
    exchange(frame, sendOptions = {}) {
      if (socket.readyState === WebSocket.OPEN) socket.send(frame, { binary: sendOptions.binary ?? false });
      return next();
    },
    next,
    close: () => closeSocket(socket),
  };

  return resolveOnOpen(socket, client);
}

type AcceptedBid = Pick<WireBid, "id" | "bidderName" | "amountCents"> & Partial<WireBid>;

/**
 * What a watcher must have heard of the accepted bids under the frame budget (docs/design.md#10):
 * each once, in id order, the last one included; only a frame of SNAPSHOT_SIZE bids may leave out
 * the older bids before it (the page's list would drop them anyway). Returns what breaks that.
 */
export function unheardBids(bidFrames: WireBid[][], accepted: readonly AcceptedBid[]): string[] {
  const problems: string[] = [];
  const indexOf = new Map(accepted.map((bid, index) => [bid.id, index]));
  let next = 0;
  for (const frame of bidFrames) {
    const first = indexOf.get((frame[0] as WireBid).id);
    if (first === undefined || first < next) {
      problems.push(`a frame from bid ${frame[0]?.id}: never accepted, or heard before`);
      continue;
    }
    if (first > next && frame.length < SNAPSHOT_SIZE) {
      problems.push(
        `bids ${accepted[next]?.id} to ${accepted[first - 1]?.id} left out before a frame of ${frame.length}`,
      );
    }
    frame.forEach((bid, offset) => {
      const expected = accepted[first + offset];
      // Compared on the fields the accepted record has (a row read back has no createdAt).
      const heard = JSON.stringify(
        expected && Object.fromEntries(Object.keys(expected).map((key) => [key, bid[key as keyof WireBid]])),
      );
      if (heard !== JSON.stringify(expected))
        problems.push(`heard ${JSON.stringify(bid)} where ${JSON.stringify(expected)} was accepted`);
    });
    next = first + frame.length;
  }
  if (next < accepted.length) problems.push(`the last ${accepted.length - next} accepted bids never heard`);
  return problems;
}
