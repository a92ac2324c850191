import { fileURLToPath } from "node:url";
import react from "@astrojs/react";
import sitemap from "@astrojs/sitemap";
import UnoCSS from "@unocss/astro";
import { defineConfig } from "astro/config";
import { loadEnv } from "vite";
import { siteImages } from "./scripts/siteImagesIntegration.ts";
import { placeholderWarning, readBuildSettings } from "./src/lib/buildSettings.ts";
import { ConfigError } from "./src/lib/siteConfig.ts";

const settings = checkedBuildSettings();

export default defineConfig({
  site: settings.site,
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
  vite: {
    plugins: [withoutModulePreload()],
    // Mobile Wallet Adapter's QR encoder, for the remote association the store never offers
    // (src/scripts/mobileWalletQrCode.ts): CommonJS that would add to every page's first JavaScript.
    resolve: { alias: { qrcode: fileURLToPath(new URL("./src/scripts/mobileWalletQrCode.ts", import.meta.url)) } },
  },
});

/**
 * Every PUBLIC_* setting, read as the pages read them (the environment, then .env files) and
 * checked before anything is built: a bad one stops the build with exit 2 and one line naming the
 * variable, as a bad setting stops the service (docs/settings.md "Building the pages").
 */
function checkedBuildSettings() {
  let checked;
  try {
    checked = readBuildSettings(loadEnv("production", process.cwd(), "PUBLIC_"));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`[nothing-store] ${error.message}`);
    process.exit(2);
  }
  const warning = placeholderWarning(checked.placeholders);
  if (warning) console.warn(`\n${warning}`);
  return checked;
}

/**
 * No preload lists for dynamic imports: beside each import() Vite writes the chunks it depends on,
 * to fetch them at once (413 B gzip in the scripts the home page loads before interaction). The
 * imports are made on a click or at idle (the chatbot's panel, the payment dialog, the lottery's
 * draw, the auction's store), when those dependencies are mostly loaded already; one that is not
 * is fetched one step later, after its importer. Vite's preload helper stays: it also loads a
 * dynamic chunk's CSS. Astro sets build.modulePreload itself, so the setting goes in through the
 * client environment.
 */
function withoutModulePreload() {
  return {
    name: "nothing-store:without-module-preload",
    configEnvironment(name) {
      return name === "client" ? { build: { modulePreload: false } } : undefined;
    },
  };
}
