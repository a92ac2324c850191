/**
 * The web app manifest (docs/product.md#2-head): what a browser needs to install the store as an
 * app, with the PNG icons drawn at build time (scripts/siteImages.ts).
 */

import { siteImages } from "virtual:site-images";
import type { APIRoute } from "astro";
import { palette } from "../../uno.config.ts";
import { SITE_NAME, SITE_SHORT_NAME } from "../data/site.ts";

export const GET: APIRoute = () =>
  new Response(
    JSON.stringify({
      id: "/",
      name: SITE_NAME,
      short_name: SITE_SHORT_NAME,
      lang: "en",
      start_url: "/",
      scope: "/",
      display: "standalone",
      background_color: palette.void.DEFAULT,
      theme_color: palette.void.DEFAULT,
      icons: siteImages.manifestIcons,
    }),
    { headers: { "Content-Type": "application/manifest+json" } },
  );
