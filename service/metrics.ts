/**
 * Prometheus metrics of one service instance. Each instance has its own registry (tests run two
 * in one process), with Node's default process metrics in it.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ERROR_CODES } from "../src/lib/auction/protocol.ts";
import { STORAGE_FAULT_KINDS } from "./storage/storageFaults.ts";

/** Every outcome admin_moderation_actions_total counts, by action, each present from zero. */
const MODERATION_OUTCOMES: [string, string[]][] = [
  ...["hide", "restore"].map((action): [string, string[]] => [action, ["done", "unchanged", "no_such_bid"]]),
  ...["block", "unblock"].map((action): [string, string[]] => [action, ["done", "unchanged"]]),
  ...["hide_patron", "restore_patron"].map((action): [string, string[]] => [
    action,
    ["done", "unchanged", "no_such_patron"],
  ]),
  // Refused unread (a form the desk could not read), by what it was about.
  ...["bid", "name", "patron"].map((subject): [string, string[]] => [subject, ["invalid"]]),
];

/**
 * A counter of one label whose every value is present from zero, so that a rate() over it never
 * begins with a gap.
 */
function counterFromZero<Label extends string>(
  registry: Registry,
  { name, help, label, values }: { name: string; help: string; label: Label; values: readonly string[] },
): Counter<Label> {
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  for (const value of values) counter.inc({ [label]: value } as Partial<Record<Label, string>>, 0);
  return counter;
}

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const bidsRejected = counterFromZero(registry, {
    name: "auction_bids_rejected_total",
    help: "Bids refused, by error code.",
    label: "code",
    values: ERROR_CODES,
  });
  const adminSignInsRefused = counterFromZero(registry, {
    name: "admin_sign_ins_refused_total",
    help: "Operator sign-ins refused before an answer on the password: limited (429), throttled (503, the console-wide delay), busy (503), error (500).",
    label: "reason",
    values: ["limited", "throttled", "busy", "error"],
  });
  const adminSignIns = counterFromZero(registry, {
    name: "admin_sign_ins_total",
    help: "Operator sign-ins let in, by client: device (through a device cookie the database trusts) or untrusted.",
    label: "client",
    values: ["device", "untrusted"],
  });
  const bidFrames = counterFromZero(registry, {
    name: "auction_bid_frames_total",
    help: "Bid frames written to sockets under the frame budget (docs/design.md#10): one bid (bid) or several conflated (bids).",
    label: "kind",
    values: ["bid", "bids"],
  });
  const connectionsRefused = counterFromZero(registry, {
    name: "http_connections_refused_total",
    help: "Connections and requests the public listener refused: per_client (the client held MAX_CONNECTIONS_PER_CLIENT, answered 429), per_network (its /56, /48 or /24 held its share, or the reserve was left for networks holding little; 429), server_full (the listener held MAX_CONNECTIONS, closed at once).",
    label: "reason",
    values: ["per_client", "per_network", "server_full"],
  });
  const storageWriteFailures = counterFromZero(registry, {
    name: "storage_write_failures_total",
    help: "Queries the database failed with a storage fault, by kind: disk_full (no space left: not ready until there is), io_error, panic (PGlite aborted: the process exits 1).",
    label: "kind",
    values: STORAGE_FAULT_KINDS,
  });
  /**
   * The console, made after the metrics, says here what the database's sign-in failures are (null
   * when they cannot be read: the gauges keep their last values) and how many attempts it holds back.
   */
  const signInLimit: {
    failures: () => Promise<{ failures: number; keys: number } | null>;
    held: () => number;
  } = { failures: async () => null, held: () => 0 };
  /**
   * The socket server, made after the metrics, says here whether the instance is ready (what
   * /readyz answers) and whether its database is up; 0 for both until it does.
   */
  const health: { ready: () => boolean; databaseUp: () => boolean } = { ready: () => false, databaseUp: () => false };
  const moderationActions = new Counter({
    name: "admin_moderation_actions_total",
    help: "Operator actions: hide, restore, block, unblock, hide_patron, restore_patron (bid, name or patron when refused unread), by outcome.",
    labelNames: ["action", "outcome"] as const,
    registers: [registry],
  });
  for (const [action, outcomes] of MODERATION_OUTCOMES) {
    for (const outcome of outcomes) moderationActions.inc({ action, outcome }, 0);
  }
  const bidsDecided = counterFromZero(registry, {
    name: "auction_bids_decided_total",
    help: "Bids the database decided for this instance (accepted, or refused there), by outcome.",
    label: "outcome",
    values: ["accepted", "too_low", "outbid_by_maximum", "name_not_allowed"],
  });
  // Outcomes only: a maximum's amount and owner are never a label or a value.
  const maximums = counterFromZero(registry, {
    name: "auction_maximums_total",
    help: "Secret maximum bids the database decided for this instance: set (it now leads), raised (its owner's own, higher), outbid (an earlier, higher or equal maximum answered it).",
    label: "outcome",
    values: ["set", "raised", "outbid"],
  });
  return {
    registry,
    health,
    serviceReady: new Gauge({
      name: "service_ready",
      help: "1 while this instance is ready (what /readyz answers 200 for: its database reachable, LISTEN active, not shutting down), else 0.",
      registers: [registry],
      collect() {
        this.set(health.ready() ? 1 : 0);
      },
    }),
    databaseUp: new Gauge({
      name: "database_up",
      help: "1 while this instance's database is reachable and LISTEN active (PGlite: open, its disk taking writes), else 0.",
      registers: [registry],
      collect() {
        this.set(health.databaseUp() ? 1 : 0);
      },
    }),
    openSockets: new Gauge({
      name: "auction_open_sockets",
      help: "WebSocket connections open on this instance.",
      registers: [registry],
    }),
    bidsAccepted: new Counter({
      name: "auction_bids_accepted_total",
      help: "Bids accepted through this instance.",
      registers: [registry],
    }),
    bidsRejected,
    broadcastLatency: new Histogram({
      name: "auction_broadcast_latency_seconds",
      help: "From a bid notification's arrival to its frame being written to every socket of this instance; with the frame budget, per pass of frames, for the oldest bid a frame of it carried.",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    bidFrames,
    connectionsRefused,
    storageWriteFailures,
    adminLoginFailures: new Counter({
      name: "admin_login_failures_total",
      help: "Operator console sign-ins refused for a wrong password.",
      registers: [registry],
    }),
    adminSignInsRefused,
    adminSignIns,
    signInLimit,
    ...signInFailureGauges(registry, signInLimit),
    adminSignInsHeld: new Gauge({
      name: "admin_sign_ins_held",
      help: "Sign-in attempts this instance holds back before their check (the console-wide delay).",
      registers: [registry],
      collect() {
        this.set(signInLimit.held());
      },
    }),
    moderationActions,
    bidsDecided,
    maximums,
    bidBatchSize: new Histogram({
      name: "auction_bid_batch_size",
      help: "Bids per placement transaction (group commit: those that arrived while the previous one was in flight).",
      buckets: [1, 2, 4, 8, 16, 32, 64, 100],
      registers: [registry],
    }),
    roundsClosed: new Counter({
      name: "auction_rounds_closed_total",
      help: "Rounds whose end this instance recorded (each end is recorded by one instance or bid).",
      registers: [registry],
    }),
    bidsPerRound: new Histogram({
      name: "auction_bids_per_round",
      help: "Accepted bids of each round whose end this instance recorded, hidden ones included.",
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000],
      registers: [registry],
    }),
    socketsOverFrameBudget: new Counter({
      name: "auction_sockets_over_frame_budget_total",
      help: "Sockets closed (1008) for sending more frames than their budget: twice BID_RATE_LIMIT per BID_RATE_WINDOW_MS.",
      registers: [registry],
    }),
    slowSocketsDropped: new Counter({
      name: "auction_slow_sockets_dropped_total",
      help: "Sockets cut for leaving over 1 MiB unread (broadcasts or answers).",
      registers: [registry],
    }),
    ...paymentMetrics(registry),
  };
}

