/**
 * Serves the pre-rendered pages: hashed assets cached for a year, pages revalidated, precompressed
 * .br/.gz variants preferred, and every unknown path answered 404 with the built 404 page (and
 * logged, docs/design.md#3a). Every answer carries the build's security headers (securityHeaders.ts);
 * the 404 page is the built file as is, so nothing a visitor sends is echoed.
 *
 * sirv decides which file answers a path (its index of the build, the .br/.gz variants, the type,
 * ETag and Last-Modified); the answer itself is written here, because sirv 3.0.2 gets the rest
 * wrong (docs/design.md#11): its Range handling throws out of the process on `bytes=100-50` or a
 * 20-digit end and cannot express `bytes=0-0` or a suffix range, its encoding choice ignores
 * `q=0`, and its 304 carries none of the 200's headers. So:
 *
 * - Accept-Encoding goes through negotiator first: br or gzip only when the client accepts it
 *   (q > 0) and prefers it to the plain file, br first at equal preference.
 * - A GET with a Range header gets the plain file (identity), so the range is in the bytes of
 *   the file itself, whatever the client accepts: one satisfiable range is answered 206, an
 *   unsatisfiable one 416 with `Content-Range: bytes *\/<size>`, a malformed one or several ranges
 *   the whole file (RFC 9110 lets a server ignore Range). If-Range must equal Last-Modified (the
 *   ETags are weak, and If-Range compares strongly), otherwise the whole file.
 * - If-None-Match (GET, HEAD) is compared weakly with the ETag; a match is 304 with the ETag,
 *   Vary, Cache-Control and the security headers the 200 would carry.
 * - `_headers`, the build's note to static hosts, is never served, however spelt.
 * - A page or file answers GET and HEAD; any other method is 405 with `Allow: GET, HEAD`
 *   (sirv does not look at the method: a POST was served the page).
 */
import { createReadStream, existsSync, type ReadStream, readFileSync, realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { join } from "node:path";
import { Writable } from "node:stream";
import Negotiator from "negotiator";
import rangeParser from "range-parser";
import sirv from "sirv";
import type { Logger } from "../logger.ts";
import { refuseUnlessRead } from "./answers.ts";
import type { RequestTarget } from "./requestTarget.ts";
import {
  ASSET_CACHE_CONTROL,
  FALLBACK_PAGE_HEADERS,
  HEADERS_FILE,
  type HeaderMap,
  readSiteHeaders,
} from "./securityHeaders.ts";

const REVALIDATE = "public, max-age=0, must-revalidate";
/** The Actions mapping a build writes for a static host (the service answers its own first). */
const ACTIONS_JSON_PATH = "/actions.json";
/** The codings the build writes beside each file (scripts/precompress.ts), the better first. */
const CODINGS = ["br", "gzip", "identity"];

export type StaticSite = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => void;

/** The file sirv picked for a request and the headers it would have sent with it. */
interface Chosen {
  file: string;
  size: number;
  headers: OutgoingHttpHeaders;
  /** sirv's stream of the whole file, paused and not yet read: the body, unless a range or no body is sent. */
  whole: ReadStream;
}

/** How often the site looks whether STATIC_DIR now leads to another build (a symlink switched). */
export const BUILD_CHECK_MS = 1_000;
/** How long a replaced build's hashed assets stay served: a page opened before a switch still loads its islands. */
export const REPLACED_BUILD_ASSETS_MS = 24 * 60 * 60 * 1_000;
/** The replaced builds remembered at most, the newest first: each is sirv's index of its files, a few kB. */
export const REPLACED_BUILDS_KEPT = 3;

/** A build that STATIC_DIR led to before, and when the switch away from it was seen. */
interface ReplacedBuild {
  dir: string;
  lookUp: Lookup;
  replacedAt: number;
}

/**
 * The pages of STATIC_DIR, which may be a symlink to one build among several: a rebuild goes into a
 * directory of its own and the link is switched to it at once (`ln -sfn` then `mv -T`, a rename).
 * Each build is read whole from its real directory (sirv's index, the 404 page, the headers), and
 * every BUILD_CHECK_MS a timer (off the request path, never holding the process open) resolves the
 * link again: once it leads elsewhere, requests from then on are answered from the new build, whole,
 * while those under way finish from the old one. A new target that is no build (no 404.html) is
 * logged and the old build kept. `stop()` ends the timer (the server's close).
 *
 * A page opened before a switch asks for its build's hashed assets later (an island loads when it
 * scrolls into view): a `/_astro/` path the current build lacks is looked up in the builds it
 * replaced, REPLACED_BUILDS_KEPT of them at most, each for REPLACED_BUILD_ASSETS_MS after the switch
 * away from it, while its directory is still there. Pages and every other path come from the
 * current build only. `now` is the clock of that expiry (tests move it).
 */
export function createStaticSite(
  staticDir: string,
  logger: Logger,
  now: () => number = Date.now,
): StaticSite & { stop(): void } {
  // The target last judged (served or refused), so that each switch of the link is judged once.
  let judgedDir = resolvedOrAsIs(staticDir);
  let replaced: ReplacedBuild[] = [];
  const replacedAsset = (path: string, codings: string): Chosen | null => {
    const since = now() - REPLACED_BUILD_ASSETS_MS;
    for (const build of replaced) {
      if (build.replacedAt <= since) continue;
      const chosen = build.lookUp(path, codings);
      // sirv's index is of the files as they were: a directory the operator removed answers nothing.
      if (chosen && existsSync(chosen.file)) return chosen;
      chosen?.whole.destroy();
    }
    return null;
  };
  let current = createBuildSite(judgedDir, logger, replacedAsset);
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      let next: string;
      try {
        next = await realpath(staticDir);
      } catch (error) {
        logger.error(
          { staticDir, err: (error as Error).message },
          "STATIC_DIR cannot be resolved: serving the build before",
        );
        return;
      }
      if (next === judgedDir) return;
      try {
        const site = createBuildSite(next, logger, replacedAsset);
        const previous = current.dir;
        const since = now() - REPLACED_BUILD_ASSETS_MS;
        replaced = [{ dir: current.dir, lookUp: current.lookUp, replacedAt: now() }, ...replaced]
          // A switch back to a build it replaced (a rollback) serves that build as the current one.
          .filter((build) => build.dir !== next && build.replacedAt > since && existsSync(build.dir))
          .slice(0, REPLACED_BUILDS_KEPT);
        current = site;
        logger.info(
          { staticDir, build: next, previous, replacedKept: replaced.map((build) => build.dir) },
          "serving a new build",
        );
      } catch (error) {
        logger.error(
          { staticDir, build: next, serving: current.dir, err: (error as Error).message },
          "STATIC_DIR leads to no build: serving the build before",
        );
      }
      // Judged once: the next switch of the link is looked at, not this target again.
      judgedDir = next;
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), BUILD_CHECK_MS);
  timer.unref();
  return Object.assign(
    (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => current.serve(req, res, target),
    { stop: () => clearInterval(timer) },
  );
}

