/** Service settings, from the environment only (docs/design.md#4; docs/settings.md lists them). */
import { readFileSync, statSync } from "node:fs";
import { isIP, isIPv4, isIPv6 } from "node:net";
import { join, resolve } from "node:path";
import { choiceSetting, integerSetting, isBlank } from "./envSettings.ts";
import { LOOPBACK_PROXIES } from "./http/clientAddress.ts";
import { DEFAULT_CONNECTION_LIMITS, openFileBudget, readOpenFileLimit } from "./http/connectionLimits.ts";
import { costProblems, type PasswordHash, parsePasswordHash } from "./passwordHash.ts";
import { type PaymentSettings, PaymentSettingsError, readPaymentSettings } from "./payments/settings.ts";
import type { RoundSettings } from "./storage/types.ts";

export interface ServiceConfig {
  port: number;
  host: string;
  /** The metrics listener (docs/design.md#9): /metrics on a port of its own, 0 for a free one (logged). */
  metricsPort: number;
  /** Loopback unless told otherwise: the figures are for the operator's monitoring, not for visitors. */
  metricsHost: string;
  /** Built pages to serve; empty string disables static serving. */
  staticDir: string;
  /**
   * Set in code only, by tests: the clock that expires a replaced build's hashed assets
   * (24 h after a switch, docs/decisions/2026-11-28-old-assets-after-a-switch.md). Unset, Date.now.
   */
  staticSiteClock?: () => number;
  logLevel: LogLevel;
  /** PostgreSQL connection string; null runs embedded PGlite in dataDir. */
  databaseUrl: string | null;
  /** PGlite's data directory (absolute). */
  dataDir: string;
  /** The initialised PGlite directory a new dataDir is copied from (absolute); null: the build's (docs/design.md#9). */
  pgliteTemplateDir: string | null;
  /**
   * Origins allowed to open the socket, normalised (`https://example.com`). Empty: same origin only
   * (the Origin's host equals the request's Host). `*` allows any.
   */
  allowedOrigins: string[];
  maxSocketsPerAddress: number;
  /**
   * The public listener's connections (connectionLimits.ts): per client address, sockets and
   * requests together; the time to send a request's head and the whole request; and at most
   * maxConnections at once, below the file limit (fileLimit, null when unknown).
   */
  maxConnectionsPerClient: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  fileLimit: number | null;
  /**
   * The share of each capacity strangers share (connections, sockets, open payment requests) an
   * IPv6 /48 or IPv4 /24 may hold, in percent; a /56 three quarters of it (http/fairShares.ts).
   */
  networkSharePercent: number;
  /** Bids one client address may place per bidRateWindowMs. */
  bidRateLimit: number;
  bidRateWindowMs: number;
  /** Proxy hops in front of the service whose X-Forwarded-For entries are trusted; 0 uses the peer address. */
  trustProxy: number;
  /** The proxies' own addresses and ranges: a hop is believed only from one of them (http/clientAddress.ts). */
  trustedProxies: readonly string[];
  /** The service pings every socket this often and closes the ones that did not answer the previous ping. */
  heartbeatIntervalMs: number;
  /** Longest a SIGTERM drain may take before the process exits anyway. */
  shutdownTimeoutMs: number;
  /**
   * Unsent bytes (ws's bufferedAmount) after which a socket is dropped as too slow. Counted only
   * once the kernel's own send buffer (up to several MiB on Linux) is full.
   */
  maxBufferedBytes: number;
  /**
   * Bid frames a socket is sent per second at most (docs/design.md#10): bids that come faster, or
   * while its previous frame is still in the process, leave together as one frame, and while they
   * come faster, frames go at half this rate. 0: off, every bid one frame to every socket at once.
   */
  maxFramesPerSecond: number;
  /** Round lengths (docs/design.md#6b): AUCTION_ROUND_SECONDS (0: one endless auction) and AUCTION_SOFT_CLOSE_SECONDS. */
  rounds: RoundSettings;
  /** The operator console (docs/design.md#6a): null, and /admin absent, unless ADMIN_PASSWORD_HASH is set. */
  admin: AdminSettings | null;
  /** Real purchases (docs/design.md#8): null, and payments off, unless SOLANA_RPC_URL is set. */
  payments: PaymentSettings | null;
}

