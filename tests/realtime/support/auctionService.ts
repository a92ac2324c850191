/**
 * One auction service instance on a real port for tests: the same createSocketServer and
 * createAppServer that realtime/main.ts wires, on a given store, with settings overridden per test.
 *
 *   const service = await startAuctionService(store, { bidRateLimit: 1000 });
 *   // service.socketUrl → ws://127.0.0.1:<port>/realtime, service.httpUrl → http://127.0.0.1:<port>
 *   await service.stop(); // drains: sockets closed with 1001
 *
 * With `payments` set in the overrides (and a store that has them) the payment routes and watcher
 * run too, as realtime/main.ts starts them; `paymentOptions` injects their clock and randomness.
 */
import type { AddressInfo } from "node:net";
import { createSocketServer, type SocketServer } from "../../../realtime/auction/socketServer.ts";
import { readServiceConfig, type ServiceConfig } from "../../../realtime/config.ts";
import type { Logger } from "../../../realtime/logger.ts";
import { createMetrics, type Metrics } from "../../../realtime/metrics.ts";
import { type Payments, type PaymentsOptions, startPayments } from "../../../realtime/payments/index.ts";
import { createAppServer } from "../../../realtime/server.ts";
import type { BidStore, StoreWithPayments } from "../../../realtime/storage/types.ts";
import { testLogger } from "./stores.ts";

export interface AuctionService {
  socketUrl: string;
  httpUrl: string;
  socketServer: SocketServer;
  metrics: Metrics;
  /** Set when the store has payments (as every store openTestStore opens does). */
  payments: Payments | null;
  stop(): Promise<void>;
}

export async function startAuctionService(
  store: BidStore,
  overrides: Partial<ServiceConfig> = {},
  logger: Logger = testLogger(),
  paymentOptions: Pick<PaymentsOptions, "now" | "randomBytes" | "timers" | "rpcTimeoutMs"> = {},
): Promise<AuctionService> {
  const config: ServiceConfig = { ...readServiceConfig({ STATIC_DIR: "" }), port: 0, host: "127.0.0.1", ...overrides };
  const metrics = createMetrics();
  const payments =
    "payments" in store
      ? startPayments({ config, store: store as StoreWithPayments, logger, metrics, ...paymentOptions })
      : null;
  const socketServer = createSocketServer(store, config, logger, metrics, payments?.sockets);
  await socketServer.start();
  const server = createAppServer(config, logger, { socketServer, metrics, store, payments: payments ?? undefined });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  return {
    socketUrl: `ws://127.0.0.1:${port}/realtime`,
    httpUrl: `http://127.0.0.1:${port}`,
    socketServer,
    metrics,
    payments,
    async stop() {
      if (stopped) return;
      stopped = true;
      await socketServer.drain();
      await payments?.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
