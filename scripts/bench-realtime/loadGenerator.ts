/**
 * One load-generator process of the realtime benchmark (forked by scripts/bench-realtime.ts, never
 * run by hand). It holds receiving sockets and/or bidders, and answers the coordinator's commands
 * over the IPC channel. Every wait is bounded; the process exits when its parent goes away.
 *
 * Times are wall-clock milliseconds with sub-millisecond resolution (performance.timeOrigin +
 * performance.now()): every process of the benchmark runs on this one machine, so their clocks agree.
 * Every socket, receiving or bidding, is a RawSocket (rawSocket.ts): a broadcast costs a frame header
 * and an id read, so the generators are not what saturates first.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ClientMessage,
  parseServerMessage,
  RESUME_AFTER_PARAMETER,
  RESUME_MODERATION_PARAMETER,
  RESUME_ROUND_PARAMETER,
  type ServerMessage,
} from "../../src/lib/auction/protocol.ts";
import { LatencyHistogram, type SparseHistogram } from "./latencyHistogram.ts";
import { nowMs, type OpenedRawSocket, openRawSocket, type RawSocket, type RawSocketHandlers } from "./rawSocket.ts";

// ---------------------------------------------------------------------------------------------
// Commands and answers (imported as types by the coordinator)

export type Command =
  | {
      type: "connect";
      url: string;
      count: number;
      /** Handshakes in flight at once. */
      concurrency: number;
      /** Stop reading the first new socket once its opening arrived: the slow consumer. */
      pauseFirst?: boolean;
    }
  | { type: "closeReceivers"; count: number }
  | {
      type: "reconnectAll";
      url: string;
      /** Resume from each socket's last id, at this moderation version and round (else snapshots). */
      resume: ResumeStanding | null;
      concurrency: number;
    }
  | { type: "startRecording" }
  | { type: "collect"; accepts: AcceptedBid[]; windowStartMs: number; windowEndMs: number }
  | BidCommand
  | {
      /**
       * The paused socket (the slow consumer) sends `ping`s at this rate without reading the pongs,
       * until its socket closes, durationMs passes or the coordinator says stopBidding.
       */
      type: "slowPings";
      perSecond: number;
      durationMs: number;
    }
  | { type: "status" };

export interface BidCommand {
  type: "bid";
  url: string;
  bidders: number;
  durationMs: number;
  /** paced: one bid every 1000/ratePerSecond ms whatever the answers; closed: each bidder waits for its answer. */
  mode: "paced" | "closed";
  ratePerSecond?: number;
  /**
   * closed mode: at most this many accepted bids not yet delivered to every receiving socket (the
   * coordinator sends the floor), so the service is kept busy without flooding the receivers.
   */
  window?: number;
  /** Code points per bidder name (4 UTF-8 bytes each: bigger broadcasts); default a short name. */
  nameLength?: number;
  /** Return every accepted bid with its times (for latencies); throughput runs only count. */
  returnAccepts: boolean;
}

/** What a resume names besides the last id: the moderation version and the round the page shows. */
export interface ResumeStanding {
  moderation: number;
  round: number;
}

/** [bid id, sent at, acknowledgement read at]. */
export type AcceptedBid = [id: number, sentAtMs: number, ackAtMs: number];

export interface ConnectResult {
  opened: number;
  failed: number;
  errors: string[];
  /** From starting the handshake to reading the first message (snapshot or resume). */
  firstMessage: SparseHistogram;
  durationMs: number;
  /** How many of the opening messages were resumes (the rest snapshots). */
  resumes: number;
}

export interface SlowPingsResult {
  sent: number;
  /** [time, pings sent so far], one entry per tick: the coordinator counts those sent before the drop. */
  ticks: [atMs: number, sent: number][];
}

export interface BidResult {
  startedAtMs: number;
  endedAtMs: number;
  accepted: number;
  tooLow: number;
  otherErrors: Record<string, number>;
  timeouts: number;
  accepts: AcceptedBid[];
  /** Bid to answer (accepted or refused), at the bidder: from sending the bid to reading its answer. */
  answers: SparseHistogram;
  /** The highest bid's id in the bidders' openings: about how many bids the auction held before the run. */
  highestIdAtStart: number;
}

