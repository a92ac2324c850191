/**
 * A plain static host for built pages, as Netlify or Cloudflare Pages would serve them: files from
 * a folder (sirv), the `/*` rule of its `_headers` file on every answer, and 404.html with status
 * 404 for anything else. No auction, no operations routes: the second deployment shape's pages.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import sirv from "sirv";
import { parseHeadersFile } from "../../../realtime/securityHeaders.ts";

export interface StaticHost {
  readonly origin: string;
  close(): Promise<void>;
}

export async function serveStaticHost(dir: string): Promise<StaticHost> {
  const headers = parseHeadersFile(readFileSync(join(dir, "_headers"), "utf8"));
  const notFoundPage = readFileSync(join(dir, "404.html"));
  const files = sirv(dir, { etag: true });
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    files(req, res, () => {
      res.writeHead(404, { "Content-Type": "text/html; charset=utf-8" });
      res.end(notFoundPage);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