export interface AdminSettings {
  passwordHash: PasswordHash;
  sessionSecret: string;
  /**
   * The sign-in limits' sizes (docs/design.md#11), set in code only: tests lower them. Unset, the
   * console's own: refusals remembered for 10,000 addresses, 2 password checks at once (1 on 2 cores).
   */
  signIn?: { maxRememberedRefusals?: number; maxConcurrentChecks?: number };
  /**
   * Set in code only, by tests: the console's clock and its waits. Unset, the database's clock
   * decides sessions and failures (one clock for every instance) and a held sign-in waits on a timer.
   */
  clock?: AdminClock;
}

export interface AdminClock {
  /** Milliseconds since the epoch: the time every session and sign-in call is made at. */
  now(): number;
  /** Resolves after `ms` (a sign-in held back, docs/design.md#9), or rejects once `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void>;
}

export class ServiceConfigError extends Error {
  override name = "ServiceConfigError";
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  return integerSetting(env, name, { fallback, min, max }, ServiceConfigError);
}

/** pino's levels; `silent` turns logging off. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

function logLevel(value: string | undefined): LogLevel {
  return choiceSetting("LOG_LEVEL", value, { options: LOG_LEVELS, fallback: "info" }, ServiceConfigError);
}

/** Shared by every instance, so each accepts the sessions the others signed. */
const MIN_SESSION_SECRET_BYTES = 32;

function admin(env: NodeJS.ProcessEnv): ServiceConfig["admin"] {
  if (isBlank(env.ADMIN_PASSWORD_HASH)) return null;
  // `$(npm run admin:hash)` captures npm's banner ("> nothing-store@… admin:hash") with the hash.
  if (/^\s*> /m.test(env.ADMIN_PASSWORD_HASH)) {
    throw new ServiceConfigError(
      "ADMIN_PASSWORD_HASH holds npm's banner lines besides the hash: capture it with npm run -s admin:hash",
    );
  }
  let passwordHash: PasswordHash;
  try {
    passwordHash = parsePasswordHash(env.ADMIN_PASSWORD_HASH);
  } catch (error) {
    throw new ServiceConfigError(`ADMIN_PASSWORD_HASH ${(error as Error).message}`);
  }
  const problems = costProblems(passwordHash);
  if (problems.length > 0) {
    throw new ServiceConfigError(
      `ADMIN_PASSWORD_HASH has scrypt ${problems.join(", and ")}: make a new one with npm run admin:hash`,
    );
  }
  const sessionSecret = env.ADMIN_SESSION_SECRET ?? "";
  if (Buffer.byteLength(sessionSecret, "utf8") < MIN_SESSION_SECRET_BYTES) {
    throw new ServiceConfigError(
      `ADMIN_SESSION_SECRET must be at least ${MIN_SESSION_SECRET_BYTES} bytes when ADMIN_PASSWORD_HASH is set (e.g. openssl rand -base64 48)`,
    );
  }
  return { passwordHash, sessionSecret };
}

/** A page's origin as a browser sends it: scheme, host and port only. */
/**
 * TRUSTED_PROXIES: the addresses and CIDR ranges (`10.0.0.0/8`, `2001:db8::/32`) whose
 * X-Forwarded-* headers are believed, each in one spelling; unset, loopback.
 */
function trustedProxies(value: string | undefined): readonly string[] {
  if (isBlank(value)) return LOOPBACK_PROXIES;
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  return entries.map((entry) => {
    const [network = "", bits, ...rest] = entry.split("/");
    const family = isIPv4(network) ? 4 : isIPv6(network) ? 6 : 0;
    const maxBits = family === 4 ? 32 : 128;
    if (family === 0 || rest.length > 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits)) || Number(bits) > maxBits) {
      throw new ServiceConfigError(
        `TRUSTED_PROXIES: "${entry}" is not an address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32`,
      );
    }
    return bits === undefined ? `${network}/${maxBits}` : `${network}/${Number(bits)}`;
  });
}

function origins(value: string | undefined): string[] {
  if (isBlank(value)) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .map((entry) => (entry === "*" ? entry : origin(entry)));
}