export interface CollectResult {
  fromAck: SparseHistogram;
  fromSend: SparseHistogram;
  /** Broadcasts read by the receiving sockets between windowStartMs and windowEndMs. */
  deliveredInWindow: number;
  /** Broadcasts read by the receiving sockets since startRecording, whenever. */
  delivered: number;
  /** Accepted bids times live receiving sockets, minus the broadcasts that arrived. */
  missing: number;
  duplicatesOrOutOfOrder: number;
  arrivalsDropped: number;
  receivers: number;
}

export type GeneratorEvent =
  | { type: "reply"; id: number; result?: unknown; error?: string }
  | { type: "progress"; lowestLastId: number };

export type CoordinatorMessage =
  | { type: "command"; id: number; command: Command }
  | { type: "floor"; id: number }
  /** Ends a bid run early (the slow consumer was dropped). */
  | { type: "stopBidding" };

// ---------------------------------------------------------------------------------------------
// State

const HANDSHAKE_TIMEOUT_MS = 30_000;
const ANSWER_TIMEOUT_MS = 10_000;
const PROGRESS_INTERVAL_MS = 20;
const FLOOR_WAIT_MS = 5_000;
const MAX_OUTSTANDING_PACED = 1_000;
const PACED_ATTEMPTS = 3;
/** Arrivals kept per phase (12 bytes each); beyond it they are counted, not kept. */
const MAX_ARRIVALS = 8_000_000;
const ERRORS_KEPT = 5;

interface Receiver {
  socket: RawSocket;
  lastId: number;
  paused: boolean;
}

const receivers: Receiver[] = [];
let recording = false;
let arrivalIds = new Int32Array(1 << 16);
let arrivalTimes = new Float64Array(1 << 16);
let arrivals = 0;
let arrivalsDropped = 0;
let duplicatesOrOutOfOrder = 0;
let floorId = 0;
let floorWaiters: (() => void)[] = [];
let stopBidding = false;

function recordArrival(id: number, at: number): void {
  if (arrivals === arrivalIds.length) {
    if (arrivals >= MAX_ARRIVALS) {
      arrivalsDropped += 1;
      return;
    }
    const ids = new Int32Array(arrivals * 2);
    ids.set(arrivalIds);
    arrivalIds = ids;
    const times = new Float64Array(arrivals * 2);
    times.set(arrivalTimes);
    arrivalTimes = times;
  }
  arrivalIds[arrivals] = id;
  arrivalTimes[arrivals] = at;
  arrivals += 1;
}