/** What the database's sign-in failures are (docs/design.md#9), read at each scrape. */
function signInFailureGauges(
  registry: Registry,
  signInLimit: { failures: () => Promise<{ failures: number; keys: number } | null> },
) {
  // One query per scrape for both gauges: the registry starts every collect at once, so the
  // second joins the read the first began.
  let reading: Promise<{ failures: number; keys: number } | null> | null = null;
  const readFailures = () => {
    reading ??= signInLimit.failures().finally(() => {
      reading = null;
    });
    return reading;
  };
  const gauge = (name: string, help: string, pick: "failures" | "keys") =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const read = await readFailures();
        if (read) this.set(read[pick]);
      },
    });
  return {
    adminSignInAddresses: gauge(
      "admin_sign_in_tracked_addresses",
      "Client addresses (IPv6: /64 networks) with sign-in failures in the last 15 minutes, through any instance (the database's count).",
      "keys",
    ),
    adminSignInFailures: gauge(
      "admin_sign_in_failures",
      "Sign-in failures in the last 15 minutes from any address, through any instance: from 20, every attempt is held back.",
      "failures",
    ),
  };
}

/** Real purchases (docs/design.md#8): requests, outcomes, and the watcher's calls to the chain. */
function paymentMetrics(registry: Registry) {
  return {
    paymentRequests: new Counter({
      name: "payment_requests_total",
      help: "POST /payments answers, by outcome (created, or why refused).",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    paymentOutcomes: new Counter({
      name: "payment_confirmations_total",
      help: "Transactions the watcher of this instance judged, by outcome (confirmed, underpaid, late, expired, ...).",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    paymentRpcCalls: new Counter({
      name: "payment_rpc_calls_total",
      help: "Calls to the Solana RPC, by method.",
      labelNames: ["method"] as const,
      registers: [registry],
    }),
    paymentRpcErrors: new Counter({
      name: "payment_rpc_errors_total",
      help: "Failed calls to the Solana RPC, by method and kind (rate_limited, server_error, timeout, refused, ...).",
      labelNames: ["method", "kind"] as const,
      registers: [registry],
    }),
    paymentRpcBudgetRefusals: new Counter({
      name: "payment_rpc_budget_refusals_total",
      help: "Transaction requests answered 503 because the RPC budget (PAYMENT_RPC_CALLS_PER_SECOND) kept the watcher's share.",
      registers: [registry],
    }),
    paymentRpcLatency: new Histogram({
      name: "payment_rpc_latency_seconds",
      help: "Time of each call to the Solana RPC, by method, failed ones included.",
      labelNames: ["method"] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    paymentWatcherActive: new Gauge({
      name: "payment_watcher_active",
      help: "1 while this instance holds the lease of the deployment's one payment watcher.",
      registers: [registry],
    }),
    paymentRpcState: new Gauge({
      name: "payment_rpc_state",
      help: "1 for how the watcher of this instance finds the Solana RPC: ok, limited (rate limited: slower, still selling) or unreachable (purchases refused).",
      labelNames: ["state"] as const,
      registers: [registry],
    }),
    paymentsAvailable: new Gauge({
      name: "payments_available",
      help: "1 while this instance takes payment requests (payments on, the chain read and reachable, the database ready).",
      registers: [registry],
    }),
    paymentSetAside: new Counter({
      name: "payment_transactions_set_aside_total",
      help: "Transactions under a reference the watcher could not judge after a few tries, set aside for the operator.",
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
