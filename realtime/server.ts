/**
 * The one HTTP server of the store: the built pages today; the /realtime WebSocket endpoint and
 * the health and metrics routes join it with the live auction.
 */
import { createServer, type Server } from "node:http";
import type { ServiceConfig } from "./config.ts";
import type { Logger } from "./logger.ts";
import { createStaticSite } from "./staticSite.ts";

export function createAppServer(config: ServiceConfig, logger: Logger): Server {
  const site = config.staticDir ? createStaticSite(config.staticDir, logger) : undefined;
  return createServer((req, res) => {
    if (site) {
      site(req, res);
      return;
    }
    res.writeHead(404, { "Content-Type": "application/json" }).end('{"error":"not_found"}');
  });
}
