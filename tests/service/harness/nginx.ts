/**
 * Debian's nginx for tests of the documented blocks (staticHost.test.ts, serviceProxy.test.ts):
 * a configuration whose every path is in the test's own folder, around the block under test.
 */
import { join } from "node:path";

export const NGINX = "/usr/sbin/nginx";

/** nginx.conf in `dir`, running in the foreground, with `http` (lines of its http block). */
export function nginxConfig(dir: string, http: string[]): string {
  return [
    // Run as root (CI), its workers read the test's private temp folder as root too.
    process.getuid?.() === 0 ? "user root;" : "",
    "daemon off;",
    `pid ${join(dir, "nginx.pid")};`,
    `error_log ${join(dir, "error.log")} warn;`,
    "events {}",
    "http {",
    "    access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `    ${kind}_temp_path ${join(dir, kind)};`),
    ...http,
    "}",
  ].join("\n");
}

/**
 * A documented server block on a loopback port, plain HTTP: its `listen 443 ssl` and certificate
 * lines give way to `listen 127.0.0.1:<port>` (nginxBlocks.test.ts checks the blocks as written).
 */
export function onLoopback(block: string, port: number): string {
  return block.replace("listen 443 ssl;", `listen 127.0.0.1:${port};`).replace(/^\s*ssl_certificate(_key)? .*\n/gm, "");
}