/** A message other than a broadcast, validated by the protocol's own schemas. */
function serverMessage(text: string): ServerMessage {
  const parsed = parseServerMessage(text);
  if (!parsed.ok) throw new Error(`the service sent a message the protocol refuses: ${parsed.reason}`);
  return parsed.message;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// Sockets

/** Opens one socket and resolves once its first message (the opening) arrived. */
function openSocket(url: string, handlers: RawSocketHandlers): Promise<OpenedRawSocket> {
  return openRawSocket(url, handlers, HANDSHAKE_TIMEOUT_MS);
}

function receiverBroadcast(receiver: Receiver, id: number, atMs: number): void {
  // The slow consumer is not one of "the others": once the service cuts it, what its paused TCP
  // socket still held would be read tens of seconds late, and pass for their latency.
  if (receiver.paused) return;
  if (id <= receiver.lastId) duplicatesOrOutOfOrder += 1;
  receiver.lastId = id;
  if (recording) recordArrival(id, atMs);
}

/** A socket's first message: its snapshot or its resume. */
function openingOf(text: string): Extract<ServerMessage, { type: "snapshot" | "resume" }> {
  const message = serverMessage(text);
  if (message.type !== "snapshot" && message.type !== "resume") {
    throw new Error(`a socket opened with ${message.type}, not a snapshot or a resume`);
  }
  return message;
}

/** Runs `work` over `items` with at most `concurrency` at once. */
async function inParallel<T>(count: number, concurrency: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  async function lane() {
    while (next < count) {
      const index = next;
      next += 1;
      results[index] = await work(index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return results;
}

async function connectReceivers(
  url: string,
  count: number,
  concurrency: number,
  pauseFirst: boolean,
  resumeFrom?: { lastIds: number[]; standing: ResumeStanding },
): Promise<ConnectResult> {
  const startedAt = nowMs();
  const histogram = new LatencyHistogram();
  const errors: string[] = [];
  let failed = 0;
  let resumes = 0;
  await inParallel(count, concurrency, async (index) => {
    const after = resumeFrom?.lastIds[index];
    const receiver: Receiver = { socket: undefined as unknown as RawSocket, lastId: after ?? 0, paused: false };
    try {
      const target = after
        ? `${url}?${RESUME_AFTER_PARAMETER}=${after}&${RESUME_MODERATION_PARAMETER}=${resumeFrom?.standing.moderation}` +
          `&${RESUME_ROUND_PARAMETER}=${resumeFrom?.standing.round}`
        : url;
      const opened = await openSocket(target, {
        onBroadcast: (id, atMs) => receiverBroadcast(receiver, id, atMs),
        onClose: () => {
          const at = receivers.indexOf(receiver);
          if (at >= 0) receivers.splice(at, 1);
        },
      });
      receiver.socket = opened.socket;
      const opening = openingOf(opened.first);
      receiver.lastId = Math.max(receiver.lastId, opening.highest?.id ?? 0);
      if (opening.type === "resume") resumes += 1;
      histogram.record(opened.tookMs);
      if (pauseFirst && index === 0) {
        // The TCP socket stops being read: what the service sends piles up in its buffers.
        opened.socket.pause();
        receiver.paused = true;
      }
      if (opened.socket.isOpen) receivers.push(receiver);
    } catch (error) {
      failed += 1;
      if (errors.length < ERRORS_KEPT) errors.push(errorText(error));
    }
  });
  return {
    opened: count - failed,
    failed,
    errors,
    firstMessage: histogram.toSparse(),
    durationMs: nowMs() - startedAt,
    resumes,
  };
}

const PING_TICK_MS = 10;
const PING = JSON.stringify({ type: "ping" });

async function slowPings(perSecond: number, durationMs: number): Promise<SlowPingsResult> {
  const slow = receivers.find((receiver) => receiver.paused);
  if (!slow) throw new Error("no paused socket to ping from");
  const started = nowMs();
  const deadline = started + durationMs;
  const ticks: [number, number][] = [];
  let sent = 0;
  // Bounded by the deadline; stops early once the service closed the socket or the phase ended.
  while (nowMs() < deadline && !stopBidding && slow.socket.isOpen) {
    // Catch up to the rate from the start, so a late timer does not lower it.
    const due = Math.min(Math.floor(((nowMs() - started) / 1000) * perSecond), sent + perSecond);
    for (; sent < due; sent++) slow.socket.send(PING);
    ticks.push([nowMs(), sent]);
    await sleep(PING_TICK_MS);
  }
  return { sent, ticks };
}

async function closeSockets(sockets: RawSocket[]): Promise<void> {
  await Promise.all(sockets.map((socket) => socket.close()));
}

async function closeReceivers(count: number): Promise<number> {
  const closing = receivers.splice(Math.max(0, receivers.length - count));
  await closeSockets(closing.map((receiver) => receiver.socket));
  return receivers.length;
}

/** Cuts every receiving socket at once, then opens as many again at once: a reconnect storm. */
async function reconnectAll(url: string, resume: ResumeStanding | null, concurrency: number): Promise<ConnectResult> {
  const old = receivers.splice(0);
  const lastIds = old.map((receiver) => receiver.lastId);
  for (const receiver of old) receiver.socket.terminate();
  return connectReceivers(url, old.length, concurrency, false, resume ? { lastIds, standing: resume } : undefined);
}

function lowestLastId(): number {
  let lowest = Number.POSITIVE_INFINITY;
  for (const receiver of receivers) if (!receiver.paused && receiver.lastId < lowest) lowest = receiver.lastId;
  return lowest;
}

function collect(accepts: AcceptedBid[], windowStartMs: number, windowEndMs: number): CollectResult {
  recording = false;
  const times = new Map<number, AcceptedBid>();
  for (const accept of accepts) times.set(accept[0], accept);
  const fromAck = new LatencyHistogram();
  const fromSend = new LatencyHistogram();
  const perBid = new Map<number, number>();
  let deliveredInWindow = 0;
  for (let index = 0; index < arrivals; index += 1) {
    const id = arrivalIds[index] ?? 0;
    const at = arrivalTimes[index] ?? 0;
    if (at >= windowStartMs && at <= windowEndMs) deliveredInWindow += 1;
    const accept = times.get(id);
    if (!accept) continue;
    perBid.set(id, (perBid.get(id) ?? 0) + 1);
    fromSend.record(at - accept[1]);
    fromAck.record(at - accept[2]);
  }
  const live = receivers.filter((receiver) => !receiver.paused).length;
  let missing = 0;
  for (const [id] of accepts) missing += Math.max(0, live - (perBid.get(id) ?? 0));
  const result: CollectResult = {
    fromAck: fromAck.toSparse(),
    fromSend: fromSend.toSparse(),
    deliveredInWindow,
    delivered: arrivals + arrivalsDropped,
    missing,
    duplicatesOrOutOfOrder,
    arrivalsDropped,
    receivers: live,
  };
  arrivals = 0;
  arrivalsDropped = 0;
  duplicatesOrOutOfOrder = 0;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Bidders

type Answer = Extract<ServerMessage, { type: "accepted" | "error" }>;

interface Bidder {
  socket: RawSocket;
  waiting: Map<string, (answer: Answer) => void>;
}

function waitForFloor(limitId: number, deadline: number): Promise<void> {
  if (floorId >= limitId || nowMs() >= deadline) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(FLOOR_WAIT_MS, Math.max(0, deadline - nowMs())));
    floorWaiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function runBidders(command: BidCommand): Promise<BidResult> {
  // Every bid of a run comes from this process: its amounts rise with each bid sent, and a refusal
  // as too low names the highest to go above. Broadcasts (every bidder's socket receives each) stop
  // at the socket's frame scanner, never read here.
  let highestCents = 0;
  let highestIdAtStart = 0;
  let requestCounter = 0;
  const bidders: Bidder[] = [];
  const onMessage = (bidder: Bidder) => (text: string) => {
    const answer = serverMessage(text);
    if (answer.type !== "accepted" && answer.type !== "error") return;
    if (answer.requestId === undefined) return;
    bidder.waiting.get(answer.requestId)?.(answer);
    bidder.waiting.delete(answer.requestId);
  };
  try {
    for (let index = 0; index < command.bidders; index += 1) {
      const bidder: Bidder = { socket: undefined as unknown as RawSocket, waiting: new Map() };
      const opened = await openSocket(command.url, { onMessage: onMessage(bidder) });
      bidder.socket = opened.socket;
      const highest = openingOf(opened.first).highest;
      highestCents = Math.max(highestCents, highest?.amountCents ?? 0);
      highestIdAtStart = Math.max(highestIdAtStart, highest?.id ?? 0);
      bidders.push(bidder);
    }
  } catch (error) {
    await closeSockets(bidders.map((bidder) => bidder.socket));
    throw new Error(`a bidder could not connect: ${errorText(error)}`);
  }

  const result: BidResult = {
    startedAtMs: 0,
    endedAtMs: 0,
    accepted: 0,
    tooLow: 0,
    otherErrors: {},
    timeouts: 0,
    accepts: [],
    answers: { buckets: [], count: 0, minMs: 0, maxMs: 0 },
    highestIdAtStart,
  };
  const answerTimes = new LatencyHistogram();
  let lastAcceptedId = 0;
  // Each bid above the highest this process knows, its own bids in flight included.
  let nextCents = highestCents + 1;
  const name = (index: number) =>
    command.nameLength ? "💸".repeat(command.nameLength) : `Bench Bidder ${String(index).padStart(3, "0")}`;

  /** Places one bid; resolves with whether it was refused as too low (then counted in tooLow). */
  async function placeOne(bidder: Bidder, bidderIndex: number): Promise<boolean> {
    const cents = Math.max(nextCents, highestCents + 1);
    nextCents = cents + 1;
    requestCounter += 1;
    const requestId = `b${requestCounter}`;
    const sentAt = nowMs();
    const answer = await new Promise<Answer | null>((resolve) => {
      const timer = setTimeout(() => {
        bidder.waiting.delete(requestId);
        resolve(null);
      }, ANSWER_TIMEOUT_MS);
      bidder.waiting.set(requestId, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      bidder.socket.send(
        JSON.stringify({
          type: "bid",
          requestId,
          bidderName: name(bidderIndex),
          amount: cents / 100,
        } satisfies ClientMessage),
      );
    });
    const ackAt = nowMs();
    if (answer !== null) answerTimes.record(ackAt - sentAt);
    if (answer === null) {
      result.timeouts += 1;
    } else if (answer.type === "accepted") {
      result.accepted += 1;
      lastAcceptedId = Math.max(lastAcceptedId, answer.bid.id);
      highestCents = Math.max(highestCents, answer.bid.amountCents);
      if (command.returnAccepts) result.accepts.push([answer.bid.id, sentAt, ackAt]);
    } else if (answer.code === "too_low") {
      result.tooLow += 1;
      highestCents = Math.max(highestCents, answer.highestCents ?? 0);
      return true;
    } else {
      const code = answer.code ?? "unknown";
      result.otherErrors[code] = (result.otherErrors[code] ?? 0) + 1;
    }
    return false;
  }

  /**
   * A paced bid again at once when refused as too low: bids in flight together can reach the row
   * lock out of order (the service's pool runs them side by side), and a refused one would be a
   * missing tick of the pace.
   */
  async function placePaced(bidder: Bidder, bidderIndex: number): Promise<void> {
    for (let attempt = 0; attempt < PACED_ATTEMPTS; attempt += 1) {
      if (!(await placeOne(bidder, bidderIndex))) return;
    }
  }

  result.startedAtMs = nowMs();
  const plannedEnd = result.startedAtMs + command.durationMs;
  stopBidding = false;
  const running = () => nowMs() < plannedEnd && !stopBidding;
  if (command.mode === "paced") {
    const intervalMs = 1000 / (command.ratePerSecond ?? 10);
    const inFlight = new Set<Promise<void>>();
    for (let index = 0; running(); index += 1) {
      const dueAt = result.startedAtMs + index * intervalMs;
      const wait = dueAt - nowMs();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight.size >= MAX_OUTSTANDING_PACED) continue;
      const bidderIndex = index % bidders.length;
      const placing = placePaced(bidders[bidderIndex] as Bidder, bidderIndex);
      inFlight.add(placing);
      void placing.finally(() => inFlight.delete(placing));
    }
    result.endedAtMs = nowMs();
    await Promise.all(inFlight);
  } else {
    const window = command.window ?? Number.POSITIVE_INFINITY;
    await Promise.all(
      bidders.map(async (bidder, bidderIndex) => {
        while (running()) {
          while (lastAcceptedId - floorId > window && running())
            await waitForFloor(lastAcceptedId - window, plannedEnd);
          if (!running()) break;
          await placeOne(bidder, bidderIndex);
        }
      }),
    );
    result.endedAtMs = nowMs();
  }
  await closeSockets(bidders.map((bidder) => bidder.socket));
  result.answers = answerTimes.toSparse();
  return result;
}

// ---------------------------------------------------------------------------------------------
// The IPC loop

function send(event: GeneratorEvent): void {
  process.send?.(event);
}

async function run(command: Command): Promise<unknown> {
  switch (command.type) {
    case "connect":
      return connectReceivers(command.url, command.count, command.concurrency, command.pauseFirst ?? false);
    case "closeReceivers":
      return closeReceivers(command.count);
    case "reconnectAll":
      return reconnectAll(command.url, command.resume, command.concurrency);
    case "startRecording":
      arrivals = 0;
      arrivalsDropped = 0;
      duplicatesOrOutOfOrder = 0;
      recording = true;
      return null;
    case "collect":
      return collect(command.accepts, command.windowStartMs, command.windowEndMs);
    case "bid":
      return runBidders(command);
    case "slowPings":
      stopBidding = false;
      return slowPings(command.perSecond, command.durationMs);
    case "status":
      return { receivers: receivers.length, lowestLastId: lowestLastId() };
  }
}

let lastReported = -1;
setInterval(() => {
  if (!recording) return;
  const lowest = lowestLastId();
  if (lowest === lastReported || !Number.isFinite(lowest)) return;
  lastReported = lowest;
  send({ type: "progress", lowestLastId: lowest });
}, PROGRESS_INTERVAL_MS);

process.on("message", (message: CoordinatorMessage) => {
  if (message.type === "stopBidding") {
    stopBidding = true;
    for (const wake of floorWaiters.splice(0)) wake();
    return;
  }
  if (message.type === "floor") {
    floorId = Math.max(floorId, message.id);
    const waiters = floorWaiters;
    floorWaiters = [];
    for (const wake of waiters) wake();
    return;
  }
  run(message.command).then(
    (result) => send({ type: "reply", id: message.id, result }),
    (error: unknown) => send({ type: "reply", id: message.id, error: errorText(error) }),
  );
});
// Never outlive the coordinator.
process.on("disconnect", () => process.exit(0));