function origin(entry: string): string {
  // "localhost:45000" parses as a URL of scheme "localhost:": say what is missing instead.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) {
    const scheme = /^(localhost|127\.|\[::1\])/i.test(entry) ? "http" : "https";
    throw new ServiceConfigError(`ALLOWED_ORIGINS: "${entry}" has no scheme: write ${scheme}://${entry}`);
  }
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new ServiceConfigError(`ALLOWED_ORIGINS: "${entry}" is not an origin such as https://nothing.example`);
  }
  // Pages are served over http(s); a ws:// or file: origin would match no browser's Origin header.
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ServiceConfigError(
      `ALLOWED_ORIGINS: "${entry}" is not a page's origin: pages are http:// or https:// (the socket's wss:// address is PUBLIC_REALTIME_URL)`,
    );
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new ServiceConfigError(`ALLOWED_ORIGINS: "${entry}" has more than an origin: write ${url.origin}`);
  }
  return url.origin;
}

function rounds(env: NodeJS.ProcessEnv): RoundSettings {
  const roundSeconds = integer(env, "AUCTION_ROUND_SECONDS", 3600, 0, MAX_ROUND_SECONDS);
  const softCloseSeconds = integer(env, "AUCTION_SOFT_CLOSE_SECONDS", 30, 0, MAX_ROUND_SECONDS);
  // The first bid would already be inside the window: every round would last the soft close.
  if (roundSeconds > 0 && softCloseSeconds > roundSeconds) {
    throw new ServiceConfigError(
      `AUCTION_SOFT_CLOSE_SECONDS must not exceed AUCTION_ROUND_SECONDS (${roundSeconds}), got "${softCloseSeconds}"`,
    );
  }
  return { roundSeconds, softCloseSeconds };
}

function databaseUrl(value: string | undefined): string | null {
  if (isBlank(value)) return null;
  const trimmed = value.trim();
  let protocol: string;
  try {
    protocol = new URL(trimmed).protocol;
  } catch {
    // The URL itself is never echoed: it usually carries a password.
    throw new ServiceConfigError(
      /^postgres(ql)?:/i.test(trimmed)
        ? "DATABASE_URL does not parse as a URL: write postgres://user:password@host:5432/database, with any of @ : / ? # [ ] % in the password percent-encoded"
        : "DATABASE_URL must be a postgres:// or postgresql:// URL",
    );
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") {
    throw new ServiceConfigError(`DATABASE_URL must be a postgres:// or postgresql:// URL, got a ${protocol} URL`);
  }
  return trimmed;
}

/**
 * Where DATABASE_URL points, for the log: `host:port/database`, never the user's password.
 * A socket directory given as `?host=/run/postgresql` stands for the host.
 */
export function databaseLocation(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const host = url.searchParams.get("host") || url.hostname || "localhost";
  const database = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || "postgres";
  return `${host}:${url.port || 5432}/${database}`;
}

const DAY_MS = 86_400_000;
/** 30 days: a round longer than that is better run as an endless auction (0). */
const MAX_ROUND_SECONDS = 30 * 86_400;
/** About 8,000 bid messages of ~120 bytes. */
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** A frame every millisecond: beyond it the budget no longer conflates anything a timer can tell apart. */
const MAX_FRAMES_PER_SECOND = 1_000;

/** OpenTelemetry's Prometheus exporters listen on 9464 by default (OTEL_EXPORTER_PROMETHEUS_PORT). */
const DEFAULT_METRICS_PORT = 9464;
/** The hosts that listen on every interface. */
export const WILDCARD_HOSTS = ["0.0.0.0", "::"];

/**
 * A host name: labels of letters, digits and inner hyphens, 253 characters at most. Underscores
 * too: DNS forbids them in host names, but container networks name hosts after services that have them.
 */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/i;

/**
 * HOST or METRICS_HOST: an IP address or a host name, loopback unless told otherwise (the container
 * sets 0.0.0.0 on purpose). Whether a name resolves to an address of this machine is known only at
 * listen (main.ts names the variable then).
 */
function listenHost(env: NodeJS.ProcessEnv, name: "HOST" | "METRICS_HOST"): string {
  const value = env[name]?.trim() ?? "";
  if (value === "") return "127.0.0.1";
  // Digits and dots alone that are no IPv4 address (999.1.1.1) are no name either.
  if (isIP(value) !== 0 || (HOST_NAME.test(value) && !/^[\d.]+$/.test(value))) return value;
  const hint = value.includes("://")
    ? ": no scheme"
    : /^[^:]+:\d+$/.test(value)
      ? `: the port goes in ${name === "HOST" ? "PORT" : "METRICS_PORT"}`
      : "";
  throw new ServiceConfigError(
    `${name} must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::), got "${value}"${hint}`,
  );
}

