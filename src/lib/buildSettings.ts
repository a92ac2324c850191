/**
 * Every PUBLIC_* setting the build reads, checked when astro.config.mjs loads, before anything is
 * built: a bad value stops the build in about a second, naming the variable, the value and what is
 * expected, instead of minutes later in the middle of rendering, or never (docs/design.md#6d).
 * Build time only: nothing here ships to the browser, so the stricter checks of the socket URL cost
 * the pages no bytes.
 */
import { PROTOCOL_PATH } from "./auction/protocol.ts";
import { ConfigError, parseSiteConfig, parseSiteUrl, readSetting } from "./siteConfig.ts";

type Env = Record<string, string | boolean | undefined>;

export interface BuildSettings {
  /** Astro's `site`: the origin every absolute URL of the pages starts with. */
  site: string;
  /** Settings still on their placeholder defaults, PUBLIC_SITE_URL among them when unset. */
  placeholders: string[];
}

export function readBuildSettings(env: Env): BuildSettings {
  const realtime = readSetting(env, "PUBLIC_REALTIME_URL");
  if (realtime !== undefined) checkRealtimeUrl(realtime);
  const site = parseSiteUrl(env);
  if (realtime !== undefined) checkMixedContent(site, realtime);
  const { placeholders } = parseSiteConfig(env);
  const siteUrlUnset = readSetting(env, "PUBLIC_SITE_URL") === undefined;
  return { site, placeholders: siteUrlUnset ? ["PUBLIC_SITE_URL", ...placeholders] : placeholders };
}

/** The build's warning about placeholders, or null when every setting is the operator's. */
export function placeholderWarning(placeholders: readonly string[]): string | null {
  if (placeholders.length === 0) return null;
  return `[nothing-store] placeholder values in use, set before launch: ${placeholders.join(", ")}`;
}

/**
 * The socket URL the pages connect to: ws: or wss:, its path ending in /realtime (a proxy's prefix
 * before it is kept: the service's other routes are found beside it, src/lib/serviceEndpoint.ts),
 * no query or fragment. Anything else builds pages whose auction never connects and whose Wall of
 * Fame asks the wrong path, with nothing logged anywhere; the message offers the likely intended URL.
 */
function checkRealtimeUrl(value: string): void {
  const key = "PUBLIC_REALTIME_URL";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      `${key} must be an absolute ws:// or wss:// URL ending in ${PROTOCOL_PATH}, e.g. wss://auction.example.com${PROTOCOL_PATH}, got "${value}"`,
    );
  }
  const example = likelyMeant(url);
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new ConfigError(`${key} must use ws:// or wss://, e.g. ${example}, got "${value}"`);
  }
  if (url.search || url.hash || value.includes("?") || value.includes("#")) {
    throw new ConfigError(`${key} must have no query or fragment, e.g. ${example}, got "${value}"`);
  }
  if (!url.pathname.endsWith(PROTOCOL_PATH)) {
    throw new ConfigError(`${key} must end in ${PROTOCOL_PATH}, e.g. ${example}, got "${value}"`);
  }
}

/**
 * A page served over https may not open a ws:// socket (mixed content): the browser refuses it
 * without a word to the page. Loopback is exempt, as browsers exempt it (a local trial).
 */
function checkMixedContent(site: string, realtime: string): void {
  const socket = new URL(realtime);
  if (!site.startsWith("https:") || socket.protocol !== "ws:" || LOOPBACK.has(socket.hostname)) return;
  socket.protocol = "wss:";
  throw new ConfigError(
    `PUBLIC_REALTIME_URL must use wss:// when PUBLIC_SITE_URL is https:// (browsers refuse ws:// from a secure page), e.g. ${likelyMeant(socket)}, got "${realtime}"`,
  );
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The socket URL an operator most likely meant: ws(s), the same host, the path ending once in /realtime. */
function likelyMeant(url: URL): string {
  const secure = url.protocol === "wss:" || url.protocol === "https:";
  const path = url.pathname.replace(/\/+$/, "");
  return `${secure ? "wss:" : "ws:"}//${url.host}${path.endsWith(PROTOCOL_PATH) ? path : `${path}${PROTOCOL_PATH}`}`;
}
