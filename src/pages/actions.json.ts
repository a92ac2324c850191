/**
 * actions.json, built with the site (docs/deploying.md#the-store-as-a-blink): where a static host
 * serves the pages and the service is elsewhere (the split shape), the Actions spec still asks for
 * the mapping at the pages' root, so it is written here with the action's absolute URL. Where the
 * service serves the pages, its own route answers the same path first (service/actions/). With no
 * payment address the store is no blink: no rules.
 */
import type { APIRoute } from "astro";
import { config } from "../config.ts";
import { buyActionUrl } from "../lib/blink.ts";

export const GET: APIRoute = ({ site }) => {
  if (!site) throw new Error("actions.json needs the site's origin: astro.config.mjs sets `site`");
  const sells = !config.placeholders.includes("PUBLIC_PAYMENT_ADDRESS");
  const rules = sells ? [{ pathPattern: "/", apiPath: buyActionUrl(config.realtimeUrl, site.href) }] : [];
  return new Response(`${JSON.stringify({ rules })}\n`, { headers: { "Content-Type": "application/json" } });
};
