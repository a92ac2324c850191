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
import { nextWinningCents } from "../../src/lib/auction/bidRules.ts";
import {
  type ClientMessage,
  parseServerMessage,
  RESUME_AFTER_PARAMETER,
  RESUME_MODERATION_PARAMETER,
  RESUME_ROUND_PARAMETER,
  type ServerMessage,
  SNAPSHOT_SIZE,
} from "../../src/lib/auction/protocol.ts";
import { readBidFrame } from "./bidFrames.ts";
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
      /** Watchers: each keeps what its page would show, from every bid frame, one bid or several (docs/design.md#10). */
      watch?: boolean;
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
  | { type: "collectWatch"; accepts: AcceptedBid[]; windowStartMs: number; windowEndMs: number }
  | { type: "compareState"; expected: WatchedState }
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
  /**
   * closed mode: one bidder in this many (the last of each group: none below that many bidders)
   * keeps a secret maximum instead (docs/protocol.md#maximum-bids), raised by MAXIMUM_STEPS
   * increments above the highest with each answer. Only for a service that knows the message.
   */
  maximumShare?: number;
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
  /** Maximums answered maximumSet (set or raised); their refusals are in otherErrors by code. */
  maximumsSet: number;
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

/** What a page shows, in ids: the newest bid, the bidder count and its list (newest first, SNAPSHOT_SIZE at most). */
export interface WatchedState {
  lastId: number;
  bidders: number;
  ids: number[];
}

export interface WatchResult {
  /** From each accepted bid to each sampled watcher reading a frame that carries it or a later bid. */
  fromAck: SparseHistogram;
  fromSend: SparseHistogram;
  /** Bid frames each watcher read per second within the window (those dropped meanwhile too, until then). */
  framesPerSecond: { max: number; mean: number; watchers: number };
  /** The most frames one watcher read within one second of the window (any run of 10 buckets of 100 ms). */
  mostFramesInOneSecond: number;
  /** Watchers whose frames the latencies are measured on. */
  latencySample: number;
  /** Watchers open now; watchers the service closed since startRecording. */
  watchers: number;
  dropped: number;
  duplicatesOrOutOfOrder: number;
  framesNotRecorded: number;
  /** Frames that were not bid frames as the service writes them. */
  unreadable: number;
}

export interface StateComparison {
  equal: number;
  different: number;
  /** A few of the differences, for the report. */
  examples: string[];
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
/** Arrivals kept per phase (16 bytes each); beyond it they are counted, not kept. */
const MAX_ARRIVALS = 8_000_000;
/** Watchers' frames kept per phase (24 bytes each), of the sampled watchers only. */
const MAX_WATCHED_FRAMES = 3_000_000;
/**
 * Watchers per generator whose frames are kept for the latencies (spread over the order they
 * connected, which is the order the service serves them in): without the frame budget each reads
 * every bid, tens of thousands a phase, too many to keep for 2,000.
 */
const LATENCY_SAMPLE_PER_GENERATOR = 40;
/** The watchers' frames are counted in buckets this long: frames per second, and the most in any one second. */
const FRAME_BUCKET_MS = 100;
const ERRORS_KEPT = 5;

/** A watcher's page, in ids (docs/design.md#10). */
interface Watch {
  bidders: number;
  /** Its frames' latencies are measured (kept in watchedFrames). */
  sampled: boolean;
  /** Its frames since startRecording, by FRAME_BUCKET_MS since then. */
  buckets: Map<number, number>;
  /** The newest SNAPSHOT_SIZE ids it was sent, a ring. */
  ring: Int32Array;
  ringNext: number;
  ringLength: number;
}

interface Receiver {
  socket: RawSocket;
  lastId: number;
  paused: boolean;
  /** Closed by this process (closeReceivers, reconnectAll), not by the service. */
  closing: boolean;
  watch: Watch | null;
}

/**
 * Rows of numbers, `width` to a row, in one typed array that doubles as it fills, up to `cap` rows;
 * beyond it rows are counted, not kept.
 */
class Rows {
  length = 0;
  dropped = 0;
  private data: Float64Array;
  private readonly width: number;
  private readonly cap: number;
  constructor(width: number, cap: number) {
    this.width = width;
    this.cap = cap;
    this.data = new Float64Array(width << 16);
  }

