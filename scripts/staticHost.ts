/**
 * The pages alone, as a static host serves them in the split shape (docs/design.md#6d,
 * docs/deploying.md "Deploying"): the service's own page serving (service/server.ts without an
 * auction: hostile request targets refused, the build's `_headers` on every answer, hashed assets
 * cached for a year and pages revalidated, the .br/.gz variants, 404.html with status 404, only GET
 * and HEAD), and nothing else: no socket, no operations routes. `npm run serve:static`
 * (scripts/serve-static.ts) runs it; the split-shape e2e test serves its pages with it.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { WILDCARD_HOSTS } from "../service/config.ts";
import { openFileBudget, readOpenFileLimit } from "../service/http/connectionLimits.ts";
import { readSiteHeaders } from "../service/http/securityHeaders.ts";
import type { Logger } from "../service/logger.ts";
import { createAppServer } from "../service/server.ts";
import { MOBILE_WALLET_SOURCES } from "./pagePolicy.ts";

export interface StaticHost {
  /** http://host:port, the address as listened on (a wildcard host as 127.0.0.1). */
  readonly origin: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface StaticHostOptions {
  port?: number;
  host?: string;
  logger: Logger;
}

/** Serves the built site in `dir` (404.html required: a folder without it is not a build and throws). */
export async function serveStaticHost(
  dir: string,
  { port = 0, host = "127.0.0.1", logger }: StaticHostOptions,
): Promise<StaticHost> {
  // The service's connection defaults, and as many connections at once as its file limit leaves.
  const { maxConnections } = openFileBudget(readOpenFileLimit());
  const server = createAppServer({ staticDir: dir, maxConnections }, logger);
  // Rejects with listen's error (a taken port, a host not of this machine), as Node's once() does.
  await once(server.listen(port, host), "listening");
  const listened = (server.address() as AddressInfo).port;
  const shownHost = WILDCARD_HOSTS.includes(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return {
    origin: `http://${shownHost}:${listened}`,
    port: listened,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The auction service's origins the pages were built to connect to (PUBLIC_REALTIME_URL), read from
 * the connect-src of the build's `_headers`: empty when they connect to their own origin, which a
 * static host cannot answer.
 */
export function builtServiceOrigins(dir: string): string[] {
  const policy = readSiteHeaders(dir)?.["Content-Security-Policy"] ?? "";
  const connectSrc = policy
    .split(";")
    .map((directive) => directive.trim().split(/\s+/))
    .find(([name]) => name === "connect-src");
  // Not the phone wallet's loopback socket, which every build allows.
  const loopback: readonly string[] = MOBILE_WALLET_SOURCES;
  return (connectSrc ?? []).slice(1).filter((source) => /^wss?:\/\//.test(source) && !loopback.includes(source));
}
