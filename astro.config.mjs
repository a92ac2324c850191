import react from "@astrojs/react";
import sitemap from "@astrojs/sitemap";
import UnoCSS from "@unocss/astro";
import { defineConfig } from "astro/config";
import { loadEnv } from "vite";
import { siteImages } from "./scripts/siteImagesIntegration.ts";
import { parseSiteUrl } from "./src/lib/siteConfig.ts";

export default defineConfig({
  // Read as the pages read PUBLIC_* settings (the environment, then .env files), and checked.
  site: parseSiteUrl(loadEnv("production", process.cwd(), "PUBLIC_")),
  // A separate output folder lets parallel checkouts build and serve without clobbering dist/.
  outDir: process.env.ASTRO_OUT_DIR ?? "./dist",
  // Islands are React; everything else ships as plain HTML and CSS. The sitemap leaves out the
  // 404 page by itself and lists plain pages (no news, image or video entries); siteImages draws
  // the PNGs that shared links and installed pages show (docs/design.md#9).
  integrations: [
    UnoCSS({ injectReset: true }),
    react(),
    sitemap({ namespaces: { news: false, xhtml: false, image: false, video: false } }),
    siteImages(),
  ],
  build: {
    // The stylesheet is small: inlining it saves a render-blocking request.
    inlineStylesheets: "always",
  },
  devToolbar: { enabled: false },
  vite: { plugins: [paymentDialogWithoutPreload()] },
});

/**
 * "Buy Nothing" imports the payment dialog's chunk on its first click when payments are on
 * (TierCard.astro). Its dependencies are the page's first JavaScript and the auction store, loaded
 * at idle, so the list Vite would put in the card's script to preload them (some 200 B gzip before
 * interaction) fetches nothing; without it, a click before idle fetches them one step later.
 * Astro sets build.modulePreload itself, so the setting goes in through the client environment.
 */
function paymentDialogWithoutPreload() {
  return {
    name: "nothing-store:payment-dialog-without-preload",
    configEnvironment(name) {
      if (name !== "client") return undefined;
      return {
        build: {
          modulePreload: {
            polyfill: false,
            resolveDependencies: (file, deps) => (/\/paymentDialog\.[\w-]+\.js$/.test(file) ? [] : deps),
          },
        },
      };
    },
  };
}
