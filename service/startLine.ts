/**
 * The line the service logs once it listens (docs/deploying.md#running-it): what is running, so an
 * operator reading it knows which database holds the bids, whether `/` serves pages, whether the
 * console is on and which pages may open the socket, without reading the settings back.
 */
import { databaseLocation, type ServiceConfig, WILDCARD_HOSTS } from "./config.ts";

export interface OpenService {
  config: Pick<
    ServiceConfig,
    "host" | "staticDir" | "databaseUrl" | "dataDir" | "allowedOrigins" | "admin" | "payments"
  >;
  port: number;
  metricsPort: number;
}

/** Both forms of the open line begin so; tests and scripts wait for it (with its `port`). */
const OPEN_LINE = /^The Nothing Store(?:'s auction service)? is open at /;

export function isOpenLine(entry: { msg?: unknown; port?: unknown }): boolean {
  return typeof entry.msg === "string" && OPEN_LINE.test(entry.msg) && typeof entry.port === "number";
}

/** The address a person types: loopback and the wildcard as localhost, an IPv6 address in brackets. */
export function shownHost(host: string): string {
  if (host === "127.0.0.1" || WILDCARD_HOSTS.includes(host)) return "localhost";
  return host.includes(":") ? `[${host}]` : host;
}

/** The open line's fields (JSON) and its message (a sentence saying the same). */
export function openLine({ config, port, metricsPort }: OpenService): { fields: Record<string, unknown>; msg: string } {
  const url = `http://${shownHost(config.host)}:${port}`;
  const store = config.databaseUrl
    ? { backend: "postgres", database: databaseLocation(config.databaseUrl) }
    : { backend: "pglite", dataDir: config.dataDir };
  const fields = {
    host: config.host,
    port,
    metricsPort,
    pid: process.pid,
    ...store,
    pages: config.staticDir || null,
    console: config.admin !== null,
    payments: config.payments !== null,
    allowedOrigins: config.allowedOrigins.length > 0 ? config.allowedOrigins : "same origin",
  };
  const what = [
    "database" in store ? `bids in PostgreSQL at ${store.database}` : `bids in PGlite at ${store.dataDir}`,
    `operator console ${config.admin ? "on at /admin" : "off"}`,
    `payments ${config.payments ? "on" : "off"}`,
    config.allowedOrigins.length > 0
      ? `sockets from ${config.allowedOrigins.join(", ")}`
      : "sockets from the same origin only",
  ].join(", ");
  const msg = config.staticDir
    ? `The Nothing Store is open at ${url}: pages from ${config.staticDir}, ${what}`
    : `The Nothing Store's auction service is open at ${url}, serving no pages (STATIC_DIR is empty: / answers not_found): ${what}`;
  return { fields, msg };
}
