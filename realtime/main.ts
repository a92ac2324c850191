/**
 * Entry point: `npm run serve` (and `npm start`, after a build; the container runs it too).
 * Opens the auction store (PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR), then serves the
 * pages, the /realtime socket and the operations routes on one port. SIGTERM or SIGINT drains:
 * no new connections or bids, the bids at the store answered, sockets closed with 1001, exit 0.
 */
import type { Server } from "node:http";
import { createSocketServer, type SocketServer } from "./auction/socketServer.ts";
import { readServiceConfig, ServiceConfigError } from "./config.ts";
import { createServiceLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { type Payments, startPayments } from "./payments/index.ts";
import { createAppServer } from "./server.ts";
import { openBidStore } from "./storage/index.ts";

let config: ReturnType<typeof readServiceConfig>;
try {
  config = readServiceConfig();
} catch (error) {
  if (!(error instanceof ServiceConfigError)) throw error;
  console.error(`Configuration error: ${error.message}`);
  process.exit(2);
}
const logger = await createServiceLogger(config.logLevel);

let stopping = false;
let socketServer: SocketServer | undefined;
let server: Server | undefined;
let payments: Payments | undefined;

// Handlers first: a signal while the store opens (PGlite takes seconds on a new directory) still
// closes it cleanly instead of killing the process mid-write.
process.once("SIGTERM", shutDown);
process.once("SIGINT", shutDown);

const storeOpening = openBidStore({
  databaseUrl: config.databaseUrl ?? undefined,
  dataDir: config.dataDir,
  pgliteTemplateDir: config.pgliteTemplateDir ?? undefined,
  logger,
  rounds: config.rounds,
});

async function start() {
  const store = await storeOpening.catch((error: unknown) => {
    logger.fatal({ err: error }, `could not open the auction store: ${(error as Error).message}`);
    process.exit(1);
  });
  if (stopping) return;
  const metrics = createMetrics();
  payments = startPayments({ config, store, logger, metrics });
  socketServer = createSocketServer(store, config, logger, metrics, { payments: payments.sockets });
  await socketServer.start();
  if (stopping) return;
  const app = createAppServer(config, logger, { socketServer, metrics, store, payments });
  server = app;
  app.once("error", async (error) => {
    logger.fatal({ err: error }, `could not listen on ${config.host}:${config.port}: ${error.message}`);
    await store.close().catch(() => {});
    process.exit(1);
  });
  app.listen(config.port, config.host, () => {
    const address = app.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const shownHost = config.host === "127.0.0.1" || config.host === "0.0.0.0" ? "localhost" : config.host;
    logger.info(
      { host: config.host, port, backend: store.backend },
      `The Nothing Store is open at http://${shownHost}:${port}`,
    );
  });
}

async function shutDown(signal: NodeJS.Signals) {
  stopping = true;
  logger.info({ signal, openSockets: socketServer?.openSockets ?? 0 }, "shutting down");
  const deadline = setTimeout(() => {
    logger.error({ timeoutMs: config.shutdownTimeoutMs }, "shutdown took too long; exiting anyway");
    process.exit(1);
  }, config.shutdownTimeoutMs);
  try {
    // No new connections; idle keep-alive page requests are let go at once.
    server?.close();
    server?.closeIdleConnections();
    await socketServer?.drain();
    await payments?.stop();
    server?.closeAllConnections();
    // A store that failed to open has exited the process already.
    await (await storeOpening).close();
    clearTimeout(deadline);
    logger.info("stopped");
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, "shutdown failed");
    process.exit(1);
  }
}

await start();
