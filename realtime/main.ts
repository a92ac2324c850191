/** Entry point: `npm run serve` (and `npm start`, after a build). */
import { readServiceConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { createAppServer } from "./server.ts";

const config = readServiceConfig();
const logger = createLogger(config.logLevel);
const server = createAppServer(config, logger);

server.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const shownHost = config.host === "127.0.0.1" || config.host === "0.0.0.0" ? "localhost" : config.host;
  logger.info({ host: config.host, port }, `The Nothing Store is open at http://${shownHost}:${port}`);
});

function shutDown(signal: NodeJS.Signals) {
  logger.info({ signal }, "shutting down");
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once("SIGTERM", shutDown);
process.once("SIGINT", shutDown);
