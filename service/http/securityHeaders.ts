/**
 * The security headers of the store's pages and of the service's own answers.
 *
 * The pages' Content-Security-Policy is computed once per build from the built HTML
 * (scripts/security-headers.ts) and written to `<dist>/_headers` in the Netlify / Cloudflare Pages
 * format, which is what a static host reads; the service reads the same file at start: one policy,
 * whichever serves the pages.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const HEADERS_FILE = "_headers";

export type HeaderMap = Record<string, string>;

/** Every page's headers besides the policy. */
export const PAGE_HEADERS: HeaderMap = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  // frame-ancestors for browsers that predate it.
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

/**
 * The headers of the service's own answers (operations routes, its JSON 404): never a page, so
 * nothing may run or be framed.
 */
export const SERVICE_HEADERS: HeaderMap = {
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/**
 * The pages' headers when the build has no _headers file (a site built without the build step):
 * everything that cannot break a page, without script-src and style-src, which need its hashes.
 */
export const FALLBACK_PAGE_HEADERS: HeaderMap = {
  "Content-Security-Policy": "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  ...PAGE_HEADERS,
};

/** The headers file in the Netlify / Cloudflare Pages format: the rule for every path, then any others. */
export function formatHeadersFile(
  headers: HeaderMap,
  comment: string[],
  otherRules: Record<string, HeaderMap> = {},
): string {
  const lines = [
    ...comment.map((line) => `# ${line}`),
    ...Object.entries({ "/*": headers, ...otherRules }).flatMap(([pattern, ruleHeaders]) => [
      pattern,
      ...Object.entries(ruleHeaders).map(([n, v]) => `  ${n}: ${v}`),
    ]),
  ];
  return `${lines.join("\n")}\n`;
}

/** Hashed assets (`/_astro/`) never change under their name: cached a year, by the service and by hosts reading `_headers`. */
export const ASSET_CACHE_CONTROL = "public, max-age=31536000, immutable";

/** The headers of the `/*` rule of a _headers file; other rules are not the service's to apply. */
export function parseHeadersFile(text: string): HeaderMap {
  const headers: HeaderMap = {};
  let inCatchAll = false;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      inCatchAll = line.trim() === "/*";
      continue;
    }
    const colon = line.indexOf(":");
    if (!inCatchAll || colon < 0) continue;
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The pages' headers from the build's _headers file, or null when the build has none. */
export function readSiteHeaders(staticDir: string): HeaderMap | null {
  let text: string;
  try {
    text = readFileSync(join(staticDir, HEADERS_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return parseHeadersFile(text);
}
