/**
 * Entry point: `npm run serve` (and `npm start`, after a build; the container runs it too).
 * Opens the auction store (PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR), then serves
 * /metrics on its own listener (METRICS_HOST:METRICS_PORT) and the pages, the /realtime socket,
 * /healthz and /readyz on the public port. SIGTERM or SIGINT drains: no new connections (on either
 * listener) or bids, the bids at the store answered, sockets closed with 1001, exit 0. A signal
 * repeated during the drain is logged and changes nothing (`npm run serve` forwards the signal a
 * supervisor may also send the whole process group); SHUTDOWN_TIMEOUT_MS bounds the drain.
 * SIGUSR2 writes a backup of PGlite's directory into it (pgliteBackup.ts; `npm run backup` sends it).
 * A setting that stops the start exits 2 naming it, and so does a payment mint the store cannot
 * sell for (read from the chain before the port opens, payments/tokenExtensions.ts); a failure
 * starting again may cure exits 1 (startFailures.ts), and so does PGlite's engine aborting (a
 * PANIC, say on a full disk): the restart recovers from its write-ahead log, where waiting would
 * wedge the process for good.
 */
import type { Server } from "node:http";
import { createSocketServer, type SocketServer } from "./auction/socketServer.ts";
import {
  checkBuiltPaymentAddress,
  checkStaticDir,
  configWarnings,
  readServiceConfig,
  ServiceConfigError,
} from "./config.ts";
import { createServiceLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { type Payments, startPayments } from "./payments/index.ts";
import { createAppServer, createMetricsServer } from "./server.ts";
import { listenFailure, type StartFailure, storeFailure, unsellableFailure } from "./startFailures.ts";
import { openLine, shownHost } from "./startLine.ts";
import { openBidStore } from "./storage/index.ts";
import { backupOnSignal } from "./storage/pgliteBackup.ts";
import type { BidStore } from "./storage/types.ts";

let config: ReturnType<typeof readServiceConfig>;
try {
  config = readServiceConfig();
  checkStaticDir(config.staticDir);
  checkBuiltPaymentAddress(config);
} catch (error) {
  if (!(error instanceof ServiceConfigError)) throw error;
  console.error(`Configuration error: ${error.message}`);
  process.exit(2);
}
const logger = await createServiceLogger(config.logLevel);
for (const warning of configWarnings()) logger.warn(warning);

let stopping = false;
let socketServer: SocketServer | undefined;
let server: Server | undefined;
let metricsServer: Server | undefined;
let payments: Payments | undefined;
/** What the process exits with once drained: 0, or 2 when a setting found unusable stopped it. */
let exitCode = 0;

// Handlers first: a signal while the store opens (PGlite takes seconds on a new directory) still
// closes it cleanly instead of killing the process mid-write.
process.on("SIGTERM", shutDown);
process.on("SIGINT", shutDown);

// Before the store, which counts its storage faults in them from the start.
const metrics = createMetrics();

const storeOpening = openBidStore({
  databaseUrl: config.databaseUrl ?? undefined,
  dataDir: config.dataDir,
  pgliteTemplateDir: config.pgliteTemplateDir ?? undefined,
  logger,
  rounds: config.rounds,
  faults: {
    onWriteFailure: (kind) => metrics.storageWriteFailures.inc({ kind }),
    onFatal: engineAborted,
  },
});

// An operator's backup of PGlite's directory, taken by the process that holds it (`npm run backup`).
process.on(
  "SIGUSR2",
  backupOnSignal({ store: storeOpening, dataDir: config.dataDir, logger, isStopping: () => stopping }),
);

/**
 * PGlite's engine aborted: called from within its failing call, so the process exits before any
 * other call (a bid, the shutdown's close) enters the wedged engine and spins there, deaf to
 * SIGTERM. Every acknowledged bid was committed to the write-ahead log, which the restart replays.
 */
function engineAborted(reason: string): never {
  logger.fatal(
    { reason, exitCode: 1 },
    "the embedded database (PGlite) aborted; exiting so that a restart recovers it from its write-ahead log",
  );
  process.exit(1);
}

async function start() {
  const store = await storeOpening.catch((error: unknown) =>
    exitWith(storeFailure(error, config.databaseUrl, config.dataDir)),
  );
  if (stopping) return;
  payments = startPayments({
    config,
    store,
    logger,
    metrics,
    onUnsellable: (error) => refuseAfterOpening(unsellableFailure(error)),
  });
  // The mint is read before the port opens (one call, at most the RPC's deadline), so that a mint
  // the store cannot sell for stops the start before anyone is served; an RPC that does not answer
  // leaves payments unavailable and the auction starting, as before.
  await payments.firstRead();
  if (stopping) return;
  socketServer = createSocketServer(store, config, logger, metrics, { payments: payments.sockets });
  await socketServer.start();
  if (stopping) return;
  metricsServer = createMetricsServer(metrics.registry, logger);
  const metricsPort = await listenOrExit(metricsServer, config.metricsPort, config.metricsHost, store, {
    host: "METRICS_HOST",
    port: "METRICS_PORT",
  });
  logger.info(
    { host: config.metricsHost, port: metricsPort },
    `Metrics for Prometheus at http://${shownHost(config.metricsHost)}:${metricsPort}/metrics`,
  );
  if (stopping) return;
  const app = createAppServer(config, logger, { socketServer, metrics, store, payments });
  server = app;
  const port = await listenOrExit(app, config.port, config.host, store, { host: "HOST", port: "PORT" });
  const open = openLine({ config, port, metricsPort });
  logger.info(open.fields, open.msg);
  const { fileLimit, maxConnections, maxConnectionsPerClient } = config;
  logger.info(
    { fileLimit, maxConnections, maxConnectionsPerClient },
    `At most ${maxConnections} connections at once (file limit ${fileLimit ?? "unknown"}), ${maxConnectionsPerClient} per client`,
  );
}

function exitWith({ exitCode, msg, fields }: StartFailure): never {
  logger.fatal(fields, msg);
  process.exit(exitCode);
}

/** A setting found unusable once the store is open (a payment mint): said once, then a drain, then its exit code. */
function refuseAfterOpening(failure: StartFailure) {
  if (stopping) return;
  logger.fatal(failure.fields, failure.msg);
  exitCode = failure.exitCode;
  void shutDown("refused");
}

/** Listens, resolving with the port taken (0 picks one); a failure to listen stops the process, naming the setting. */
function listenOrExit(
  listener: Server,
  port: number,
  host: string,
  store: BidStore,
  settings: Parameters<typeof listenFailure>[3],
) {
  return new Promise<number>((resolve) => {
    listener.once("error", async (error) => {
      const failure = listenFailure(error, host, port, settings);
      await store.close().catch(() => {});
      exitWith(failure);
    });
    listener.listen(port, host, () => {
      const address = listener.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

async function shutDown(signal: NodeJS.Signals | "refused") {
  if (stopping) {
    logger.info({ signal }, "already shutting down");
    return;
  }
  stopping = true;
  logger.info({ signal, openSockets: socketServer?.openSockets ?? 0 }, "shutting down");
  const deadline = setTimeout(() => {
    logger.error({ timeoutMs: config.shutdownTimeoutMs }, "shutdown took too long; exiting anyway");
    process.exit(1);
  }, config.shutdownTimeoutMs);
  try {
    // No new connections; idle keep-alive requests (pages, a scraper's) are let go at once.
    for (const listener of [server, metricsServer]) {
      listener?.close();
      listener?.closeIdleConnections();
    }
    await socketServer?.drain();
    await payments?.stop();
    server?.closeAllConnections();
    metricsServer?.closeAllConnections();
    // A store that failed to open has exited the process already.
    await (await storeOpening).close();
    clearTimeout(deadline);
    logger.info("stopped");
    process.exit(exitCode);
  } catch (error) {
    logger.error({ err: error }, "shutdown failed");
    process.exit(1);
  }
}

await start();
