import react from "@astrojs/react";
import UnoCSS from "@unocss/astro";
import { defineConfig } from "astro/config";

export default defineConfig({
  site: process.env.PUBLIC_SITE_URL ?? "http://localhost:4321",
  // A separate output folder lets parallel checkouts build and serve without clobbering dist/.
  outDir: process.env.ASTRO_OUT_DIR ?? "./dist",
  // Islands are React; everything else ships as plain HTML and CSS.
  integrations: [UnoCSS({ injectReset: true }), react()],
  build: {
    // The stylesheet is small: inlining it saves a render-blocking request.
    inlineStylesheets: "always",
  },
  devToolbar: { enabled: false },
});