/** The directory a path leads to; the path itself when it leads nowhere (then no build is found there). */
function resolvedOrAsIs(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Which file answers a path given the codings to consider, or null (see createLookup). */
type Lookup = (path: string, codings: string) => Chosen | null;

/** One build's pages, read from its real directory; a hashed asset it lacks is asked of `replacedAsset`. */
function createBuildSite(
  staticDir: string,
  logger: Logger,
  replacedAsset: Lookup,
): { dir: string; lookUp: Lookup; serve: StaticSite } {
  let notFoundPage: Buffer;
  try {
    notFoundPage = readFileSync(join(staticDir, "404.html"));
  } catch {
    throw new Error(`No built site in ${staticDir} (404.html is missing): run "npm run build" first.`);
  }
  const securityHeaders = readSiteHeaders(staticDir) ?? withoutHeadersFile(staticDir, logger);
  const withSecurityHeaders = (res: ServerResponse) => {
    for (const [name, value] of Object.entries(securityHeaders)) res.setHeader(name, value);
  };
  const lookUp = createLookup(staticDir);

  const serve: StaticSite = (req, res, target) => {
    withSecurityHeaders(res);
    const notFound = () => {
      logger.warn({ path: target.path, method: req.method }, "page not found");
      res.writeHead(404, {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Length": notFoundPage.length,
        "Cache-Control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : notFoundPage);
    };
    // The headers file is the build's note to static hosts, not a page: the decoded path with dot
    // segments resolved is what any lookup would find, so /%5Fheaders/ and /./_headers are it too.
    if (isHeadersFile(target.decodedPath)) {
      notFound();
      return;
    }
    const ranged = req.method === "GET" && req.headers.range !== undefined;
    const codings = ranged ? "identity" : acceptedCodings(req);
    const hashed = isHashedAsset(target.decodedPath);
    const chosen = lookUp(target.path, codings) ?? (hashed ? replacedAsset(target.path, codings) : null);
    if (!chosen) {
      notFound();
      return;
    }
    const range = ranged ? readRange(req, chosen) : null;
    const sendsWhole = req.method === "GET" && range === null;
    // Every answer but the whole file's closes sirv's stream unread.
    if (!sendsWhole) chosen.whole.destroy();
    // A page or file is only ever read (docs/design.md#9); an unknown path stays a 404 whatever the method.
    if (refuseUnlessRead(req, res)) return;
    const cacheControl = hashed ? ASSET_CACHE_CONTROL : REVALIDATE;
    const etag = String(chosen.headers.ETag);
    if (matchesAnyTag(req.headers["if-none-match"], etag)) {
      if (sendsWhole) chosen.whole.destroy();
      res.writeHead(304, { ETag: etag, Vary: "Accept-Encoding", "Cache-Control": cacheControl }).end();
      return;
    }
    const headers = {
      ...chosen.headers,
      "Cache-Control": cacheControl,
      // The Actions spec: a blink client on any origin reads the build's mapping (src/pages/actions.json.ts).
      ...(target.decodedPath === ACTIONS_JSON_PATH ? { "Access-Control-Allow-Origin": "*" } : {}),
    };
    if (range === "unsatisfiable") {
      res.writeHead(416, { ...headers, "Content-Range": `bytes */${chosen.size}`, "Content-Length": 0 }).end();
      return;
    }
    if (range) {
      res.writeHead(206, {
        ...headers,
        "Accept-Ranges": "bytes",
        "Content-Range": `bytes ${range.start}-${range.end}/${chosen.size}`,
        "Content-Length": range.end - range.start + 1,
      });
    } else {
      res.writeHead(200, headers);
    }
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    const body = range ? createReadStream(chosen.file, range) : chosen.whole;
    // A file removed under a running server (a redeploy over dist/) must cost one response, not the process.
    body.once("error", (error) => {
      logger.error({ err: error, path: target.path }, "static file read failed");
      res.destroy();
    });
    res.once("close", () => body.destroy());
    body.pipe(res);
  };
  return { dir: staticDir, lookUp, serve };
}

/** Astro's output named by content: the same path never changes, so it is cached for a year and outlives its build. */
function isHashedAsset(decodedPath: string): boolean {
  return decodedPath.startsWith("/_astro/");
}

/**
 * sirv's choice of file for a path, given the codings to consider ("br, gzip", "gzip" or
 * "identity"), or null when no file answers it. sirv answers synchronously: it sets headers,
 * writes the head and pipes a file stream into its response, so a response that records those
 * and drops the stream unread says what it chose without sending anything.
 */
function createLookup(staticDir: string): Lookup {
  const serve = sirv(staticDir, { dev: false, etag: true, gzip: true, brotli: true, extensions: ["html"] });
  return (path: string, codings: string): Chosen | null => {
    let found = false;
    let chosen: Chosen | null = null;
    const headers: OutgoingHttpHeaders = {};
    const recorder = Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), {
      statusCode: 200,
      getHeader: (name: string) => headers[name],
      setHeader: (name: string, value: string) => {
        headers[name] = value;
      },
      writeHead: (_status: number, written: OutgoingHttpHeaders) => Object.assign(headers, written),
    });
    // sirv pipes a stream of the file it chose; the stream opens the file only on a later turn, so
    // taking it back now loses nothing, and the answer reads the file through it: one open a request.
    recorder.once("pipe", (source: ReadStream) => {
      source.unpipe(recorder);
      source.pause();
      // One closed unread may still fail to open (a file removed meanwhile): nobody is waiting on it.
      source.on("error", () => {});
      chosen = { file: String(source.path), size: Number(headers["Content-Length"]), headers, whole: source };
    });
    serve(
      { url: path, headers: { "accept-encoding": codings } } as unknown as IncomingMessage,
      recorder as unknown as ServerResponse,
      () => {
        found = true;
      },
    );
    if (chosen) return chosen;
    if (found) return null;
    throw new Error(`sirv neither chose a file for ${path} nor passed it on`);
  };
}

/** Accept-Encoding reduced to what sirv should consider: it takes br over gzip whenever both are listed. */
function acceptedCodings(req: IncomingMessage): string {
  // negotiator 1.x breaks ties by the server's order (`preferred`); its published types predate the option.
  const negotiator = new Negotiator(req) as Negotiator & {
    encodings(available: string[], options: { preferred: string[] }): string[];
  };
  const ranked = negotiator.encodings(CODINGS, { preferred: CODINGS });
  const better = ranked.slice(0, ranked.includes("identity") ? ranked.indexOf("identity") : ranked.length);
  const offered = better[0] === "br" ? better : better.filter((coding) => coding !== "br");
  return offered.length > 0 ? offered.join(", ") : "identity";
}

/**
 * The single range to send, "unsatisfiable", or null for the whole file: a malformed header, a
 * unit other than bytes, several ranges, or an If-Range that does not match.
 */
function readRange(req: IncomingMessage, chosen: Chosen): { start: number; end: number } | "unsatisfiable" | null {
  const ifRange = req.headers["if-range"];
  if (ifRange !== undefined && ifRange !== chosen.headers["Last-Modified"]) return null;
  const ranges = rangeParser(chosen.size, req.headers.range ?? "", { combine: true });
  if (ranges === -1) return "unsatisfiable";
  if (ranges === -2 || ranges.type !== "bytes" || ranges.length !== 1) return null;
  return ranges[0] ?? null;
}

/** If-None-Match's weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag with or without W/. */
function matchesAnyTag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => opaque(tag) === opaque(etag));
}

/** A site built without the headers step still gets every header that cannot break its pages. */
function withoutHeadersFile(staticDir: string, logger: Logger): HeaderMap {
  logger.warn(
    { staticDir },
    `no ${HEADERS_FILE} in the built site: pages are served without script-src and style-src; run "npm run build"`,
  );
  return FALLBACK_PAGE_HEADERS;
}

function isHeadersFile(decodedPath: string): boolean {
  return decodedPath.replace(/\/+$/, "") === `/${HEADERS_FILE}`;
}
