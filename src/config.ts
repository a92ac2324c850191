/**
 * The one place for addresses, embed ids, links and the socket URL.
 * Every value can be overridden at build time with a PUBLIC_* variable (see README "Configuration");
 * the defaults are placeholders and say so.
 */
import { parseSiteConfig } from "./lib/siteConfig.ts";

export const config = parseSiteConfig(import.meta.env);

// Once per build (the module is evaluated once on the server side): an operator sees what is unset.
if (import.meta.env.SSR && import.meta.env.MODE !== "test") {
  // The site's URL is Astro's `site` (astro.config.mjs), not a page setting, but just as unfinished
  // when unset: the links a visitor shares would point at localhost.
  const siteUrlUnset = !import.meta.env.PUBLIC_SITE_URL?.trim();
  const placeholders = [...config.placeholders, ...(siteUrlUnset ? ["PUBLIC_SITE_URL"] : [])];
  if (placeholders.length > 0) {
    console.warn(`\n[nothing-store] placeholder values in use, set before launch: ${placeholders.join(", ")}`);
  }
}
