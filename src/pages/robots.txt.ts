/**
 * robots.txt, built with the site: it names the sitemap, whose URL must be absolute and so
 * follows PUBLIC_SITE_URL (docs/product.md#2-head).
 */
import type { APIRoute } from "astro";

/** @astrojs/sitemap's index (its default file name; astro.config.mjs). */
const SITEMAP_INDEX = "/sitemap-index.xml";

export const GET: APIRoute = ({ site }) => {
  if (!site) throw new Error("robots.txt needs the site's origin: astro.config.mjs sets `site`");
  const body = ["User-agent: *", "Allow: /", "", `Sitemap: ${new URL(SITEMAP_INDEX, site).href}`, ""].join("\n");
  return new Response(body, { headers: { "Content-Type": "text/plain; charset=utf-8" } });
};
