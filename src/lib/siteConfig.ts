/**
 * Parses the operator-facing settings (addresses, embeds, links) from PUBLIC_* variables.
 * Pure and environment-agnostic so it can be tested without Vite: src/config.ts feeds it import.meta.env.
 */

export const VIDEO_SLOTS = [
  "promo",
  "wheel",
  "fortune",
  "auction",
  "calculator",
  "captcha",
  "reviews",
  "donation",
] as const;
export type VideoSlot = (typeof VIDEO_SLOTS)[number];

export interface SiteConfig {
  contractAddress: string;
  paymentAddress: string;
  donationAddress: string;
  nativeCoin: string;
  communityUrl: string;
  chartUrl: string;
  videoEmbedOrigin: string;
  videoIds: Record<VideoSlot, string>;
  /** Socket URL of the realtime service; empty means "same origin, /realtime". */
  realtimeUrl: string;
  /** Names of settings still on their placeholder defaults, for the operator's eyes. */
  placeholders: string[];
}

type Env = Record<string, string | boolean | undefined>;

// Clearly fake defaults: an operator must set the PUBLIC_* variable before launch.
export const PLACEHOLDER_DEFAULTS = {
  PUBLIC_CONTRACT_ADDRESS: "ZNcontractPLACEHoLDERxxxxxxxxxxxxxxxxxxxxxxx",
  PUBLIC_PAYMENT_ADDRESS: "ZNpaymentPLACEHoLDERxxxxxxxxxxxxxxxxxxxxxxxx",
  PUBLIC_DONATION_ADDRESS: "ZNdonationPLACEHoLDERxxxxxxxxxxxxxxxxxxxxxxx",
  PUBLIC_COMMUNITY_URL: "https://t.me/PLACEHOLDER_nothing_store",
  PUBLIC_CHART_URL: "https://dexscreener.com/solana/PLACEHOLDER?embed=1&theme=dark&info=0",
  PUBLIC_VIDEO_ID: "PLACEHOLDER",
} as const;

/** Where `npm start` serves the pages: the origin of a build made without PUBLIC_SITE_URL. */
export const DEFAULT_SITE_URL = "http://localhost:4321";

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const ADDRESS = /^[A-Za-z0-9]{20,128}$/;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The setting `key`, trimmed; undefined when unset or only white space (it takes its default). */
export function readSetting(env: Env, key: string): string | undefined {
  const value = env[key];
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** Parses an absolute URL whose scheme is one of `protocols` ("https:", "wss:", ...). */
function absoluteUrl(key: string, value: string, protocols: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${key} must be an absolute URL, got "${value}"`);
  }
  if (!protocols.includes(url.protocol)) {
    const schemes = protocols.map((protocol) => `${protocol}//`).join(" or ");
    throw new ConfigError(`${key} must use ${schemes}, got "${value}"`);
  }
  return url;
}

const httpsUrl = (key: string, value: string) => absoluteUrl(key, value, ["https:"]).href;
const socketUrl = (key: string, value: string) => absoluteUrl(key, value, ["ws:", "wss:"]).href;

function origin(key: string, value: string, protocols: readonly string[] = ["https:"]): string {
  const url = absoluteUrl(key, value, protocols);
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new ConfigError(`${key} must be an origin like https://example.com, got "${value}"`);
  }
  return url.origin;
}

/**
 * The site's origin from PUBLIC_SITE_URL (astro.config.mjs's `site`): the pages' absolute URLs
 * (canonical, og:image, the sitemap) start with it. An origin only, since every page links from
 * `/`; http too, for a preview on a private network. Build time only: parseSiteConfig, which the
 * auction store ships to the browser, leaves it out.
 */
export function parseSiteUrl(env: Env): string {
  const value = readSetting(env, "PUBLIC_SITE_URL");
  return value === undefined ? DEFAULT_SITE_URL : origin("PUBLIC_SITE_URL", value, ["https:", "http:"]);
}

export function parseSiteConfig(env: Env): SiteConfig {
  const placeholders: string[] = [];
  const setting = (key: string, fallback: string) => {
    const value = readSetting(env, key);
    if (value === undefined) placeholders.push(key);
    return value ?? fallback;
  };

  const address = (key: keyof typeof PLACEHOLDER_DEFAULTS) => {
    const value = setting(key, PLACEHOLDER_DEFAULTS[key]);
    if (!ADDRESS.test(value)) {
      throw new ConfigError(`${key} must be 20 to 128 letters and digits, got "${value}"`);
    }
    return value;
  };

  const videoIds = {} as Record<VideoSlot, string>;
  for (const slot of VIDEO_SLOTS) {
    const key = `PUBLIC_VIDEO_${slot.toUpperCase()}`;
    const value = setting(key, PLACEHOLDER_DEFAULTS.PUBLIC_VIDEO_ID);
    if (!VIDEO_ID.test(value)) {
      throw new ConfigError(`${key} must be an 11-character video id, got "${value}"`);
    }
    videoIds[slot] = value;
  }

  const realtime = readSetting(env, "PUBLIC_REALTIME_URL");

  return {
    contractAddress: address("PUBLIC_CONTRACT_ADDRESS"),
    paymentAddress: address("PUBLIC_PAYMENT_ADDRESS"),
    donationAddress: address("PUBLIC_DONATION_ADDRESS"),
    nativeCoin: readSetting(env, "PUBLIC_NATIVE_COIN") ?? "SOL",
    communityUrl: httpsUrl(
      "PUBLIC_COMMUNITY_URL",
      setting("PUBLIC_COMMUNITY_URL", PLACEHOLDER_DEFAULTS.PUBLIC_COMMUNITY_URL),
    ),
    chartUrl: httpsUrl("PUBLIC_CHART_URL", setting("PUBLIC_CHART_URL", PLACEHOLDER_DEFAULTS.PUBLIC_CHART_URL)),
    videoEmbedOrigin: origin(
      "PUBLIC_VIDEO_EMBED_ORIGIN",
      readSetting(env, "PUBLIC_VIDEO_EMBED_ORIGIN") ?? "https://www.youtube-nocookie.com",
    ),
    videoIds,
    realtimeUrl: realtime === undefined ? "" : socketUrl("PUBLIC_REALTIME_URL", realtime),
    placeholders,
  };
}

/** The embed URL for a video id on the configured video host. */
export function videoEmbedUrl(config: Pick<SiteConfig, "videoEmbedOrigin">, videoId: string): string {
  return `${config.videoEmbedOrigin}/embed/${encodeURIComponent(videoId)}?autoplay=1&rel=0`;
}
