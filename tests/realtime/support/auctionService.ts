/**
 * One auction service instance on a real port for tests: the same createSocketServer and
 * createAppServer that realtime/main.ts wires, on a given store, with settings overridden per test.
 *
 *   const service = await startAuctionService(store, { bidRateLimit: 1000 });
 *   // service.socketUrl → ws://127.0.0.1:<port>/realtime, service.httpUrl → http://127.0.0.1:<port>
 *   await service.stop(); // drains: sockets closed with 1001
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createSocketServer,
  type SocketServer,
  type SocketServerOptions,
} from "../../../realtime/auction/socketServer.ts";
import { readServiceConfig, type ServiceConfig } from "../../../realtime/config.ts";
import type { Logger } from "../../../realtime/logger.ts";
import { createMetrics, type Metrics } from "../../../realtime/metrics.ts";
import { createAppServer } from "../../../realtime/server.ts";
import type { BidStore } from "../../../realtime/storage/types.ts";
import { testLogger } from "./stores.ts";

export interface AuctionService {
  socketUrl: string;
  httpUrl: string;
  socketServer: SocketServer;
  metrics: Metrics;
  /** The HTTP server, for tests that check it still listens. */
  server: Server;
  stop(): Promise<void>;
}

export async function startAuctionService(
  store: BidStore,
  overrides: Partial<ServiceConfig> = {},
  logger: Logger = testLogger(),
  options: SocketServerOptions = {},
): Promise<AuctionService> {
  const config: ServiceConfig = { ...readServiceConfig({ STATIC_DIR: "" }), port: 0, host: "127.0.0.1", ...overrides };
  const metrics = createMetrics();
  const socketServer = createSocketServer(store, config, logger, metrics, options);
  await socketServer.start();
  const server = createAppServer(config, logger, { socketServer, metrics, store });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  return {
    socketUrl: `ws://127.0.0.1:${port}/realtime`,
    httpUrl: `http://127.0.0.1:${port}`,
    socketServer,
    metrics,
    server,
    async stop() {
      if (stopped) return;
      stopped = true;
      await socketServer.drain();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
