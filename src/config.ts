/**
 * The one place for addresses, embed ids, links and the socket URL.
 * Every value can be overridden at build time with a PUBLIC_* variable (see README "Configuration");
 * the defaults are placeholders and say so. astro.config.mjs checks every setting before the build
 * (src/lib/buildSettings.ts) and warns about the placeholders left, once.
 */
import { parseSiteConfig } from "./lib/siteConfig.ts";

export const config = parseSiteConfig(import.meta.env);
