/**
 * `npm run serve:static`: the built pages alone on HOST:PORT (127.0.0.1:8080 unless set), from
 * ASTRO_OUT_DIR (dist unless set, as `npm run build` writes it), for the split shape: the pages here,
 * the auction service elsewhere (docs/deploying.md "Deploying"). A bad setting exits 2 naming its
 * variable, as the service's do; SIGTERM or SIGINT closes the listener and exits 0.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { integerSetting } from "../service/envSettings.ts";
import { createServiceLogger } from "../service/logger.ts";
import { builtServiceOrigins, type StaticHost, serveStaticHost } from "./staticHost.ts";

class StaticSettingError extends Error {}

const DEFAULT_PORT = 8080;
/** What listen's failures on a bad HOST look like: no such name, or no such address on this machine. */
const BAD_HOST_ERRORS = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EADDRNOTAVAIL", "EINVAL"]);

function fail(message: string): never {
  console.error(`Configuration error: ${message}`);
  process.exit(2);
}

let port: number;
try {
  port = integerSetting(process.env, "PORT", { fallback: DEFAULT_PORT, min: 0, max: 65535 }, StaticSettingError);
} catch (error) {
  if (!(error instanceof StaticSettingError)) throw error;
  fail(error.message);
}
// Loopback unless told otherwise, like the service: a proxy or HOST=0.0.0.0 opens it wider.
const host = process.env.HOST?.trim() || "127.0.0.1";
const dir = resolve(process.env.ASTRO_OUT_DIR?.trim() || "dist");
if (!existsSync(join(dir, "404.html"))) {
  fail(`ASTRO_OUT_DIR must name a built site, got "${dir}" (no 404.html there): run "npm run build" first`);
}

const logger = await createServiceLogger("info");
let site: StaticHost;
try {
  site = await serveStaticHost(dir, { port, host, logger });
} catch (error) {
  const { code } = error as NodeJS.ErrnoException;
  if (code && BAD_HOST_ERRORS.has(code)) fail(`HOST must be an address of this machine, got "${host}" (${code})`);
  if (code === "EADDRINUSE") {
    // Not a malformed setting but a clash, as for the service (exit 1): something else holds the port.
    console.error(`Could not listen on ${host}:${port} (HOST:PORT): the port is taken; stop what holds it or set PORT`);
    process.exit(1);
  }
  throw error;
}

const services = builtServiceOrigins(dir);
logger.info(
  { dir, host, port: site.port, auction: services },
  `The Nothing Store's pages are served at ${site.origin} from ${dir}`,
);
if (services.length > 0) {
  logger.info(`Their auction is the service at ${services.join(" and ")} (PUBLIC_REALTIME_URL at build time)`);
} else {
  logger.warn(
    "These pages were built without PUBLIC_REALTIME_URL: they look for the auction at /realtime on this " +
      "server, which serves pages only. Build with PUBLIC_REALTIME_URL=wss://<the service>/realtime, or " +
      "run npm run serve, which serves the pages and the auction together.",
  );
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, async () => {
    await site.close();
    logger.info({ signal }, "stopped");
    process.exit(0);
  });
}
