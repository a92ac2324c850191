/**
 * A visitor's page, reduced to what the fault tests account for: the product's own realtime client
 * (src/lib/auction/realtimeClient.ts, on Node's global WebSocket) with its heartbeat, backoff and
 * resume, plus a record of every bid that reached the page and a way to place bids and hear the
 * answer, as src/stores/auction.ts does.
 *
 *   const page = openPage("alice", balancer.socketUrl);
 *   await waitFor("live", () => page.isLive());
 *   const outcome = await page.placeBid("alice-1", 1234); // accepted, refused, no_answer, not_sent
 *   page.received // resume and broadcast bids after the first opening, in arrival order
 *   page.stop();
 */
import type { ErrorCode, ServerMessage, WireBid } from "../../../src/lib/auction/protocol.ts";
import { type ConnectionStatus, createRealtimeClient } from "../../../src/lib/auction/realtimeClient.ts";

/** The page's wait for an acknowledgement (BID_ACK_TIMEOUT_MS in src/stores/auction.ts). */
const ACK_TIMEOUT_MS = 10_000;

export type BidOutcome =
  | { kind: "accepted"; bid: WireBid }
  | { kind: "refused"; code: ErrorCode }
  /** Sent, but the connection ended (or the page gave up waiting) before an answer. */
  | { kind: "no_answer" }
  /** The page had no open connection: nothing was sent. */
  | { kind: "not_sent" };

export interface PageOptions {
  heartbeatIntervalMs?: number;
  heartbeatTimeoutMs?: number;
}

export interface Page {
  readonly label: string;
  readonly statuses: ConnectionStatus[];
  /** The highest id in the page's first opening (0 for an empty auction); null before it. */
  readonly firstTop: number | null;
  /** Bids that reached the page after its first opening (resumes and broadcasts), in arrival order. */
  readonly received: WireBid[];
  /** This page's own bids as acknowledged (the page lists them at once; the broadcast follows). */
  readonly acknowledged: WireBid[];
  /** Snapshots on a reconnect that could have resumed (the page had received a bid): each a gap. */
  readonly unexpectedSnapshots: number;
  /** Openings after the first (each reconnect that got its resume or snapshot). */
  readonly reopenings: number;
  readonly socketUrls: string[];
  /** The close code of each connection that ended (1006: no close frame). */
  readonly closeCodes: number[];
  /** Highest bid id received (the point a reconnect resumes after). */
  lastReceivedId(): number;
  isLive(): boolean;
  placeBid(bidderName: string, amountCents: number): Promise<BidOutcome>;
  stop(): void;
}

let lastRequestNumber = 0;

export function openPage(label: string, url: string, options: PageOptions = {}): Page {
  const statuses: ConnectionStatus[] = [];
  const received: WireBid[] = [];
  const acknowledged: WireBid[] = [];
  const socketUrls: string[] = [];
  const closeCodes: number[] = [];
  const pending = new Map<string, { settle: (outcome: BidOutcome) => void; timer: NodeJS.Timeout }>();
  let firstTop: number | null = null;
  let unexpectedSnapshots = 0;
  let reopenings = 0;
  let lastReceivedId = 0;
  let openingExpected = true;

  function settle(requestId: string, outcome: BidOutcome) {
    const waiting = pending.get(requestId);
    if (!waiting) return;
    pending.delete(requestId);
    clearTimeout(waiting.timer);
    waiting.settle(outcome);
  }

  function receive(message: ServerMessage) {
    if (message.type === "snapshot" || message.type === "resume") {
      openingExpected = false;
      if (firstTop === null) {
        firstTop = Math.max(0, ...message.bids.map((bid) => bid.id));
        lastReceivedId = firstTop;
        return;
      }
      reopenings += 1;
      if (message.type === "snapshot") {
        // Asked for with no bid to resume after, it is the page's whole state; otherwise a gap.
        if (lastReceivedId > 0) unexpectedSnapshots += 1;
        for (const bid of message.bids.toReversed()) if (bid.id > lastReceivedId) take(bid);
        return;
      }
      for (const bid of message.bids) take(bid);
      return;
    }
    if (message.type === "bid") {
      take(message.bid);
    } else if (message.type === "accepted") {
      acknowledged.push(message.bid);
      settle(message.requestId, { kind: "accepted", bid: message.bid });
    } else if (message.type === "error" && message.requestId) {
      settle(message.requestId, { kind: "refused", code: message.code });
    }
  }

  function take(bid: WireBid) {
    received.push(bid);
    lastReceivedId = Math.max(lastReceivedId, bid.id);
  }

  const client = createRealtimeClient({
    url,
    onMessage: receive,
    onStatus: (status) => {
      statuses.push(status);
      if (status === "reconnecting") {
        openingExpected = true;
        // Answers never cross to a new connection: whatever was in flight stays unanswered.
        for (const requestId of [...pending.keys()]) settle(requestId, { kind: "no_answer" });
      }
    },
    createSocket: (socketUrl) => {
      socketUrls.push(socketUrl);
      const socket = new WebSocket(socketUrl);
      socket.addEventListener("close", (event) => closeCodes.push(event.code));
      return socket as never;
    },
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs,
    log: { error: () => {} },
  });
  client.start();

  return {
    label,
    statuses,
    get firstTop() {
      return firstTop;
    },
    received,
    acknowledged,
    get unexpectedSnapshots() {
      return unexpectedSnapshots;
    },
    get reopenings() {
      return reopenings;
    },
    socketUrls,
    closeCodes,
    lastReceivedId: () => lastReceivedId,
    // Live and past the opening: a bid sent before the snapshot is fine, but the tests wait for it.
    isLive: () => statuses.at(-1) === "live" && !openingExpected,
    placeBid(bidderName, amountCents) {
      lastRequestNumber += 1;
      const requestId = `${label}-${lastRequestNumber}`;
      const sent = client.send({ type: "bid", requestId, bidderName, amount: amountCents / 100 });
      if (!sent) return Promise.resolve({ kind: "not_sent" });
      return new Promise((resolve) => {
        const timer = setTimeout(() => settle(requestId, { kind: "no_answer" }), ACK_TIMEOUT_MS);
        pending.set(requestId, { settle: resolve, timer });
      });
    },
    stop() {
      client.stop();
      for (const requestId of [...pending.keys()]) settle(requestId, { kind: "no_answer" });
    },
  };
}