/**
 * METRICS_PORT and METRICS_HOST. A port that the public listener takes on an overlapping address
 * would only fail at listen: said here, with both names.
 */
function metricsListener(env: NodeJS.ProcessEnv, port: number, host: string) {
  const metricsPort = integer(env, "METRICS_PORT", DEFAULT_METRICS_PORT, 0, 65535);
  const metricsHost = listenHost(env, "METRICS_HOST");
  const overlapping = host === metricsHost || [host, metricsHost].some((each) => WILDCARD_HOSTS.includes(each));
  if (metricsPort !== 0 && metricsPort === port && overlapping) {
    throw new ServiceConfigError(
      `METRICS_PORT must differ from PORT (${port}): /metrics has a listener of its own, got "${env.METRICS_PORT}"`,
    );
  }
  return { metricsPort, metricsHost };
}

/** Fewer than this many connections at once would be no service. */
const MIN_CONNECTIONS = 64;

/**
 * The listener's connection settings. MAX_CONNECTIONS defaults to what the file limit leaves after
 * the files the rest of the process needs, and may only be lowered: above that, the process would
 * run out of files for the database before refusing a connection.
 */
function connectionSettings(env: NodeJS.ProcessEnv, fileLimit: number | null, maxSocketsPerAddress: number) {
  const maxConnectionsPerClient = integer(
    env,
    "MAX_CONNECTIONS_PER_CLIENT",
    DEFAULT_CONNECTION_LIMITS.maxConnectionsPerClient,
    1,
    1_000_000,
  );
  if (maxSocketsPerAddress > maxConnectionsPerClient) {
    throw new ServiceConfigError(
      `MAX_SOCKETS_PER_ADDRESS (${maxSocketsPerAddress}) exceeds MAX_CONNECTIONS_PER_CLIENT (${maxConnectionsPerClient}), which counts sockets too: raise MAX_CONNECTIONS_PER_CLIENT`,
    );
  }
  const headersTimeoutMs = integer(env, "HEADERS_TIMEOUT_MS", 10_000, 100, DAY_MS);
  const requestTimeoutMs = integer(env, "REQUEST_TIMEOUT_MS", 30_000, 100, DAY_MS);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ServiceConfigError(
      `REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be at least HEADERS_TIMEOUT_MS (${headersTimeoutMs}): a request's head is part of it`,
    );
  }
  const budget = openFileBudget(fileLimit);
  if (budget.maxConnections < MIN_CONNECTIONS) {
    throw new ServiceConfigError(
      `the process may open only ${fileLimit} files (ulimit -n): too few for the database and ${MIN_CONNECTIONS} connections; raise the limit (e.g. LimitNOFILE=65536, or --ulimit nofile=65536 for a container)`,
    );
  }
  const maxConnections = integer(env, "MAX_CONNECTIONS", budget.maxConnections, 1, budget.maxConnections);
  const networkSharePercent = integer(
    env,
    "NETWORK_SHARE_PERCENT",
    DEFAULT_CONNECTION_LIMITS.networkSharePercent,
    1,
    100,
  );
  return {
    maxConnectionsPerClient,
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections,
    fileLimit,
    networkSharePercent,
  };
}

export function readServiceConfig(
  env: NodeJS.ProcessEnv = process.env,
  fileLimit: number | null = readOpenFileLimit(),
): ServiceConfig {
  const port = integer(env, "PORT", 4321, 0, 65535);
  const host = listenHost(env, "HOST");
  const maxSocketsPerAddress = integer(env, "MAX_SOCKETS_PER_ADDRESS", 50, 1, 1_000_000);
  return {
    port,
    host,
    ...metricsListener(env, port, host),
    staticDir: env.STATIC_DIR === "" ? "" : resolve(env.STATIC_DIR ?? "dist"),
    logLevel: logLevel(env.LOG_LEVEL),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    dataDir: resolve(env.DATA_DIR?.trim() || "data"),
    pgliteTemplateDir: env.PGLITE_TEMPLATE_DIR?.trim() ? resolve(env.PGLITE_TEMPLATE_DIR.trim()) : null,
    allowedOrigins: origins(env.ALLOWED_ORIGINS),
    maxSocketsPerAddress,
    ...connectionSettings(env, fileLimit, maxSocketsPerAddress),
    bidRateLimit: integer(env, "BID_RATE_LIMIT", 10, 1, 1_000_000),
    bidRateWindowMs: integer(env, "BID_RATE_WINDOW_MS", 10_000, 1, DAY_MS),
    trustProxy: integer(env, "TRUST_PROXY", 0, 0, 100),
    trustedProxies: trustedProxies(env.TRUSTED_PROXIES),
    heartbeatIntervalMs: integer(env, "HEARTBEAT_INTERVAL_MS", 30_000, 10, DAY_MS),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 1, DAY_MS),
    // 1 GiB cap: past that a "bound" no longer protects the process's memory.
    maxBufferedBytes: integer(env, "MAX_BUFFERED_BYTES", DEFAULT_MAX_BUFFERED_BYTES, 1, 1024 ** 3),
    maxFramesPerSecond: integer(env, "MAX_FRAMES_PER_SECOND", 20, 0, MAX_FRAMES_PER_SECOND),
    rounds: rounds(env),
    admin: admin(env),
    payments: payments(env),
  };
}

