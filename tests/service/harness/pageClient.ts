/**
 * Visitors' pages for the service suites: the product's own auction connection
 * (src/stores/auctionConnection.ts, the code the page runs) on Node's global WebSocket.
 *
 * openPage: a page as the fault tests account for it, with its heartbeat, backoff, resume and bid
 * acknowledgements observed from outside: every bid that reached the page, in arrival order, every
 * list that replaced its state (an operator's action, a round's end), the statuses, the sockets and
 * their close codes, and the state it shows.
 *
 *   const page = openPage("alice", balancer.socketUrl);
 *   await waitFor("live", () => page.isLive());
 *   const outcome = await page.placeBid("alice-1", 1234); // accepted, refused, no_answer, not_sent
 *   page.received // resume and broadcast bids after the first opening, in arrival order
 *   page.state()  // what the page shows now: its list, leader, bidder count, round, past winners
 *   page.stop();
 *
 * openVisitor: the connection itself, as the end-to-end suites read it ($auction, placeBid), with
 * the toasts it showed and the moderation version it holds, stopped when the test ends.
 */
import { onTestFinished } from "vitest";
import {
  type ErrorCode,
  RESUME_AFTER_PARAMETER,
  RESUME_MODERATION_PARAMETER,
  RESUME_ROUND_PARAMETER,
  type ServerMessage,
  SNAPSHOT_SIZE,
  type WireBid,
} from "../../../src/lib/auction/protocol.ts";
import type { ConnectionStatus, SocketLike } from "../../../src/lib/auction/realtimeClient.ts";
import { globalTimers } from "../../../src/lib/timers.ts";
import {
  type AuctionConnectionOptions,
  type AuctionState,
  createAuctionConnection,
  type BidOutcome as StoreOutcome,
} from "../../../src/stores/auctionConnection.ts";
import type { ToastInput } from "../../../src/stores/toasts.ts";

/** The page's auction connection on Node's WebSocket, with no console and no toasts unless given; not connected yet. */
function nodeAuctionConnection(url: string, options: Partial<Omit<AuctionConnectionOptions, "url" | "timers">> = {}) {
  return createAuctionConnection({
    url,
    createSocket: (socketUrl) => new WebSocket(socketUrl) as unknown as SocketLike,
    timers: globalTimers,
    log: { error: () => {} },
    notify: () => {},
    ...options,
  });
}

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

/** One message that carried bids, as the page received it: an opening, a list, or a broadcast. */
interface PageMessage {
  type: "snapshot" | "resume" | "moderated" | "roundEnded" | "bid" | "bids";
  /** The ids it carried, in its order (a list newest first, a resume oldest first). */
  ids: number[];
  /** The round those bids belong to. */
  round: number;
}

/** Where the auction stood as of a list: the operator's actions counted, the round, whether it ended. */
export interface Standing {
  moderation: number;
  round: number;
  ended: boolean;
}

export interface Page {
  readonly label: string;
  readonly statuses: ConnectionStatus[];
  /** The highest id in the page's first opening (0 for an empty auction); null before it. */
  readonly firstTop: number | null;
  /** Bids that reached the page after its first opening (resumes and broadcasts), in arrival order. */
  readonly received: WireBid[];
  /**
   * Ids a full "bids" frame passed over (docs/design.md#10): [after, before), between the page's
   * last bid and the frame's oldest, which only carries the newest SNAPSHOT_SIZE.
   */
  readonly passedOver: [after: number, before: number][];
  /** The broadcast frames after its first opening: one bid or several (docs/design.md#10), each with its newest id. */
  readonly frames: { type: "bid" | "bids"; lastId: number; bids: number }[];
  /** This page's own bids as acknowledged (the page lists them at once; the broadcast follows). */
  readonly acknowledged: WireBid[];
  /**
   * Every message with bids from the first opening on, in arrival order: what the accounting
   * checks for order and gaps round by round.
   */
  readonly messages: PageMessage[];
  /**
   * Snapshots on a reconnect that asked to resume, when neither an operator's action nor a round's
   * end since the page's list explains them (the service resumes otherwise): each a gap.
   */
  readonly unexpectedSnapshots: number;
  /** Openings after the first (each reconnect that got its resume or snapshot). */
  readonly reopenings: number;
  /** How the reopenings began: resumed after the page's last bid, or with a whole snapshot. */
  readonly reopenedWith: { resume: number; snapshot: number };
  readonly socketUrls: string[];
  /** The close code of each connection that ended (1006: no close frame). */
  readonly closeCodes: number[];
  /** Highest bid id received (the point a reconnect resumes after). */
  lastReceivedId(): number;
  isLive(): boolean;
  /** What the page shows now, from its own stores (src/stores/auctionConnection.ts). */
  state(): AuctionState;
  /**
   * The standing of what reached the page: the last list's (snapshot, resume, an action's or a
   * round's end), moved on by a bid of a later round. Once it equals the database's, and the page
   * has the last bid, what it shows must be the database's.
   */
  standing(): Standing;
  placeBid(bidderName: string, amountCents: number): Promise<BidOutcome>;
  stop(): void;
}

