/**
 * Serves the pre-rendered pages with sirv: hashed assets cached for a year, pages revalidated,
 * precompressed .br/.gz variants preferred, and every unknown path answered 404 with the
 * built 404 page (and logged, DESIGN.md 3a). Every answer carries the build's security headers
 * (securityHeaders.ts); the 404 page is the built file as is, so nothing a visitor sends is echoed.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import sirv from "sirv";
import type { Logger } from "./logger.ts";
import { FALLBACK_PAGE_HEADERS, HEADERS_FILE, type HeaderMap, readSiteHeaders } from "./securityHeaders.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=0, must-revalidate";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createStaticSite(staticDir: string, logger: Logger): RequestHandler {
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

  const serve = sirv(staticDir, {
    dev: false,
    etag: true,
    gzip: true,
    brotli: true,
    extensions: ["html"],
    setHeaders(res, pathname) {
      withSecurityHeaders(res);
      res.setHeader("Cache-Control", pathname.startsWith("/_astro/") ? IMMUTABLE : REVALIDATE);
    },
  });

  return (req, res) => {
    // sirv pipes a file stream into the response and leaves its errors unhandled: a file removed
    // under a running server (a redeploy over dist/) must cost one response, not the process.
    res.once("pipe", (source) => {
      source.once("error", (error) => {
        logger.error({ err: error, path: req.url }, "static file read failed");
        res.destroy();
      });
    });
    const notFound = () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      logger.warn({ path, method: req.method }, "page not found");
      withSecurityHeaders(res);
      res.writeHead(404, {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Length": notFoundPage.length,
        "Cache-Control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : notFoundPage);
    };
    // The headers file is the build's note to static hosts, not a page.
    if (isHeadersFile(req.url)) notFound();
    else serve(req, res, notFound);
  };
}

/** A site built without the headers step still gets every header that cannot break its pages. */
function withoutHeadersFile(staticDir: string, logger: Logger): HeaderMap {
  logger.warn(
    { staticDir },
    `no ${HEADERS_FILE} in the built site: pages are served without script-src and style-src; run "npm run build"`,
  );
  return FALLBACK_PAGE_HEADERS;
}

function isHeadersFile(url = "/"): boolean {
  try {
    return decodeURIComponent(new URL(url, "http://localhost").pathname) === `/${HEADERS_FILE}`;
  } catch {
    return false;
  }
}
