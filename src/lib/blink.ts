/**
 * The store and its tiers as blinks (issue 44): links to the Solana Action the service answers
 * (service/actions/, docs/protocol.md#actions), written at build time so sharing costs the page no
 * JavaScript. docs/product-behaviour.md#share-as-a-blink.
 */
import { serviceEndpoint } from "./serviceEndpoint.ts";

/** The buy action's path on the service: its routes (service/actions/routes.ts) and these links. */
export const BUY_ACTION_PATH = "/api/actions/buy";

/** Where X users open a blink without Dialect's extension: its interstitial page. */
const DIAL_TO = "https://dial.to/?action=solana-action:";

export interface BlinkLinks {
  /** `solana-action:<action URL>`, for wallets that read Actions. */
  action: string;
  /** The dial.to page of the same action: an https link any app opens, and that X shows as a blink. */
  dialTo: string;
}

/**
 * The action's absolute URL: beside the service's socket when it is elsewhere (config.realtimeUrl),
 * else on the site's own origin; a tier's carries `?tier=<id>`, as the action's buttons do.
 */
export function buyActionUrl(realtimeUrl: string, site: string, tierId?: string): string {
  const url = new URL(serviceEndpoint(realtimeUrl, BUY_ACTION_PATH), site);
  if (tierId !== undefined) url.searchParams.set("tier", tierId);
  return url.href;
}

/**
 * The links for an action URL. The Actions spec asks that a URL with a query be URL-encoded after
 * `solana-action:`, so its parameters cannot be read as the scheme's own; dial.to takes it encoded.
 */
export function blinkLinks(actionUrl: string): BlinkLinks {
  const query = new URL(actionUrl).search !== "";
  return {
    action: `solana-action:${query ? encodeURIComponent(actionUrl) : actionUrl}`,
    dialTo: `${DIAL_TO}${encodeURIComponent(actionUrl)}`,
  };
}
