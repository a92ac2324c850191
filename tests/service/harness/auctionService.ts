/**
 * One auction service instance on a real port for tests: the same createSocketServer and
 * createAppServer that service/main.ts wires, on a given store, with settings overridden per test.
 *
 *   const service = await startAuctionService(store, { bidRateLimit: 1000 });
 *   // service.socketUrl → ws://127.0.0.1:<port>/realtime, service.httpUrl → http://127.0.0.1:<port>
 *   // service.metricsUrl → http://127.0.0.1:<another port>/metrics (the metrics listener)
 *   await service.stop(); // drains: sockets closed with 1001
 *
 * serviceForThisTest and startInstances do the same and stop it when the current test ends.
 * With `payments` set in the overrides (and a store that has them) the payment routes and watcher
 * run too, as service/main.ts starts them; `paymentOptions` injects their clock and randomness.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import {
  createSocketServer,
  type SocketServer,
  type SocketServerOptions,
} from "../../../service/auction/socketServer.ts";
import { readServiceConfig, type ServiceConfig } from "../../../service/config.ts";
import type { Logger } from "../../../service/logger.ts";
import { createMetrics, type Metrics } from "../../../service/metrics.ts";
import { type Payments, type PaymentsOptions, startPayments } from "../../../service/payments/index.ts";
import { createAppServer, createMetricsServer } from "../../../service/server.ts";
import type { BidStore, RoundSettings, StoreWithPayments } from "../../../service/storage/types.ts";
import { buildTestSite, type TestSite } from "./builtSite.ts";
import { serviceUrls } from "./serviceProcess.ts";
import {
  cleanUpAfter,
  openStoreOnNewLocation,
  type SuiteStore,
  storeForThisTest,
  type TestLocation,
  testLogger,
} from "./stores.ts";

export interface AuctionService {
  socketUrl: string;
  httpUrl: string;
  socketServer: SocketServer;
  metrics: Metrics;
  /** /metrics on the metrics listener, a free port of its own (docs/design.md#9). */
  metricsUrl: string;
  /** The HTTP server, for tests that check it still listens. */
  server: Server;
  /** Set when the store has payments (as every store openTestStore opens does). */
  payments: Payments | null;
  stop(): Promise<void>;
}

export async function startAuctionService(
  store: BidStore,
  overrides: Partial<ServiceConfig> = {},
  logger: Logger = testLogger(),
  /** The socket server's clock, and the payments' clock, randomness, timers and RPC deadline. */
  options: Pick<SocketServerOptions, "now"> & {
    paymentOptions?: Pick<PaymentsOptions, "now" | "randomBytes" | "timers" | "rpcTimeoutMs">;
  } = {},
): Promise<AuctionService> {
  const config: ServiceConfig = { ...readServiceConfig({ STATIC_DIR: "" }), port: 0, host: "127.0.0.1", ...overrides };
  const metrics = createMetrics();
  const payments =
    "payments" in store
      ? startPayments({ config, store: store as StoreWithPayments, logger, metrics, ...options.paymentOptions })
      : null;
  const socketServer = createSocketServer(store, config, logger, metrics, {
    now: options.now,
    payments: payments?.sockets,
  });
  await socketServer.start();
  const server = createAppServer(config, logger, { socketServer, metrics, store, payments: payments ?? undefined });
  const metricsServer = createMetricsServer(metrics.registry, logger);
  const port = await listenOnFreePort(server);
  const metricsPort = await listenOnFreePort(metricsServer);
  let stopped = false;
  return {
    ...serviceUrls(port, metricsPort),
    socketServer,
    metrics,
    server,
    payments,
    async stop() {
      if (stopped) return;
      stopped = true;
      metricsServer.close();
      await socketServer.drain();
      await payments?.stop();
      for (const listener of [server, metricsServer]) listener.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function listenOnFreePort(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** startAuctionService, stopped when the current test ends. */
export async function serviceForThisTest(
  store: BidStore,
  overrides: Partial<ServiceConfig> = {},
  logger: Logger = testLogger(),
  options: Parameters<typeof startAuctionService>[3] = {},
): Promise<AuctionService> {
  const service = await startAuctionService(store, overrides, logger, options);
  cleanUpAfter(() => service.stop());
  return service;
}

export interface Instance {
  store: BidStore;
  service: AuctionService;
  port: number;
}

/**
 * `count` service instances on one location, each on a store of its own as separate processes
 * would be, limits lifted unless `overrides` says otherwise; stopped and closed when the test ends.
 */
export async function startInstances(
  location: TestLocation,
  count: number,
  options: { overrides?: Partial<ServiceConfig>; rounds?: RoundSettings } = {},
): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (let i = 0; i < count; i++) {
    const store = await storeForThisTest(location, { rounds: options.rounds });
    const service = await serviceForThisTest(store, options.overrides ?? LIFTED_LIMITS);
    instances.push({ store, service, port: Number(new URL(service.httpUrl).port) });
  }
  return instances;
}

export interface ServedTestSite {
  site: TestSite;
  auction: SuiteStore;
  service: AuctionService;
  /** The public port. */
  port: number;
  /** Stops the service, then removes the store and the site. */
  remove(): Promise<void>;
}

/**
 * For a suite's beforeAll: a built test site (builtSite.ts) and the auction on a new PGlite store,
 * served by one service with `overrides`. `storeView` stands between the service and the store
 * (a test's fault injection).
 */
export async function serveTestSite(
  options: { overrides?: Partial<ServiceConfig>; logger?: Logger; storeView?: (store: BidStore) => BidStore } = {},
): Promise<ServedTestSite> {
  const site = await buildTestSite();
  const auction = await openStoreOnNewLocation("pglite");
  const store = options.storeView ? options.storeView(auction.store) : auction.store;
  const service = await startAuctionService(store, { staticDir: site.dir, ...options.overrides }, options.logger);
  return {
    site,
    auction,
    service,
    port: Number(new URL(service.httpUrl).port),
    async remove() {
      await service.stop();
      await auction.remove();
      await site.remove();
    },
  };
}
