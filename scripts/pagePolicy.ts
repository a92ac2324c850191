/**
 * The Content-Security-Policy of the built pages, computed from the pages themselves: a sha256
 * hash for every inline <script> and <style>, the origins of the embeds as frame-src, the auction
 * service's origins (socket and http) when it is not on the page's own. The pages are read with parse5, the spec's HTML
 * parser, so each hash is of the text exactly as a browser parses it.
 *
 * Astro 7's own `security.csp` was considered: without a server adapter it writes the policy into
 * a <meta> element, which cannot carry frame-ancestors and which our own server could not read,
 * and it leaves the hashes of inline scripts outside its bundling to us. A build step over the
 * output covers every inline script and style of these pages and writes the `_headers` file that
 * static hosts and the service both read (service/http/securityHeaders.ts).
 */
import { createHash } from "node:crypto";
import { type DefaultTreeAdapterTypes, parse } from "parse5";
import { winnersEndpoint } from "../src/lib/auctionWinners.ts";

type ParentNode = DefaultTreeAdapterTypes.ParentNode;
type Element = DefaultTreeAdapterTypes.Element;

/** What a build's pages need from the policy. */
export interface PolicySources {
  /** 'sha256-…' sources of the inline scripts of every page. */
  scriptHashes: Iterable<string>;
  /** 'sha256-…' sources of the inline <style> elements of every page. */
  styleHashes: Iterable<string>;
  /** Origins the pages frame (the embeds), e.g. https://www.youtube-nocookie.com. */
  frameOrigins: Iterable<string>;
  /** Origins besides the page's own that scripts connect to (the auction service, when elsewhere). */
  connectOrigins: Iterable<string>;
}

/** The phone's wallet app's socket (Mobile Wallet Adapter's local association), and the request that asks to reach it. */
export const MOBILE_WALLET_SOURCES = ["ws://localhost:*", "http://localhost"] as const;

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
    // data: for the icons browser wallets give as data: URIs (Wallet Standard), shown in the buy
    // dialog; an image cannot run script, and the page writes no other data: image.
    ["img-src", "'self'", "data:"],
    ["font-src", "'self'"],
    // CSP3 'self' also matches ws: and wss: on the page's own host and port (the default socket).
    // The phone's wallet app on Android (Mobile Wallet Adapter), on loopback only: it answers on
    // ws://localhost at a port the page picks at random, and one request to http://localhost is how
    // the page makes Chrome ask to allow that (docs/decisions/2026-11-28-the-phones-wallet.md).
    ["connect-src", "'self'", ...MOBILE_WALLET_SOURCES, ...sorted(sources.connectOrigins)],
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

/**
 * What the pages connect to besides their own origin, from the build's socket URL (empty: the
 * page's own origin, which 'self' covers): the socket's origin, and the same service over http(s)
 * for the Wall of Fame's winners (CSP3 lets a ws: source match http: too, but not every browser).
 */
export function serviceConnectOrigins(realtimeUrl: string): string[] {
  if (!realtimeUrl) return [];
  return [new URL(realtimeUrl).origin, new URL(winnersEndpoint(realtimeUrl)).origin];
}

/** The `'sha256-…'` source that allows an inline script or style with exactly this text. */
export function hashSource(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** What one built page asks of the policy. */
export interface PageInventory {
  scriptHashes: Set<string>;
  styleHashes: Set<string>;
  frameOrigins: Set<string>;
  /** Inline code no hash can allow (event handler attributes, javascript: URLs): the build fails on them. */
  problems: string[];
}

function textOf(element: Element): string {
  return element.childNodes
    .map((child) => ("value" in child && child.nodeName === "#text" ? child.value : ""))
    .join("");
}

/** Every element of the tree, template contents included, in document order. */
function* elements(parent: ParentNode): Generator<Element> {
  for (const child of parent.childNodes) {
    if (!("tagName" in child)) continue;
    yield child;
    if (child.tagName === "template") yield* elements((child as DefaultTreeAdapterTypes.Template).content);
    yield* elements(child);
  }
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
  for (const element of elements(parse(html))) {
    const attributes = new Map(element.attrs.map(({ name, value }) => [name, value]));
    const tag = `<${element.tagName}>`;
    if (element.tagName === "style") inventory.styleHashes.add(hashSource(textOf(element)));
    if (element.tagName === "script" && !attributes.has("src")) inventory.scriptHashes.add(hashSource(textOf(element)));
    for (const [name, value] of attributes) {
      if (name.startsWith("on")) inventory.problems.push(`event handler attribute ${name} in ${tag}`);
      if (/^\s*javascript:/i.test(value)) inventory.problems.push(`javascript: URL in ${tag}`);
    }
    const frameSource =
      element.tagName === "iframe"
        ? attributes.get("src")
        : element.tagName === "nothing-embed"
          ? attributes.get("data-src")
          : undefined;
    if (frameSource === undefined) continue;
    try {
      inventory.frameOrigins.add(new URL(frameSource).origin);
    } catch {
      inventory.problems.push(`frame source that is not an absolute URL in ${tag}`);
    }
  }
  return inventory;
}