function payments(env: NodeJS.ProcessEnv): PaymentSettings | null {
  try {
    return readPaymentSettings(env);
  } catch (error) {
    if (error instanceof PaymentSettingsError) throw new ServiceConfigError(error.message);
    throw error;
  }
}

/** The pages a STATIC_DIR must hold: the home page, and the page every unknown path answers. */
const BUILT_PAGES = ["index.html", "404.html"];

/**
 * STATIC_DIR on disk, checked before the store opens (a typo used to open the store, then stop
 * with a stack trace): a directory holding a built site, or empty for no pages.
 */
export function checkStaticDir(staticDir: string): void {
  if (staticDir === "") return;
  const noPages = "or set STATIC_DIR= (empty) to serve no pages";
  let isDirectory: boolean;
  try {
    isDirectory = statSync(staticDir).isDirectory();
  } catch {
    throw new ServiceConfigError(
      `STATIC_DIR: ${staticDir} does not exist: name the built pages (npm run build writes dist/), ${noPages}`,
    );
  }
  if (!isDirectory) throw new ServiceConfigError(`STATIC_DIR: ${staticDir} is not a directory: ${noPages}`);
  const missing = BUILT_PAGES.filter((page) => !statSync(join(staticDir, page), { throwIfNoEntry: false })?.isFile());
  if (missing.length > 0) {
    throw new ServiceConfigError(
      `STATIC_DIR: ${staticDir} holds no built site (${missing.join(" and ")} missing): run npm run build, ${noPages}`,
    );
  }
}

/**
 * The payment address the pages in STATIC_DIR show (their tier cards' `data-payment-address`,
 * src/components/TierCard.astro), or null when they show none.
 */
export function builtPaymentAddress(staticDir: string): string | null {
  const home = readFileSync(join(staticDir, "index.html"), "utf8");
  return /<tier-actions\b[^>]*\sdata-payment-address="([^"]*)"/.exec(home)?.[1] ?? null;
}

/**
 * With payments on and pages served, the address a visitor sees on them must be the one the
 * watcher watches: pages built with another PUBLIC_PAYMENT_ADDRESS (the placeholder, an old
 * wallet) would send buyers' money where no request is ever confirmed.
 */
export function checkBuiltPaymentAddress(config: Pick<ServiceConfig, "staticDir" | "payments">): void {
  if (config.staticDir === "" || !config.payments) return;
  const built = builtPaymentAddress(config.staticDir);
  if (built === null || built === config.payments.recipient) return;
  throw new ServiceConfigError(
    `PUBLIC_PAYMENT_ADDRESS is ${config.payments.recipient} for the service, but the pages in STATIC_DIR ` +
      `(${config.staticDir}) were built with PUBLIC_PAYMENT_ADDRESS=${built}: rebuild them with the same ` +
      "PUBLIC_PAYMENT_ADDRESS (npm run build), or the pages would show buyers an address no payment is watched at",
  );
}

/** Settings that start the service but are likely not what the operator meant: logged as warnings. */
export function configWarnings(env: NodeJS.ProcessEnv = process.env): string[] {
  const warnings: string[] = [];
  if (!isBlank(env.ADMIN_SESSION_SECRET) && isBlank(env.ADMIN_PASSWORD_HASH)) {
    warnings.push(
      "ADMIN_SESSION_SECRET is set but ADMIN_PASSWORD_HASH is not: the operator console is off (npm run -s admin:hash prints a hash)",
    );
  }
  return warnings;
}
