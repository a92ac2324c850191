/** What a run measures and how much: the full benchmark, or a quick smoke run of about a minute. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIDDER_NAME_MAX_CODE_POINTS } from "../../src/lib/auction/bidRules.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const RESULTS_DIR = join(ROOT, "bench", "results");
export const GENERATOR_FILE = join(ROOT, "scripts", "bench-realtime", "loadGenerator.ts");
export const BARE_SERVER_FILE = join(ROOT, "scripts", "bench-realtime", "bareServer.ts");
export const STORE_LOAD_FILE = join(ROOT, "scripts", "bench-realtime", "storeLoad.ts");
export const INSERT_LOAD_FILE = join(ROOT, "scripts", "bench-realtime", "insertLoad.ts");

export const SERVICE_START_TIMEOUT_MS = 120_000;
export const CONNECT_CONCURRENCY = 64;
export const SATURATION_WINDOW = 64;
export const SATURATION_BIDDERS = 8;
/** Settling time before memory is read, so the ramp's garbage and buffers are not counted. */
export const MEMORY_SETTLE_MS = 3_000;
export const DRAIN_TIMEOUT_MS = 15_000;
export const METRICS_POLL_MS = 250;
/** Longest bidder name: 40 code points of 4 UTF-8 bytes each, for the slow consumer's big broadcasts. */
export const LONG_NAME_CODE_POINTS = BIDDER_NAME_MAX_CODE_POINTS;
/**
 * The service's bound in the slow-consumer run (MAX_BUFFERED_BYTES; the service's default is 1 MiB).
 * Small, so that the time to the drop is mostly the kernel's buffers filling, which no setting changes.
 */
export const SLOW_CONSUMER_MAX_BUFFERED_BYTES = 65_536;
/** `{"type":"bid",…}` with a 40-code-point name: 274 bytes of JSON and a 4-byte frame header (ids and amounts vary a little). */
export const LONG_BROADCAST_FRAME_BYTES = 118 + LONG_NAME_CODE_POINTS * 4;
/** `{"type":"pong"}` and a 2-byte frame header. */
export const PONG_FRAME_BYTES = 17;
/** The cluster runs with PostgreSQL's durable defaults, not the test suite's fsync=off. */
export const DURABLE_SETTINGS = ["fsync = on", "synchronous_commit = on", "full_page_writes = on"];
export const REPORTED_SETTINGS = [
  "fsync",
  "synchronous_commit",
  "full_page_writes",
  "wal_level",
  "shared_buffers",
  "max_connections",
  "commit_delay",
];

export interface Plan {
  quick: boolean;
  generators: number;
  heldSockets: number;
  fanOutSizes: number[];
  phaseMs: number;
  throughputMs: number;
  throughputBidders: number[];
  storeConcurrency: number[];
  /** The service's batches (place_auction_bids) with no service, one transaction at a time. */
  storeBatchSizes: number[];
  /** The plain-insert ceiling's concurrency (docs/design.md#6c: 16), for throughputMs. */
  insertConcurrency: number;
  slowConsumerSockets: number;
  /** The slow-consumer run ends here if the socket was not dropped before. */
  slowConsumerMaxMs: number;
  /** The same load without the slow consumer, for the others' latency to compare with. */
  slowConsumerBaselineMs: number;
  /** Pings the slow socket sends (never reading the pongs), on top of the broadcasts it does not read. */
  slowConsumerPingsPerSecond: number;
  stormSockets: number;
  /** The conflation phase (docs/design.md#10): watchers on instance B, bidders on A, each load's length. */
  conflationWatchers: number;
  conflationBidders: number;
  conflationMs: number;
}

export const FULL: Plan = {
  quick: false,
  generators: 4,
  heldSockets: 10_000,
  fanOutSizes: [5_000, 1_000],
  phaseMs: 10_000,
  throughputMs: 8_000,
  throughputBidders: [1, 10, 100],
  storeConcurrency: [1, 10, 100],
  storeBatchSizes: [5, 50, 100],
  insertConcurrency: 16,
  slowConsumerSockets: 1_000,
  slowConsumerMaxMs: 60_000,
  slowConsumerBaselineMs: 20_000,
  slowConsumerPingsPerSecond: 5_000,
  stormSockets: 1_000,
  conflationWatchers: 2_000,
  conflationBidders: 100,
  conflationMs: 10_000,
};

export const QUICK: Plan = {
  quick: true,
  generators: 2,
  heldSockets: 400,
  fanOutSizes: [300, 100],
  phaseMs: 1_500,
  throughputMs: 1_500,
  throughputBidders: [1, 10, 100],
  storeConcurrency: [10],
  storeBatchSizes: [50],
  insertConcurrency: 16,
  slowConsumerSockets: 100,
  slowConsumerMaxMs: 45_000,
  slowConsumerBaselineMs: 5_000,
  slowConsumerPingsPerSecond: 5_000,
  stormSockets: 100,
  conflationWatchers: 200,
  conflationBidders: 20,
  conflationMs: 2_000,
};

export type Backend = "postgres" | "pglite";