/** The bids a message carried, or null for a message without any. */
function pageMessage(message: ServerMessage): PageMessage | null {
  switch (message.type) {
    case "snapshot":
    case "resume":
    case "moderated":
    case "roundEnded":
      return { type: message.type, ids: message.bids.map((bid) => bid.id), round: message.round.number };
    case "bid":
      return { type: "bid", ids: [message.bid.id], round: message.round };
    case "bids":
      return { type: "bids", ids: message.bids.map((bid) => bid.id), round: message.round };
    default:
      return null;
  }
}

/**
 * The full "bids" frames among a page's messages that passed over ids: the page's highest id
 * before each (the lists of an operator's action or a round's end do not move it) and the frame's oldest.
 */
function passedOver(messages: PageMessage[]): [after: number, before: number][] {
  const gaps: [number, number][] = [];
  let highest = 0;
  for (const message of messages) {
    if (message.type === "moderated" || message.type === "roundEnded") continue;
    const oldest = message.ids[0];
    if (
      message.type === "bids" &&
      message.ids.length === SNAPSHOT_SIZE &&
      oldest !== undefined &&
      oldest > highest + 1
    ) {
      gaps.push([highest, oldest]);
    }
    highest = Math.max(highest, ...message.ids);
  }
  return gaps;
}

