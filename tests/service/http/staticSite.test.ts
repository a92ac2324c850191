import { cp, mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SocketServer } from "../../../service/auction/socketServer.ts";
import { PAGE_HEADERS } from "../../../service/http/securityHeaders.ts";
import { BUILD_CHECK_MS, REPLACED_BUILD_ASSETS_MS, REPLACED_BUILDS_KEPT } from "../../../service/http/staticSite.ts";
import { createLogger } from "../../../service/logger.ts";
import { createMetrics } from "../../../service/metrics.ts";
import { createAppServer } from "../../../service/server.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import { buildTestSite, NOT_FOUND_PAGE } from "../harness/builtSite.ts";

interface LogLine {
  level: number;
  msg: string;
  path?: string;
}

const PAGE_POLICY = "default-src 'self'; script-src 'self' 'sha256-abc='; frame-ancestors 'none'";
const HEADERS_FILE = `# generated\n/*\n  Content-Security-Policy: ${PAGE_POLICY}\n${Object.entries(PAGE_HEADERS)
  .map(([name, value]) => `  ${name}: ${value}`)
  .join("\n")}\n`;

let site: string;
let server: Server;
let base: string;
let logs: LogLine[];

async function startServer(staticDir: string) {
  logs = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  server = createAppServer({ port: 0, host: "127.0.0.1", staticDir, logLevel: "info" }, createLogger("info", sink));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeEach(async () => {
  site = await mkdtemp(join(tmpdir(), "nothing-site-"));
  const home = `<!doctype html><title>home</title>${"<p>nothing</p>".repeat(200)}`;
  await writeFile(join(site, "index.html"), home);
  await writeFile(join(site, "index.html.gz"), gzipSync(home));
  await writeFile(join(site, "404.html"), "<!doctype html><h1>Oops! Page not found</h1>");
  await mkdir(join(site, "leaderboard"));
  await writeFile(join(site, "leaderboard", "index.html"), "<!doctype html><h1>Wall of Fame</h1>");
  await mkdir(join(site, "_astro"));
  await writeFile(join(site, "_astro", "app.abc123.js"), "console.log('nothing')");
  await writeFile(join(site, "_headers"), HEADERS_FILE);
  await startServer(site);
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(site, { recursive: true, force: true });
});

describe("static site serving", () => {
  it("serves pages with revalidation and hashed assets as immutable", async () => {
    const home = await fetch(`${base}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toMatch(/text\/html/);
    expect(home.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate");

    const fame = await fetch(`${base}/leaderboard`);
    expect(fame.status).toBe(200);
    expect(await fame.text()).toContain("Wall of Fame");

    const asset = await fetch(`${base}/_astro/app.abc123.js`);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  it("sends the precompressed variant to clients that accept it", async () => {
    const response = await fetch(`${base}/`, { headers: { "Accept-Encoding": "gzip" } });
    expect(response.headers.get("content-encoding")).toBe("gzip");
    expect(await response.text()).toContain("<title>home</title>");
  });

  it("answers unknown paths 404 with the 404 page and logs the path", async () => {
    const response = await fetch(`${base}/no/such/nothing?x=1`);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain("Oops! Page not found");
    expect(logs).toContainEqual(expect.objectContaining({ msg: "page not found", path: "/no/such/nothing" }));
  });

  it("sends the build's security headers with pages, assets and the 404 page", async () => {
    for (const path of ["/", "/leaderboard", "/_astro/app.abc123.js", "/no/such/page"]) {
      const response = await fetch(`${base}${path}`, { headers: { "Accept-Encoding": "gzip" } });
      expect(response.headers.get("content-security-policy"), path).toBe(PAGE_POLICY);
      for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(response.headers.get(name), path).toBe(value);
    }
  });

  it("never echoes the requested path into the 404 page", async () => {
    const probe = "<script>alert(1)</script>";
    const response = await fetch(`${base}/${encodeURIComponent(probe)}?q=${encodeURIComponent(probe)}`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("<!doctype html><h1>Oops! Page not found</h1>");
    const raw = await fetch(`${base}/<script>alert(1)</script>`);
    expect(raw.status).toBe(404);
    expect(await raw.text()).not.toContain("<script>");
  });

  it("answers 404 for the headers file itself: it is the build's note to static hosts", async () => {
    for (const path of ["/_headers", "/%5Fheaders"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.text()).toContain("Oops! Page not found");
    }
  });

  it("without a _headers file, warns and still sends every header that cannot break a page", async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(join(site, "_headers"));
    await startServer(site);
    expect(logs).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringContaining("no _headers") }));
    const home = await fetch(`${base}/`);
    expect(home.headers.get("content-security-policy")).toBe(
      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(home.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("answers the health routes and paths without a site with headers that let nothing run", async () => {
    // Health routes need an auction endpoint; only its readiness is read. /metrics is not public (docs/design.md#9).
    const socketServer = { isReady: () => true, handleUpgrade() {} } as unknown as SocketServer;
    const store = {} as BidStore; // read by the operator console only, which is off here
    const bare = createAppServer({ staticDir: "" }, createLogger("silent"), {
      socketServer,
      metrics: createMetrics(),
      store,
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    try {
      for (const path of ["/healthz", "/readyz", "/metrics", "/%3Cscript%3E"]) {
        const response = await fetch(`${origin}${path}`);
        expect(response.status, path).toBe(path.startsWith("/%3C") || path === "/metrics" ? 404 : 200);
        expect(response.headers.get("content-security-policy"), path).toBe(
          "default-src 'none'; frame-ancestors 'none'",
        );
        expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
        expect(response.headers.get("referrer-policy"), path).toBe("no-referrer");
        if (response.status === 404) expect(await response.text()).toBe('{"error":"not_found"}');
      }
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });

  it("survives a file that disappears while the server runs", async () => {
    await rm(join(site, "index.html.gz"));
    await rm(join(site, "index.html"));
    await expect(fetch(`${base}/`, { headers: { "Accept-Encoding": "gzip" } })).rejects.toThrow();
    expect(logs).toContainEqual(expect.objectContaining({ msg: "static file read failed" }));
    // Still serving.
    expect((await fetch(`${base}/leaderboard`)).status).toBe(200);
  });

  it("refuses to start without a built site, saying what to run", () => {
    expect(() =>
      createAppServer(
        { port: 0, host: "127.0.0.1", staticDir: join(site, "missing"), logLevel: "info" },
        createLogger("silent"),
      ),
    ).toThrow(/run "npm run build" first/);
  });
});

describe("a rebuild into a new directory, switched in through a symlink", () => {
  it("answers every request while STATIC_DIR's link switches builds: no 404, then the new build whole", async () => {
    const builds = await mkdtemp(join(tmpdir(), "nothing-builds-"));
    const [first, second] = [await buildTestSite(), await buildTestSite()];
    const newAsset = "/_astro/next.def456.js";
    await writeFile(join(second.dir, newAsset), "console.log('the next build');");
    const link = join(builds, "dist");
    await symlink(first.dir, link);
    const lines: LogLine[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = createAppServer(
      { port: 0, host: "127.0.0.1", staticDir: link, logLevel: "info" },
      createLogger("info", sink),
    );
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${origin}${newAsset}`)).status).toBe(404);
      const statuses: string[] = [];
      let switched = false;
      let newBuildSince: number | null = null;
      // Bounded: the switch is picked up within BUILD_CHECK_MS; 20 more rounds once it is.
      for (let round = 0; round < 400 && (newBuildSince === null || round < newBuildSince + 20); round++) {
        if (round === 10) {
          // What the docs say to run: a new link beside, renamed over the old one (atomic).
          await symlink(second.dir, join(builds, "dist.next"));
          await rename(join(builds, "dist.next"), link);
          switched = true;
        }
        const [home, asset] = await Promise.all([fetch(`${origin}/`), fetch(`${origin}${newAsset}`)]);
        await Promise.all([home.arrayBuffer(), asset.arrayBuffer()]);
        statuses.push(`${home.status} ${asset.status}`);
        if (switched && asset.status === 200 && newBuildSince === null) newBuildSince = round;
        await new Promise((resolve) => setTimeout(resolve, BUILD_CHECK_MS / 20));
      }
      expect(newBuildSince).not.toBeNull();
      // The pages answered 200 throughout; the old build until the switch was seen, the new one after, never back.
      expect(statuses.every((status) => status.startsWith("200 "))).toBe(true);
      const after = statuses.slice(newBuildSince ?? 0);
      expect(after.every((status) => status === "200 200")).toBe(true);
      expect(statuses.slice(0, newBuildSince ?? 0).every((status) => status === "200 404")).toBe(true);
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: "serving a new build", build: await realpath(second.dir) }),
      );

      // A link switched to something that is no build: logged, and the build before kept.
      const empty = join(builds, "empty");
      await mkdir(empty);
      await symlink(empty, join(builds, "dist.next"));
      await rename(join(builds, "dist.next"), link);
      await new Promise((resolve) => setTimeout(resolve, BUILD_CHECK_MS + 100));
      expect((await fetch(`${origin}${newAsset}`)).status).toBe(200);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: "STATIC_DIR leads to no build: serving the build before",
          serving: await realpath(second.dir),
        }),
      );

      // Then back to a build: the build replaced is the one served, never the refused target.
      await symlink(first.dir, join(builds, "dist.next"));
      await rename(join(builds, "dist.next"), link);
      await new Promise((resolve) => setTimeout(resolve, BUILD_CHECK_MS + 100));
      expect(lines.filter((line) => line.msg === "serving a new build").at(-1)).toMatchObject({
        build: await realpath(first.dir),
        previous: await realpath(second.dir),
      });
    } finally {
      app.closeAllConnections();
      await new Promise((resolve) => app.close(resolve));
      await Promise.all([first.remove(), second.remove(), rm(builds, { recursive: true, force: true })]);
    }
  }, 60_000);
});

