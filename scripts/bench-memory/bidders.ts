/**
 * Places a number of accepted bids through the auction protocol over real sockets: a few bidders,
 * each in a closed loop (the next bid once the answer came), every amount above every one sent
 * before. Bids that reach the auction's row lock out of order are refused as too low and placed
 * again; they do not count. The service must run with the per-address limits lifted.
 */
import WebSocket from "ws";
import { nextWinningCents } from "../../src/lib/auction/bidRules.ts";
import { type ClientMessage, parseServerMessage, type ServerMessage } from "../../src/lib/auction/protocol.ts";
import { withTimeout } from "../harness/childProcess.ts";
import { closeSocket } from "../harness/sockets.ts";

const ANSWER_TIMEOUT_MS = 30_000;
const OPEN_TIMEOUT_MS = 15_000;
/** Every bid broadcast starts so (the protocol's BidBroadcast, "type" first): bidders skip them unread. */
const BROADCAST_PREFIX = '{"type":"bid",';

type Answer = Extract<ServerMessage, { type: "accepted" | "error" }>;

export interface BidRun {
  accepted: number;
  /** Refused as too low, and placed again. */
  tooLow: number;
  /** Any other refusal, by code. */
  otherErrors: Record<string, number>;
  elapsedMs: number;
}

interface Waiter {
  resolve(message: ServerMessage): void;
  reject(error: Error): void;
}

/** One socket: its opening message, then answers matched to their requests by requestId. */
class Bidder {
  readonly socket: WebSocket;
  private opening: Waiter | null = null;
  private readonly waiting = new Map<string, Waiter>();
  private failure: Error | null = null;

  constructor(socketUrl: string) {
    this.socket = new WebSocket(socketUrl, { handshakeTimeout: OPEN_TIMEOUT_MS });
    this.socket.on("message", (data) => this.receive(String(data)));
    this.socket.on("error", (error) => this.fail(error));
    this.socket.on("close", (code) => this.fail(new Error(`the socket closed (${code})`)));
  }

  /** The snapshot or resume the socket opens with. */
  opened(): Promise<ServerMessage> {
    const first = new Promise<ServerMessage>((resolve, reject) => {
      if (this.failure) reject(this.failure);
      else this.opening = { resolve, reject };
    });
    return withTimeout(first, OPEN_TIMEOUT_MS, "a bidder's opening message");
  }

  send(bid: ClientMessage & { requestId: string }): Promise<Answer> {
    const answer = new Promise<ServerMessage>((resolve, reject) => {
      if (this.failure) reject(this.failure);
      else this.waiting.set(bid.requestId, { resolve, reject });
    });
    this.socket.send(JSON.stringify(bid));
    return withTimeout(answer as Promise<Answer>, ANSWER_TIMEOUT_MS, `the answer to bid ${bid.requestId}`);
  }

  private receive(text: string): void {
    if (this.opening === null && text.startsWith(BROADCAST_PREFIX)) return;
    const parsed = parseServerMessage(text);
    if (!parsed.ok) {
      this.fail(new Error(`the service sent a malformed message: ${parsed.reason}`));
      return;
    }
    const { message } = parsed;
    if (this.opening) {
      const opening = this.opening;
      this.opening = null;
      opening.resolve(message);
      return;
    }
    if ((message.type === "accepted" || message.type === "error") && message.requestId !== undefined) {
      this.waiting.get(message.requestId)?.resolve(message);
      this.waiting.delete(message.requestId);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.opening?.reject(error);
    this.opening = null;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}

async function openBidder(socketUrl: string): Promise<{ bidder: Bidder; highestCents: number }> {
  const bidder = new Bidder(socketUrl);
  try {
    const first = await bidder.opened();
    if (first.type !== "snapshot" && first.type !== "resume") {
      throw new Error(`a socket opened with ${first.type}, not a snapshot or a resume`);
    }
    return { bidder, highestCents: first.highest?.amountCents ?? 0 };
  } catch (error) {
    bidder.socket.terminate();
    throw error;
  }
}

/**
 * Places bids until exactly `count` are accepted, from `bidderCount` sockets; fails past
 * `timeoutMs`, or past three attempts per bid.
 */
export async function placeBids(
  socketUrl: string,
  { count, bidderCount, timeoutMs }: { count: number; bidderCount: number; timeoutMs: number },
): Promise<BidRun> {
  const bidders: Bidder[] = [];
  try {
    let highestCents = 0;
    for (let index = 0; index < bidderCount; index += 1) {
      const opened = await openBidder(socketUrl);
      bidders.push(opened.bidder);
      highestCents = Math.max(highestCents, opened.highestCents);
    }
    const run: BidRun = { accepted: 0, tooLow: 0, otherErrors: {}, elapsedMs: 0 };
    const maxAttempts = count * 3;
    let attempts = 0;
    let inFlight = 0;
    // The smallest amount that wins over the highest known (0: none), own bids in flight included.
    const winningOver = (cents: number) => nextWinningCents(cents === 0 ? null : cents);
    let nextCents = winningOver(highestCents);

    async function placeOne(bidder: Bidder, index: number): Promise<void> {
      const cents = Math.max(nextCents, winningOver(highestCents));
      nextCents = nextWinningCents(cents);
      attempts += 1;
      inFlight += 1;
      try {
        const answer = await bidder.send({
          type: "bid",
          requestId: `m${attempts}`,
          bidderName: `Memory Bidder ${String(index).padStart(2, "0")}`,
          amount: cents / 100,
        });
        if (answer.type === "accepted") {
          run.accepted += 1;
          highestCents = Math.max(highestCents, answer.bid.amountCents);
        } else if (answer.code === "too_low") {
          run.tooLow += 1;
          highestCents = Math.max(highestCents, answer.highestCents ?? 0);
        } else {
          run.otherErrors[answer.code] = (run.otherErrors[answer.code] ?? 0) + 1;
        }
      } finally {
        inFlight -= 1;
      }
    }

    const startedAt = performance.now();
    const lanes = bidders.map(async (bidder, index) => {
      // Bounded by maxAttempts: every pass places one bid.
      while (run.accepted + inFlight < count) {
        if (attempts >= maxAttempts) {
          throw new Error(`${attempts} bids placed and only ${run.accepted} of ${count} accepted`);
        }
        await placeOne(bidder, index);
      }
    });
    await withTimeout(Promise.all(lanes), timeoutMs, `placing ${count} bids`);
    run.elapsedMs = performance.now() - startedAt;
    return run;
  } finally {
    await Promise.all(bidders.map((bidder) => closeSocket(bidder.socket)));
  }
}
