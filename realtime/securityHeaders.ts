/**
 * The security headers of the store's pages, and where they come from.
 *
 * The policy is computed once per build from the built HTML (scripts/security-headers.ts): a
 * sha256 hash for every inline <script> and <style>, the origins of the click-to-load embeds as
 * frame-src, the auction socket's origin when it is not the page's own. It is written to
 * `<dist>/_headers` in the Netlify / Cloudflare Pages format, which is what a static host reads,
 * and the service reads the same file at start: one policy, whichever serves the pages.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const HEADERS_FILE = "_headers";

export type HeaderMap = Record<string, string>;

/** What a build's pages need from the policy. */
export interface PolicySources {
  /** 'sha256-…' sources of the inline scripts of every page. */
  scriptHashes: Iterable<string>;
  /** 'sha256-…' sources of the inline <style> elements of every page. */
  styleHashes: Iterable<string>;
  /** Origins the pages frame (the embeds), e.g. https://www.youtube-nocookie.com. */
  frameOrigins: Iterable<string>;
  /** Origins besides the page's own that scripts connect to (the auction socket, when elsewhere). */
  connectOrigins: Iterable<string>;
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** The Content-Security-Policy of every page. */
export function contentSecurityPolicy(sources: PolicySources): string {
  const directives: [string, ...string[]][] = [
    ["default-src", "'self'"],
    // No 'unsafe-inline': Astro's inline island bootstrap and page scripts are allowed by hash only.
    ["script-src", "'self'", ...sorted(sources.scriptHashes)],
    ["style-src", "'self'", ...sorted(sources.styleHashes)],
    // Style attributes (the wheel's gradient, confetti positions, rendered by React on the server)
    // cannot run script; hashing each would make the header kilobytes long for no real gain.
    ["style-src-attr", "'unsafe-inline'"],
    ["img-src", "'self'"],
    ["font-src", "'self'"],
    // CSP3 'self' also matches ws: and wss: on the page's own host and port (the default socket).
    ["connect-src", "'self'", ...sorted(sources.connectOrigins)],
    ["frame-src", ...sorted(sources.frameOrigins)],
    ["object-src", "'none'"],
    ["base-uri", "'none'"],
    ["form-action", "'self'"],
    ["frame-ancestors", "'none'"],
  ];
  // A directive with no source would mean "nothing": say so explicitly rather than leave it empty.
  return directives
    .map(([name, ...values]) => [name, ...(values.length > 0 ? values : ["'none'"])].join(" "))
    .join("; ");
}

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

/** The `'sha256-…'` source that allows an inline script or style with exactly this text. */
export function hashSource(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

// A start tag with its attributes, quoted values may hold ">" (HTML's own attribute grammar).
const START_TAG = /<([a-zA-Z][\w-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
// Raw-text elements: their content is hashed as written (no entity decoding applies to it).
const RAW_TEXT =
  /<(script|style)\b((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*>([\s\S]*?)<\/\1\s*>/gi;

function attributes(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(ATTRIBUTE)) {
    const name = match[1];
    if (name) found.set(name.toLowerCase(), decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return found;
}

/** The few entities Astro writes into attribute values; enough to read a URL back. */
function decodeEntities(value: string): string {
  return value.replace(/&(amp|quot|#39|#x27|lt|gt);/g, (_, entity: string) => {
    const map: Record<string, string> = { amp: "&", quot: '"', "#39": "'", "#x27": "'", lt: "<", gt: ">" };
    return map[entity] ?? "";
  });
}

/** What one built page asks of the policy. */
export interface PageInventory {
  scriptHashes: Set<string>;
  styleHashes: Set<string>;
  frameOrigins: Set<string>;
  /** Inline code no hash can allow (event handler attributes, javascript: URLs): the build fails on them. */
  problems: string[];
}

/**
 * Reads a built page: its inline scripts and styles (hashed), and the origins it frames: the src
 * of any <iframe>, and the data-src of the click-to-load facade (<nothing-embed>), which creates
 * its frame only on a click.
 */
export function inventoryPage(html: string): PageInventory {
  const inventory: PageInventory = {
    scriptHashes: new Set(),
    styleHashes: new Set(),
    frameOrigins: new Set(),
    problems: [],
  };
  // The browser hashes the text it parsed, and HTML parsing turns CR LF and lone CR into LF.
  const source = html.replace(/\r\n?/g, "\n");
  for (const [, element = "", attributeSource = "", text = ""] of source.matchAll(RAW_TEXT)) {
    if (element.toLowerCase() === "style") {
      inventory.styleHashes.add(hashSource(text));
    } else if (!attributes(attributeSource).has("src")) {
      inventory.scriptHashes.add(hashSource(text));
    }
  }
  // Attributes are read with the raw-text contents removed: a script may hold "<a onclick=" in a string.
  const markup = source.replace(RAW_TEXT, "");
  for (const [tag, rawName = "", attributeSource = ""] of markup.matchAll(START_TAG)) {
    const name = rawName.toLowerCase();
    const attrs = attributes(attributeSource);
    for (const [attribute, value] of attrs) {
      if (attribute.startsWith("on")) inventory.problems.push(`event handler attribute ${attribute} in ${tag}`);
      if (/^\s*javascript:/i.test(value)) inventory.problems.push(`javascript: URL in ${tag}`);
    }
    const frameSource =
      name === "iframe" ? attrs.get("src") : name === "nothing-embed" ? attrs.get("data-src") : undefined;
    if (frameSource !== undefined) {
      try {
        inventory.frameOrigins.add(new URL(frameSource).origin);
      } catch {
        inventory.problems.push(`frame source that is not an absolute URL in ${tag}`);
      }
    }
  }
  return inventory;
}

/** The headers file in the Netlify / Cloudflare Pages format: one rule, for every path. */
export function formatHeadersFile(headers: HeaderMap, comment: string[]): string {
  const lines = [
    ...comment.map((line) => `# ${line}`),
    "/*",
    ...Object.entries(headers).map(([n, v]) => `  ${n}: ${v}`),
  ];
  return `${lines.join("\n")}\n`;
}

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