export function openPage(label: string, url: string, options: PageOptions = {}): Page {
  const statuses: ConnectionStatus[] = [];
  const received: WireBid[] = [];
  const acknowledged: WireBid[] = [];
  const socketUrls: string[] = [];
  const closeCodes: number[] = [];
  const messages: PageMessage[] = [];
  const reopenedWith = { resume: 0, snapshot: 0 };
  let firstTop: number | null = null;
  let unexpectedSnapshots = 0;
  let reopenings = 0;
  let lastReceivedId = 0;
  let standing: Standing = { moderation: 0, round: 0, ended: false };
  let openingExpected = true;

  function observe(message: ServerMessage) {
    const broadcast = message.type === "bid" || message.type === "bids";
    if (broadcast && message.round > standing.round) {
      standing = { ...standing, round: message.round, ended: false };
    } else if (!broadcast && "moderation" in message) {
      standing = { moderation: message.moderation, round: message.round.number, ended: message.round.ended };
    }
    const entry = pageMessage(message);
    if (entry && (firstTop !== null || entry.type === "snapshot" || entry.type === "resume")) messages.push(entry);
    if (message.type === "snapshot" || message.type === "resume") {
      openingExpected = false;
      if (firstTop === null) {
        firstTop = Math.max(0, ...message.bids.map((bid) => bid.id));
        lastReceivedId = firstTop;
        return;
      }
      reopenings += 1;
      reopenedWith[message.type] += 1;
      if (message.type === "snapshot") {
        // The resume point the page asked with (none: it had no bid to resume after).
        const asked = new URL(socketUrls.at(-1) as string).searchParams;
        const explained =
          !asked.has(RESUME_AFTER_PARAMETER) ||
          Number(asked.get(RESUME_MODERATION_PARAMETER)) !== message.moderation ||
          Number(asked.get(RESUME_ROUND_PARAMETER)) !== message.round.number;
        if (!explained) unexpectedSnapshots += 1;
        for (const bid of message.bids.toReversed()) if (bid.id > lastReceivedId) take(bid);
        return;
      }
      for (const bid of message.bids) take(bid);
    } else if (message.type === "bid") {
      take(message.bid);
    } else if (message.type === "bids") {
      for (const bid of message.bids) take(bid);
    }
  }

  function take(bid: WireBid) {
    received.push(bid);
    lastReceivedId = Math.max(lastReceivedId, bid.id);
  }

  const connection = nodeAuctionConnection(url, {
    createSocket: (socketUrl) => {
      socketUrls.push(socketUrl);
      const socket = new WebSocket(socketUrl);
      socket.addEventListener("close", (event) => closeCodes.push(event.code));
      return socket as unknown as SocketLike;
    },
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs,
    observe: {
      message: observe,
      status: (status) => {
        statuses.push(status);
        if (status === "reconnecting") openingExpected = true;
      },
    },
  });
  connection.connect();

  function pageOutcome(outcome: StoreOutcome): BidOutcome {
    if (outcome.ok) {
      acknowledged.push(outcome.bid);
      return { kind: "accepted", bid: outcome.bid };
    }
    switch (outcome.code) {
      case "no_connection":
        return { kind: "not_sent" };
      case "timeout":
      case "connection_lost":
        return { kind: "no_answer" };
      default:
        return { kind: "refused", code: outcome.code };
    }
  }

  return {
    label,
    statuses,
    get firstTop() {
      return firstTop;
    },
    received,
    get passedOver() {
      return passedOver(messages);
    },
    get frames() {
      return messages.flatMap((message) =>
        message.type === "bid" || message.type === "bids"
          ? [{ type: message.type, lastId: message.ids.at(-1) as number, bids: message.ids.length }]
          : [],
      );
    },
    acknowledged,
    messages,
    get unexpectedSnapshots() {
      return unexpectedSnapshots;
    },
    get reopenings() {
      return reopenings;
    },
    reopenedWith,
    socketUrls,
    closeCodes,
    lastReceivedId: () => lastReceivedId,
    // Live and past the opening: a bid sent before the snapshot is fine, but the tests wait for it.
    isLive: () => statuses.at(-1) === "live" && !openingExpected,
    state: () => connection.$auction.get(),
    standing: () => standing,
    placeBid: async (bidderName, amountCents) => pageOutcome(await connection.placeBid(bidderName, amountCents)),
    stop: () => connection.stop(),
  };
}

/** A visitor's page, connected now and stopped when the current test ends. */
export function openVisitor(url: string, heartbeat: { intervalMs?: number; timeoutMs?: number } = {}) {
  const toasts: ToastInput[] = [];
  let moderation = 0;
  const connection = nodeAuctionConnection(url, {
    notify: (toast) => toasts.push(toast),
    heartbeatIntervalMs: heartbeat.intervalMs,
    heartbeatTimeoutMs: heartbeat.timeoutMs,
    observe: {
      message(message) {
        if ("moderation" in message) moderation = message.moderation;
      },
    },
  });
  connection.connect();
  onTestFinished(() => connection.stop());
  return Object.assign(connection, {
    toasts,
    /** The round ends the page announced: "Sold!"'s text, or on the winner's own page its "You won" title. */
    sold: () =>
      toasts
        .filter((toast) => toast.title === "Sold!" || toast.title.startsWith("You won"))
        .map((toast) => (toast.title === "Sold!" ? toast.description : toast.title)),
    /** The moderation version of the last list the page received. */
    moderation: () => moderation,
  });
}
export type Visitor = ReturnType<typeof openVisitor>;

/** The visitor's bid, which must be accepted. */
export async function placed(visitor: Visitor, name: string, cents: number): Promise<WireBid> {
  const outcome = await visitor.placeBid(name, cents);
  if (!outcome.ok) throw new Error(`${name}'s bid of ${cents} was refused: ${outcome.code}`);
  return outcome.bid;
}
