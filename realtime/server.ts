/**
 * The one HTTP server of the store: the operations routes, the built pages, and the /realtime
 * WebSocket endpoint of the live auction on the same port.
 */
import { createServer, type Server } from "node:http";
import { createAdminConsole, isAdminPath } from "./admin/console.ts";
import type { SocketServer } from "./auction/socketServer.ts";
import { createWinnersRoute } from "./auctionWinners.ts";
import type { ServiceConfig } from "./config.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { handleOperations } from "./operations.ts";
import type { PaymentRoute } from "./payments/routes.ts";
import { SERVICE_HEADERS } from "./securityHeaders.ts";
import { createStaticSite } from "./staticSite.ts";
import type { BidStore } from "./storage/types.ts";

export interface AuctionEndpoint {
  socketServer: SocketServer;
  metrics: Metrics;
  /** What the operator console reads and moderates. */
  store: BidStore;
  /** The payment routes (docs/design.md#8); only /payments/config while payments are off. */
  payments?: { route: PaymentRoute };
}

type AdminHandler = ReturnType<typeof createAdminConsole>;

/** Without an auction (pages only) there is no socket endpoint, no operations routes and no winners. */
export function createAppServer(
  // staticDir is required; admin and trustProxy turn the operator console on; the rest is accepted
  // so callers can pass a whole ServiceConfig.
  config: Pick<ServiceConfig, "staticDir"> & Partial<ServiceConfig>,
  logger: Logger,
  auction?: AuctionEndpoint,
): Server {
  const admin: AdminHandler | undefined =
    auction && config.admin
      ? createAdminConsole({
          admin: config.admin,
          trustProxy: config.trustProxy ?? 0,
          logger,
          metrics: auction.metrics,
          store: auction.store,
        })
      : undefined;
  const site = config.staticDir ? createStaticSite(config.staticDir, logger) : undefined;
  const operations = auction && {
    isReady: () => auction.socketServer.isReady(),
    registry: auction.metrics.registry,
  };
  const winners =
    auction && createWinnersRoute({ store: auction.store, allowedOrigins: config.allowedOrigins ?? [], logger });
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(SERVICE_HEADERS)) res.setHeader(name, value);
    if (operations && handleOperations(req, res, operations)) return;
    if (winners?.(req, res)) return;
    if (auction?.payments?.route(req, res)) return;
    if (admin && isAdminPath(req.url)) {
      admin(req, res).catch((error: unknown) => {
        logger.error({ err: error }, "the operator console failed");
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
        res.end('{"error":"internal"}');
      });
      return;
    }
    if (site) {
      // The pages carry the build's headers instead (a service CSP of default-src 'none' would blank them).
      for (const name of Object.keys(SERVICE_HEADERS)) res.removeHeader(name);
      site(req, res);
      return;
    }
    res.writeHead(404, { "Content-Type": "application/json" }).end('{"error":"not_found"}');
  });
  if (auction) {
    server.on("upgrade", (req, socket, head) => auction.socketServer.handleUpgrade(req, socket, head));
  }
  return server;
}