describe("a page opened before a switch: the replaced builds' hashed assets", () => {
  let links: string;
  let link: string;
  let app: Server;
  let origin: string;
  let clock: number;
  let template: Awaited<ReturnType<typeof buildTestSite>>;

  /** A build of its own: the test site copied, with an island named by this build's hash. */
  async function makeBuild(hash: string): Promise<string> {
    const dir = join(links, `dist-${hash}`);
    await cp(template.dir, dir, { recursive: true });
    await writeFile(join(dir, `_astro/Auction.${hash}.js`), `console.log(${JSON.stringify(hash)});`);
    return dir;
  }

  /** What deploying.md says to run, then a bounded wait until the service answers from the new build. */
  async function switchTo(dir: string, hash: string) {
    await symlink(dir, join(links, "dist.next"));
    await rename(join(links, "dist.next"), link);
    for (let round = 0; round < 100; round++) {
      const asset = await fetch(`${origin}/_astro/Auction.${hash}.js`);
      await asset.arrayBuffer();
      if (asset.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, BUILD_CHECK_MS / 20));
    }
    throw new Error(`the switch to ${dir} was not seen in 100 rounds`);
  }

  const status = async (path: string, init?: RequestInit) => {
    const response = await fetch(`${origin}${path}`, init);
    await response.arrayBuffer();
    return response.status;
  };

  beforeEach(async () => {
    links = await realpath(await mkdtemp(join(tmpdir(), "nothing-links-")));
    link = join(links, "dist");
    template = await buildTestSite();
    const first = await makeBuild("old111");
    // Only the first build has it, and it is no hashed asset: a switch takes it away at once.
    await writeFile(join(first, "robots.txt"), "User-agent: *\n");
    await symlink(first, link);
    clock = Date.now();
    app = createAppServer(
      { port: 0, host: "127.0.0.1", staticDir: link, logLevel: "silent", staticSiteClock: () => clock },
      createLogger("silent"),
    );
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    app.closeAllConnections();
    await new Promise((resolve) => app.close(resolve));
    await Promise.all([rm(links, { recursive: true, force: true }), template.remove()]);
  });

  it("answers the build before's island throughout a switch, and 404 once 24 h have passed", async () => {
    const second = await makeBuild("new222");
    const rounds: string[] = [];
    let switched = false;
    let newBuildSince: number | null = null;
    // Bounded: the switch is picked up within BUILD_CHECK_MS; 20 more rounds once it is.
    for (let round = 0; round < 400 && (newBuildSince === null || round < newBuildSince + 20); round++) {
      if (round === 10) {
        await symlink(second, join(links, "dist.next"));
        await rename(join(links, "dist.next"), link);
        switched = true;
      }
      const answers = await Promise.all(
        ["/", "/leaderboard", "/_astro/Auction.old111.js", "/_astro/Auction.new222.js"].map((path) => status(path)),
      );
      rounds.push(answers.join(" "));
      if (switched && answers[3] === 200 && newBuildSince === null) newBuildSince = round;
      await new Promise((resolve) => setTimeout(resolve, BUILD_CHECK_MS / 20));
    }
    expect(newBuildSince).not.toBeNull();
    // Pages and the old island 200 in every round; the new island from the switch on, never back.
    expect(rounds.slice(0, newBuildSince ?? 0).every((answers) => answers === "200 200 200 404")).toBe(true);
    expect(rounds.slice(newBuildSince ?? 0).every((answers) => answers === "200 200 200 200")).toBe(true);

    // Served as any asset: immutable, in ranges; the unhashed file the new build lacks is gone at once.
    const old = await fetch(`${origin}/_astro/Auction.old111.js`);
    expect(old.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await old.text()).toBe('console.log("old111");');
    const ranged = await fetch(`${origin}/_astro/Auction.old111.js`, { headers: { Range: "bytes=0-6" } });
    expect([ranged.status, await ranged.text()]).toEqual([206, "console"]);
    expect(await status("/robots.txt")).toBe(404);
    expect(await status("/_astro/Auction.none333.js")).toBe(404);

    clock += REPLACED_BUILD_ASSETS_MS - 60_000;
    expect(await status("/_astro/Auction.old111.js")).toBe(200);
    clock += 60_000;
    const expired = await fetch(`${origin}/_astro/Auction.old111.js`);
    expect([expired.status, await expired.text()]).toEqual([404, NOT_FOUND_PAGE]);
    expect(await status("/_astro/Auction.new222.js")).toBe(200);
    expect(await status("/")).toBe(200);
  }, 60_000);

  it(`keeps the ${REPLACED_BUILDS_KEPT} builds replaced last, and none whose directory is gone`, async () => {
    const hashes = ["b2", "c3", "d4", "e5"];
    for (const hash of hashes) await switchTo(await makeBuild(hash), hash);
    // Serving e5: d4, c3 and b2 are kept; old111, the fourth replaced, is not.
    expect(await status("/_astro/Auction.old111.js")).toBe(404);
    for (const hash of ["b2", "c3", "d4"]) expect(await status(`/_astro/Auction.${hash}.js`)).toBe(200);

    // The operator removed a replaced build's directory: a 404, not a broken answer.
    await rm(join(links, "dist-c3"), { recursive: true });
    expect(await status("/_astro/Auction.c3.js")).toBe(404);
    expect(await status("/_astro/Auction.c3.js", { method: "HEAD" })).toBe(404);

    // A rollback to a replaced build serves it whole again, and keeps the one it replaces.
    await switchTo(join(links, "dist-b2"), "b2");
    expect(await status("/_astro/Auction.e5.js")).toBe(200);
    expect(await status("/_astro/Auction.d4.js")).toBe(200);
  }, 60_000);
});
