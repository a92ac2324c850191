/**
 * The request target of every HTTP request and WebSocket upgrade, parsed once and defensively
 * (docs/design.md#11): handlers get the path and query from here and never parse req.url
 * themselves. A target this module refuses is answered 400 (414 when over-long) by the server, so
 * no handler ever sees one that `new URL` would throw on or read differently from the server.
 *
 * Accepted: origin-form (`/path?query`), and absolute-form (`http://host/path`) when its authority
 * is the request's own Host. Refused: `//...` (a URL parser reads the first segment as a host),
 * anything that is not visible ASCII, `\` (read as `/` by URL parsers) and `#` (never part of a
 * target), a `%` not followed by two hex digits, a path that is not UTF-8 once decoded, the
 * authority form, `*`, and targets over RFC 9112's recommended minimum of 8000 octets.
 */

/** RFC 9112 §3: recipients should support request lines of at least 8000 octets; no page of ours needs more. */
export const MAX_TARGET_LENGTH = 8000;

export interface RequestTarget {
  /** The path with dot segments resolved and percent-encoding kept (a URL's pathname): what routes compare. */
  path: string;
  /** The path percent-decoded. */
  decodedPath: string;
  /** `?` and the query as sent, or "" when there is none. */
  search: string;
  query: URLSearchParams;
}

export interface TargetRefusal {
  status: 400 | 414;
  error: "bad_request_target" | "uri_too_long";
  /** Says what is wrong, never echoing the target. */
  message: string;
}

export type ParsedTarget = { ok: true; target: RequestTarget } | { ok: false; refusal: TargetRefusal };

const VISIBLE_ASCII_WITHOUT_BACKSLASH_OR_HASH = /^[\x21-\x22\x24-\x5b\x5d-\x7e]+$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** Only for parsing origin-form paths; never shown or compared. */
const PLACEHOLDER_ORIGIN = "http://target.invalid";

const refuse = (message: string): ParsedTarget => ({
  ok: false,
  refusal: { status: 400, error: "bad_request_target", message },
});

/** `host` is the request's Host header, which an absolute-form target must name. */
export function parseRequestTarget(raw: string | undefined, host: string | undefined): ParsedTarget {
  if (raw === undefined || raw === "") return refuse("The request has no target.");
  if (raw.length > MAX_TARGET_LENGTH) {
    return {
      ok: false,
      refusal: {
        status: 414,
        error: "uri_too_long",
        message: `The request target is longer than ${MAX_TARGET_LENGTH} characters.`,
      },
    };
  }
  if (!VISIBLE_ASCII_WITHOUT_BACKSLASH_OR_HASH.test(raw)) {
    return refuse("The request target may hold only visible ASCII characters, without \\ or #.");
  }
  if (BAD_PERCENT.test(raw)) return refuse("The request target has a % that is not followed by two hex digits.");
  if (ABSOLUTE_FORM.test(raw)) return fromAbsoluteForm(raw, host);
  return fromOriginForm(raw);
}

function fromOriginForm(raw: string): ParsedTarget {
  if (!raw.startsWith("/")) return refuse("The request target must be a path starting with /.");
  if (raw.startsWith("//")) return refuse("The request target's path may not start with //.");
  let url: URL;
  try {
    url = new URL(raw, PLACEHOLDER_ORIGIN);
  } catch {
    return refuse("The request target is not a valid path.");
  }
  // A single leading / never names another host, but the check costs nothing and keeps the promise.
  if (url.origin !== PLACEHOLDER_ORIGIN) return refuse("The request target is not a valid path.");
  let decodedPath: string;
  try {
    decodedPath = decodeURIComponent(url.pathname);
  } catch {
    return refuse("The request target's path is not valid UTF-8 once percent-decoded.");
  }
  return { ok: true, target: { path: url.pathname, decodedPath, search: url.search, query: url.searchParams } };
}

function fromAbsoluteForm(raw: string, host: string | undefined): ParsedTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("The request target is not a valid URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return refuse("The request target is not an http URL.");
  if (url.username !== "" || url.password !== "") return refuse("The request target may not carry credentials.");
  // The target's authority must be the one the request was sent to: this service proxies nothing.
  if (host === undefined || ownHost(url.protocol, host) !== url.host) {
    return refuse("The request target names another host.");
  }
  return fromOriginForm(`${url.pathname}${url.search}`);
}

/** The Host header as a URL of that scheme spells its host (lower case, default port dropped). */
function ownHost(protocol: string, host: string): string | null {
  try {
    return new URL(`${protocol}//${host}`).host;
  } catch {
    return null;
  }
}