  push(a: number, b: number, c = 0, d = 0): void {
    if ((this.length + 1) * this.width > this.data.length) {
      if (this.length >= this.cap) {
        this.dropped += 1;
        return;
      }
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    const at = this.length * this.width;
    this.data[at] = a;
    this.data[at + 1] = b;
    if (this.width > 2) this.data[at + 2] = c;
    if (this.width > 3) this.data[at + 3] = d;
    this.length += 1;
  }

  get(row: number, column: number): number {
    return this.data[row * this.width + column] ?? 0;
  }

  clear(): void {
    this.length = 0;
    this.dropped = 0;
  }
}

const receivers: Receiver[] = [];
let recording = false;
/** [id, time] of each broadcast the receivers read. */
const arrivals = new Rows(2, MAX_ARRIVALS);
/** [time, newest id, the watcher's newest before] of each bid frame the sampled watchers read. */
const watchedFrames = new Rows(3, MAX_WATCHED_FRAMES);
/** The watchers open at startRecording (those dropped since included), and when it began. */
let recordedWatches: Watch[] = [];
let recordingStartedAt = 0;
let duplicatesOrOutOfOrder = 0;
let watchersDropped = 0;
let unreadableFrames = 0;
let floorId = 0;
let floorWaiters: (() => void)[] = [];
let stopBidding = false;

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
  if (recording) arrivals.push(id, atMs);
}

function watchId(watch: Watch, id: number): void {
  watch.ring[watch.ringNext] = id;
  watch.ringNext = (watch.ringNext + 1) % SNAPSHOT_SIZE;
  watch.ringLength = Math.min(SNAPSHOT_SIZE, watch.ringLength + 1);
}

/** A bid frame to a watcher: its page takes the bids, and the frame is logged with the id it follows. */
function watcherFrame(receiver: Receiver, watch: Watch, data: Buffer, start: number, stop: number, atMs: number): void {
  const reading = readBidFrame(data, start, stop, (id) => watchId(watch, id));
  if (!reading) {
    unreadableFrames += 1;
    return;
  }
  const before = receiver.lastId;
  if (reading.lastId <= before) duplicatesOrOutOfOrder += 1;
  receiver.lastId = reading.lastId;
  watch.bidders = reading.bidders;
  if (!recording) return;
  const bucket = Math.floor((atMs - recordingStartedAt) / FRAME_BUCKET_MS);
  watch.buckets.set(bucket, (watch.buckets.get(bucket) ?? 0) + 1);
  if (watch.sampled) watchedFrames.push(atMs, reading.lastId, before);
}

/** The watcher's list, newest first. */
function watchedIds(watch: Watch): number[] {
  const ids: number[] = [];
  for (let back = 1; back <= watch.ringLength; back += 1) {
    ids.push(watch.ring[(watch.ringNext - back + SNAPSHOT_SIZE) % SNAPSHOT_SIZE] ?? 0);
  }
  return ids;
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
  watch = false,
): Promise<ConnectResult> {
  const startedAt = nowMs();
  const histogram = new LatencyHistogram();
  const errors: string[] = [];
  let failed = 0;
  let resumes = 0;
  await inParallel(count, concurrency, async (index) => {
    const after = resumeFrom?.lastIds[index];
    const receiver: Receiver = {
      socket: undefined as unknown as RawSocket,
      lastId: after ?? 0,
      paused: false,
      closing: false,
      watch: watch
        ? {
            bidders: 0,
            sampled: false,
            buckets: new Map(),
            ring: new Int32Array(SNAPSHOT_SIZE),
            ringNext: 0,
            ringLength: 0,
          }
        : null,
    };
    const watching = receiver.watch;
    try {
      const target = after
        ? `${url}?${RESUME_AFTER_PARAMETER}=${after}&${RESUME_MODERATION_PARAMETER}=${resumeFrom?.standing.moderation}` +
          `&${RESUME_ROUND_PARAMETER}=${resumeFrom?.standing.round}`
        : url;
      const opened = await openSocket(target, {
        ...(watching
          ? { onBidFrame: (data, start, stop, atMs) => watcherFrame(receiver, watching, data, start, stop, atMs) }
          : { onBroadcast: (id, atMs) => receiverBroadcast(receiver, id, atMs) }),
        onClose: () => {
          const at = receivers.indexOf(receiver);
          if (at >= 0) receivers.splice(at, 1);
          if (watching && !receiver.closing) watchersDropped += 1;
        },
      });
      receiver.socket = opened.socket;
      const opening = openingOf(opened.first);
      receiver.lastId = Math.max(receiver.lastId, opening.highest?.id ?? 0);
      if (watching) {
        watching.bidders = opening.bidders;
        for (const bid of opening.bids.toReversed()) watchId(watching, bid.id);
      }
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
  for (const receiver of closing) receiver.closing = true;
  await closeSockets(closing.map((receiver) => receiver.socket));
  return receivers.length;
}

/** Cuts every receiving socket at once, then opens as many again at once: a reconnect storm. */
async function reconnectAll(url: string, resume: ResumeStanding | null, concurrency: number): Promise<ConnectResult> {
  const old = receivers.splice(0);
  const lastIds = old.map((receiver) => receiver.lastId);
  for (const receiver of old) {
    receiver.closing = true;
    receiver.socket.terminate();
  }
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
  for (let index = 0; index < arrivals.length; index += 1) {
    const id = arrivals.get(index, 0);
    const at = arrivals.get(index, 1);
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
    delivered: arrivals.length + arrivals.dropped,
    missing,
    duplicatesOrOutOfOrder,
    arrivalsDropped: arrivals.dropped,
    receivers: live,
  };
  arrivals.clear();
  duplicatesOrOutOfOrder = 0;
  return result;
}

/** The first index of `sortedIds` whose id is above `id`. */
function firstAbove(sortedIds: Float64Array, id: number): number {
  let low = 0;
  let high = sortedIds.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((sortedIds[middle] ?? 0) <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Starts counting the watchers' frames, and keeping those of a sample spread over them. */
function startWatchRecording(): void {
  recordedWatches = receivers.flatMap((receiver) => (receiver.watch ? [receiver.watch] : []));
  const stride = Math.max(1, Math.ceil(recordedWatches.length / LATENCY_SAMPLE_PER_GENERATOR));
  recordedWatches.forEach((watch, index) => {
    watch.sampled = index % stride === 0;
    watch.buckets.clear();
  });
  recordingStartedAt = nowMs();
}

/** A watcher's frames in the window's whole buckets, per second, and the most in any second's run of buckets. */
function frameRates(
  watch: Watch,
  firstBucket: number,
  lastBucket: number,
): { perSecond: number; mostInOneSecond: number } {
  const perSecondBuckets = 1000 / FRAME_BUCKET_MS;
  const counts: number[] = [];
  for (let bucket = firstBucket; bucket <= lastBucket; bucket += 1) counts.push(watch.buckets.get(bucket) ?? 0);
  let inWindow = 0;
  let lastSecond = 0;
  let mostInOneSecond = 0;
  counts.forEach((count, index) => {
    inWindow += count;
    lastSecond += count - (counts[index - perSecondBuckets] ?? 0);
    mostInOneSecond = Math.max(mostInOneSecond, lastSecond);
  });
  return { perSecond: inWindow / (Math.max(1, counts.length) / perSecondBuckets), mostInOneSecond };
}

/**
 * The watchers' frames since startRecording: each accepted bid's latency to each sampled watcher
 * (to the first frame that carries it or a later bid, i.e. covers it), and every watcher's frames
 * per second within the window (whole buckets), those the service dropped meanwhile included.
 */
function collectWatch(accepts: AcceptedBid[], windowStartMs: number, windowEndMs: number): WatchResult {
  recording = false;
  const sorted = accepts.toSorted((a, b) => a[0] - b[0]);
  const ids = Float64Array.from(sorted, (accept) => accept[0]);
  const fromAck = new LatencyHistogram();
  const fromSend = new LatencyHistogram();
  for (let row = 0; row < watchedFrames.length; row += 1) {
    const at = watchedFrames.get(row, 0);
    const newest = watchedFrames.get(row, 1);
    const before = watchedFrames.get(row, 2);
    for (let index = firstAbove(ids, before); index < sorted.length && (ids[index] ?? 0) <= newest; index += 1) {
      const accept = sorted[index] as AcceptedBid;
      fromSend.record(at - accept[1]);
      fromAck.record(at - accept[2]);
    }
  }
  const firstBucket = Math.ceil((windowStartMs - recordingStartedAt) / FRAME_BUCKET_MS);
  const lastBucket = Math.floor((windowEndMs - recordingStartedAt) / FRAME_BUCKET_MS) - 1;
  const rates = recordedWatches.map((watch) => frameRates(watch, firstBucket, lastBucket));
  const perSecond = rates.map((rate) => rate.perSecond);
  const watching = receivers.filter((receiver) => receiver.watch !== null);
  const result: WatchResult = {
    fromAck: fromAck.toSparse(),
    fromSend: fromSend.toSparse(),
    framesPerSecond: {
      max: Math.max(0, ...perSecond),
      mean: perSecond.length === 0 ? 0 : perSecond.reduce((sum, rate) => sum + rate, 0) / perSecond.length,
      watchers: perSecond.length,
    },
    mostFramesInOneSecond: Math.max(0, ...rates.map((rate) => rate.mostInOneSecond)),
    latencySample: recordedWatches.filter((watch) => watch.sampled).length,
    watchers: watching.length,
    dropped: watchersDropped,
    duplicatesOrOutOfOrder,
    framesNotRecorded: watchedFrames.dropped,
    unreadable: unreadableFrames,
  };
  watchedFrames.clear();
  watchersDropped = 0;
  unreadableFrames = 0;
  duplicatesOrOutOfOrder = 0;
  return result;
}

/** Each open watcher's page against the state the database holds. */
function compareState(expected: WatchedState): StateComparison {
  const comparison: StateComparison = { equal: 0, different: 0, examples: [] };
  const wanted = expected.ids.join();
  for (const receiver of receivers) {
    const { watch } = receiver;
    if (!watch) continue;
    const ids = watchedIds(watch);
    if (receiver.lastId === expected.lastId && watch.bidders === expected.bidders && ids.join() === wanted) {
      comparison.equal += 1;
      continue;
    }
    comparison.different += 1;
    if (comparison.examples.length < ERRORS_KEPT) {
      comparison.examples.push(
        `last id ${receiver.lastId} (want ${expected.lastId}), bidders ${watch.bidders} (want ${expected.bidders}), ` +
          `newest ${ids.slice(0, 3).join(",")}… of ${ids.length} (want ${expected.ids.slice(0, 3).join(",")}… of ${expected.ids.length})`,
      );
    }
  }
  return comparison;
}

// ---------------------------------------------------------------------------------------------
// Bidders

type Answer = Extract<ServerMessage, { type: "accepted" | "error" | "maximumSet" }>;

/**
 * How far above every bid sent a bidder's maximum goes with each raise, in increments: odd, as plain
 * bids step two at a time beside maximums, so that they seldom tie one exactly.
 */
const MAXIMUM_STEPS = 11;

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
    if (answer.type !== "accepted" && answer.type !== "error" && answer.type !== "maximumSet") return;
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
    maximumsSet: 0,
    accepts: [],
    answers: { buckets: [], count: 0, minMs: 0, maxMs: 0 },
    highestIdAtStart,
  };
  const answerTimes = new LatencyHistogram();
  let lastAcceptedId = 0;
  // Each bid the smallest that wins over the highest this process knows (0: none), its own bids in
  // flight included.
  const winningOver = (cents: number) => nextWinningCents(cents === 0 ? null : cents);
  let nextCents = winningOver(highestCents);
  const name = (index: number) =>
    command.nameLength ? "💸".repeat(command.nameLength) : `Bench Bidder ${String(index).padStart(3, "0")}`;

  /** Sends one message and waits for its answer (null: none in time), recording the time to it. */
  async function ask(bidder: Bidder, message: ClientMessage & { requestId: string }) {
    const sentAt = nowMs();
    const answer = await new Promise<Answer | null>((resolve) => {
      const timer = setTimeout(() => {
        bidder.waiting.delete(message.requestId);
        resolve(null);
      }, ANSWER_TIMEOUT_MS);
      bidder.waiting.set(message.requestId, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      bidder.socket.send(JSON.stringify(message));
    });
    const ackAt = nowMs();
    if (answer === null) result.timeouts += 1;
    else answerTimes.record(ackAt - sentAt);
    return { answer, sentAt, ackAt };
  }

  const maximumShare = command.maximumShare ?? 0;
  const keepsMaximum = (bidderIndex: number) => maximumShare > 0 && bidderIndex % maximumShare === maximumShare - 1;
  const ownMaximums = new Map<number, number>();

  /**
   * Raises this bidder's secret maximum to MAXIMUM_STEPS increments above every bid sent (the next
   * amount) or its own maximum, so that the pre-check and the database see it above the highest.
   */
  async function raiseMaximum(bidder: Bidder, bidderIndex: number): Promise<void> {
    let cents = Math.max(nextCents, ownMaximums.get(bidderIndex) ?? 0);
    for (let step = 0; step < MAXIMUM_STEPS; step += 1) cents = winningOver(cents);
    ownMaximums.set(bidderIndex, cents);
    requestCounter += 1;
    const { answer } = await ask(bidder, {
      type: "maximum",
      requestId: `m${requestCounter}`,
      bidderName: name(bidderIndex),
      maximum: cents / 100,
      // 22 to 128 characters of [A-Za-z0-9_-]: one secret per bidder of the run.
      bidderSecret: `bench-maximum-secret-${String(bidderIndex).padStart(3, "0")}`,
    });
    if (answer?.type === "maximumSet") {
      result.maximumsSet += 1;
      if (answer.bid) {
        lastAcceptedId = Math.max(lastAcceptedId, answer.bid.id);
        highestCents = Math.max(highestCents, answer.bid.amountCents);
      }
    } else if (answer?.type === "error") {
      const code = answer.code ?? "unknown";
      result.otherErrors[code] = (result.otherErrors[code] ?? 0) + 1;
      highestCents = Math.max(highestCents, answer.highestCents ?? 0);
    }
  }

  /** Places one bid; resolves with whether it was refused as too low (then counted in tooLow). */
  async function placeOne(bidder: Bidder, bidderIndex: number): Promise<boolean> {
    const cents = Math.max(nextCents, winningOver(highestCents));
    // Under a leading maximum, a bid is answered by an automatic bid one increment above it: the
    // next bid leaves room for it, or bids in flight together would be refused as too low.
    nextCents = nextWinningCents(maximumShare > 0 ? nextWinningCents(cents) : cents);
    requestCounter += 1;
    const { answer, sentAt, ackAt } = await ask(bidder, {
      type: "bid",
      requestId: `b${requestCounter}`,
      bidderName: name(bidderIndex),
      amount: cents / 100,
    });
    if (answer === null || answer.type === "maximumSet") {
      // Timed out (counted by ask), or an answer no bid gets.
    } else if (answer.type === "accepted") {
      result.accepted += 1;
      lastAcceptedId = Math.max(lastAcceptedId, answer.bid.id);
      // Passed at once by a maximum's automatic bid: at most one increment above this one.
      const passedBy = answer.outbidByMaximum ? nextWinningCents(answer.bid.amountCents) : 0;
      highestCents = Math.max(highestCents, answer.bid.amountCents, passedBy);
      if (command.returnAccepts) result.accepts.push([answer.bid.id, sentAt, ackAt]);
    } else if (answer.code === "too_low") {
      result.tooLow += 1;
      highestCents = Math.max(highestCents, answer.highestCents ?? 0);
      return true;
    } else {
      const code = answer.code ?? "unknown";
      result.otherErrors[code] = (result.otherErrors[code] ?? 0) + 1;
      // outbid_by_maximum: it tied the leading maximum, whose automatic bid is now the highest.
      highestCents = Math.max(highestCents, answer.highestCents ?? 0);
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
          if (keepsMaximum(bidderIndex)) await raiseMaximum(bidder, bidderIndex);
          else await placeOne(bidder, bidderIndex);
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
      return connectReceivers(
        command.url,
        command.count,
        command.concurrency,
        command.pauseFirst ?? false,
        undefined,
        command.watch ?? false,
      );
    case "closeReceivers":
      return closeReceivers(command.count);
    case "reconnectAll":
      return reconnectAll(command.url, command.resume, command.concurrency);
    case "startRecording":
      arrivals.clear();
      watchedFrames.clear();
      startWatchRecording();
      duplicatesOrOutOfOrder = 0;
      watchersDropped = 0;
      unreadableFrames = 0;
      recording = true;
      return null;
    case "collect":
      return collect(command.accepts, command.windowStartMs, command.windowEndMs);
    case "collectWatch":
      return collectWatch(command.accepts, command.windowStartMs, command.windowEndMs);
    case "compareState":
      return compareState(command.expected);
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
