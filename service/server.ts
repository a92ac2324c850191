/**
 * The HTTP servers of the store. The public one: /healthz and /readyz, the built pages, and the
 * /realtime WebSocket endpoint of the live auction on one port. The metrics listener: /metrics
 * alone, on a port of its own (METRICS_PORT, docs/design.md#9). On both, every request and upgrade
 * has its target parsed once (requestTarget.ts) and runs guarded (requestGuard.ts): no request can
 * stop the service (docs/design.md#11); and on both, connections are capped and timed
 * (connectionLimits.ts): no client can hold them all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Registry } from "prom-client";
import { createActionRoutes } from "./actions/routes.ts";
import type { SocketServer } from "./auction/socketServer.ts";
import { createWinnersRoute } from "./auction/winnersRoute.ts";
import type { ServiceConfig } from "./config.ts";
import { createAdminConsole, isAdminPath } from "./console/routes.ts";
import { answerJson } from "./http/answers.ts";
import {
  type ConnectionGuard,
  type ConnectionLimits,
  type ConnectionRefusals,
  DEFAULT_CONNECTION_LIMITS,
  guardConnections,
  serverOptions,
} from "./http/connectionLimits.ts";
import { answerSafely, refuseTarget, refuseUpgrade, upgradeSafely } from "./http/requestGuard.ts";
import { parseRequestTarget, type RequestTarget } from "./http/requestTarget.ts";
import { SERVICE_HEADERS } from "./http/securityHeaders.ts";
import { createStaticSite } from "./http/staticSite.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { handleHealth, handleMetrics } from "./operations.ts";
import type { PaymentDesk } from "./payments/desk.ts";
import type { PaymentRoute } from "./payments/routeShared.ts";
import type { BidStore, StoreWithPayments } from "./storage/types.ts";

export interface AuctionEndpoint {
  socketServer: SocketServer;
  metrics: Metrics;
  /** What the operator console reads and moderates. */
  store: BidStore;
  /**
   * The payment routes (docs/design.md#8); only /payments/config and /payments/patrons while payments
   * are off. Its desk is what the Actions routes (the store as a blink) buy through.
   */
  payments?: { route: PaymentRoute; desk?: PaymentDesk | undefined };
}

type AdminHandler = ReturnType<typeof createAdminConsole>;

/** false leaves the request to the next route; true means answered; a promise, being answered. */
type Route = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => boolean | Promise<void>;

/** Without an auction (pages only) there is no socket endpoint, no health routes and no winners. */
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
          trustedProxies: config.trustedProxies,
          logger,
          metrics: auction.metrics,
          store: auction.store,
          // Payments on: settings given and a store that keeps them (docs/design.md#8).
          payments:
            config.payments && "payments" in auction.store
              ? { store: (auction.store as StoreWithPayments).payments, explorerTxUrl: config.payments.explorerTxUrl }
              : undefined,
        })
      : undefined;
  const site = config.staticDir ? createStaticSite(config.staticDir, logger, config.staticSiteClock) : undefined;
  const health = auction && { isReady: () => auction.socketServer.isReady() };
  const winners =
    auction && createWinnersRoute({ store: auction.store, allowedOrigins: config.allowedOrigins ?? [], logger });
  const routes: Route[] = [];
  if (health) routes.push((req, res, target) => handleHealth(req, res, target, health));
  if (winners) routes.push(winners);
  const payments = auction?.payments;
  if (payments) routes.push(payments.route);
  if (auction) routes.push(createActionRoutes({ desk: payments?.desk, logger, now: Date.now }));
  if (admin) routes.push((req, res, target) => isAdminPath(target.path) && admin(req, res, target));
  if (site) {
    routes.push((req, res, target) => {
      // The pages carry the build's headers instead (a service CSP of default-src 'none' would blank them).
      for (const name of Object.keys(SERVICE_HEADERS)) res.removeHeader(name);
      site(req, res, target);
      return true;
    });
  }

  const limits: ConnectionLimits = {
    maxConnectionsPerClient: config.maxConnectionsPerClient ?? DEFAULT_CONNECTION_LIMITS.maxConnectionsPerClient,
    headersTimeoutMs: config.headersTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.requestTimeoutMs,
    maxConnections: config.maxConnections ?? DEFAULT_CONNECTION_LIMITS.maxConnections,
    networkSharePercent: config.networkSharePercent ?? DEFAULT_CONNECTION_LIMITS.networkSharePercent,
  };
  const { server, guard } = createRoutedServer(routes, logger, limits, {
    trustProxy: config.trustProxy ?? 0,
    trustedProxies: config.trustedProxies,
    refusals: auction?.metrics.connectionsRefused,
  });
  if (auction) {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      upgradeSafely(req, socket, logger, () => {
        if (!guard.admitUpgrade(req, socket)) return;
        const parsed = parseRequestTarget(req.url, req.headers.host);
        if (parsed.ok) auction.socketServer.handleUpgrade(req, socket, head, parsed.target);
        else refuseUpgrade(socket, parsed.refusal.status, parsed.refusal.message);
      }),
    );
  }
  if (site) server.once("close", () => site.stop());
  return server;
}

/** Scrapers: a few at a time from few addresses, whatever the public listener's limits. */
const METRICS_LISTENER_LIMITS: ConnectionLimits = {
  ...DEFAULT_CONNECTION_LIMITS,
  maxConnectionsPerClient: 32,
  maxConnections: 64,
};

/** The metrics listener's server: /metrics, and 404 for any other path (docs/design.md#9). */
export function createMetricsServer(registry: Registry, logger: Logger): Server {
  return createRoutedServer(
    [(req, res, target) => handleMetrics(req, res, target, registry)],
    logger,
    METRICS_LISTENER_LIMITS,
    { trustProxy: 0 },
  ).server;
}

/**
 * A server whose every request runs guarded, has its target parsed once (docs/design.md#11) and is
 * offered to each route in turn; a path no route takes is 404.
 */
function createRoutedServer(
  routes: Route[],
  logger: Logger,
  limits: ConnectionLimits,
  {
    trustProxy,
    trustedProxies,
    refusals,
  }: { trustProxy: number; trustedProxies?: readonly string[] | undefined; refusals?: ConnectionRefusals | undefined },
): { server: Server; guard: ConnectionGuard } {
  function route(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    for (const [name, value] of Object.entries(SERVICE_HEADERS)) res.setHeader(name, value);
    if (!guard.admitRequest(req, res)) return;
    const parsed = parseRequestTarget(req.url, req.headers.host);
    if (!parsed.ok) {
      logger.info({ method: req.method, reason: parsed.refusal.message }, "refused a malformed request target");
      refuseTarget(res, parsed.refusal);
      return;
    }
    for (const handle of routes) {
      const answer = handle(req, res, parsed.target);
      if (answer !== false) return answer === true ? undefined : answer;
    }
    answerJson(res, 404, { error: "not_found" });
  }
  const server = createServer(serverOptions(limits), (req, res) =>
    answerSafely(req, res, logger, () => route(req, res)),
  );
  const guard = guardConnections(server, limits, { trustProxy, trustedProxies, logger, refusals });
  return { server, guard };
}
