/**
 * A small site built the way `npm run build` finishes one, for tests that serve pages: a few pages
 * and an asset written to a temp directory, then the real build steps over it
 * (scripts/security-headers.ts writes `_headers` with a policy hashed from the pages,
 * scripts/precompress.ts the .br and .gz variants), without Astro's minutes.
 *
 *   const site = await buildTestSite();   // site.dir is what STATIC_DIR would be
 *   ...
 *   await site.remove();
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "../../../scripts/harness/childProcess.ts";

/** Over precompress.ts's 512-byte floor, so each gets .br and .gz variants. */
export const HOME_PAGE = `<!doctype html><title>home</title><script>home()</script>${"<p>nothing</p>".repeat(100)}`;
export const ASSET_PATH = "/_astro/app.abc123.js";
export const ASSET = `console.log(${JSON.stringify("nothing ".repeat(100))});`;
/** Under the floor: served as is, whatever the client accepts. */
const SMALL_PAGE = "<!doctype html><h1>Wall of Fame</h1>";
export const NOT_FOUND_PAGE = "<!doctype html><h1>Oops! Page not found</h1>";

export interface TestSite {
  dir: string;
  remove(): Promise<void>;
}

export async function buildTestSite(): Promise<TestSite> {
  const dir = await mkdtemp(join(tmpdir(), "nothing-built-site-"));
  await writeFile(join(dir, "index.html"), HOME_PAGE);
  await writeFile(join(dir, "404.html"), NOT_FOUND_PAGE);
  await mkdir(join(dir, "leaderboard"));
  await writeFile(join(dir, "leaderboard", "index.html"), SMALL_PAGE);
  await mkdir(join(dir, "_astro"));
  await writeFile(join(dir, ASSET_PATH), ASSET);
  // What src/pages/actions.json.ts writes for a store that sells: the static host's mapping.
  await writeFile(
    join(dir, "actions.json"),
    '{"rules":[{"pathPattern":"/","apiPath":"https://service.example/api/actions/buy"}]}\n',
  );
  // The socket URL is left to its default, as in a one-process deployment.
  const env = { ...process.env, PUBLIC_REALTIME_URL: "" };
  await run(process.execPath, ["scripts/security-headers.ts", dir], { env });
  await run(process.execPath, ["scripts/precompress.ts", dir], { env });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
