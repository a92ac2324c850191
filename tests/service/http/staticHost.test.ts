/**
 * `npm run serve:static` (scripts/serve-static.ts, scripts/staticHost.ts), the pages' server of the
 * split shape (docs/deploying.md "Deploying"), run as an operator runs it, over a site built by the
 * real build steps: every rule of the build's `_headers` on the answers it matches, content types,
 * the precompressed files, the 404 page, its settings refused with exit 2 naming the variable, and
 * SIGTERM to npm's process stopping it. Then the nginx snippet of docs/deploying.md held to the same
 * `_headers` and the same cache rules, and run under Debian's nginx, every answer equal to the
 * static host's, so the two cannot drift.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run, withTimeout } from "../../../scripts/harness/childProcess.ts";
import { freePort } from "../../../scripts/harness/ports.ts";
import { builtServiceOrigins } from "../../../scripts/staticHost.ts";
import { HEADERS_FILE, parseHeadersFile } from "../../../service/http/securityHeaders.ts";
import { ASSET, ASSET_PATH, buildTestSite, HOME_PAGE, NOT_FOUND_PAGE, type TestSite } from "../harness/builtSite.ts";
import { NGINX, nginxConfig, onLoopback } from "../harness/nginx.ts";

/**
 * A Content-Type as both servers may spell it: parameters spaced either way, JavaScript under
 * either of its names (RFC 9239), and a charset only where it matters, on pages (nginx's mime.types
 * names scripts application/javascript, and its `charset` adds one to them too).
 */
function sameType(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const [essence = "", ...parameters] = contentType
    .toLowerCase()
    .split(";")
    .map((part) => part.trim());
  const type = essence === "application/javascript" ? "text/javascript" : essence;
  return type === "text/html" ? [type, ...parameters].join(";") : type;
}

/** Debian's nginx (`.ci/run` installs it), for the docs' snippet. */
/** What the service and the static host send with a page (hosts revalidate pages by default too). */
const PAGE_CACHE_CONTROL = "public, max-age=0, must-revalidate";
const HTML = /^text\/html; ?charset=utf-8$/;

interface StaticServer {
  child: ChildProcess;
  origin: string;
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
}

/** `npm run serve:static` with `env`, resolved once its start line names the address. */
async function startStaticServer(env: Record<string, string>): Promise<StaticServer> {
  // A process group of its own: the cleanup ends npm and the server it started together.
  const child = spawn("npm", ["run", "serve:static"], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  // "close": the output is all read by then, so `logs` is complete.
  const exited = once(child, "close").then(([code]) => code as number | null);
  const logs: Record<string, unknown>[] = [];
  const started = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (!line.startsWith("{")) return; // npm's banner
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.port === "number" && String(entry.msg).startsWith("The Nothing Store's pages are served at")) {
        resolve(`http://127.0.0.1:${entry.port}`);
      }
    });
    void exited.then((code) => reject(new Error(`npm run serve:static exited (${code}) before its start line`)));
  });
  const origin = await withTimeout(started, 30_000, "npm run serve:static starting");
  return { child, origin, logs, exited };
}

/** Runs `node scripts/serve-static.ts` with `env` to its end: its exit code and what it wrote to stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  try {
    await run(process.execPath, ["scripts/serve-static.ts"], {
      env: { ...process.env, HOST: "127.0.0.1", PORT: "0", ...env },
      timeout: 30_000,
    });
    return { code: 0, stderr: "" };
  } catch (error) {
    const { code, stderr } = error as { code: number | null; stderr: string };
    return { code, stderr };
  }
}

/** Every rule of a `_headers` file: a path pattern (a trailing `*` matches any rest) and its headers. */
function headerRules(text: string): { pattern: string; headers: Record<string, string> }[] {
  const rules: { pattern: string; headers: Record<string, string> }[] = [];
  for (const line of text.split("\n")) {
    const header = /^\s+([^:]+):\s*(.*)$/.exec(line);
    if (header?.[1] && header[2] !== undefined) {
      const current = rules.at(-1);
      if (current) current.headers[header[1]] = header[2];
    } else if (line.startsWith("/")) {
      rules.push({ pattern: line.trim(), headers: {} });
    }
  }
  return rules;
}

function matches(pattern: string, path: string): boolean {
  return pattern.endsWith("*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

let site: TestSite;
let server: StaticServer;
let headersText: string;

beforeAll(async () => {
  site = await buildTestSite();
  headersText = await readFile(join(site.dir, HEADERS_FILE), "utf8");
  server = await startStaticServer({ ASTRO_OUT_DIR: site.dir });
});

/** SIGKILL to the server's whole process group (npm and node), whatever is left of it. */
function killGroup(server: StaticServer | undefined): void {
  if (server?.child.pid === undefined) return;
  try {
    process.kill(-server.child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

afterAll(async () => {
  killGroup(server);
  await site?.remove();
});

describe("npm run serve:static", () => {
  it("names its address and folder, and warns that pages built without PUBLIC_REALTIME_URL find no auction here", async () => {
    const start = server.logs.find((entry) => String(entry.msg).startsWith("The Nothing Store's pages"));
    expect(start).toMatchObject({ msg: `The Nothing Store's pages are served at ${server.origin} from ${site.dir}` });
    // The warning follows the start line.
    await expect
      .poll(() => String(server.logs.find((entry) => entry.level === 40)?.msg))
      .toContain("built without PUBLIC_REALTIME_URL");
  });

  it("sends every header of every _headers rule that matches the path, the asset rule's cache included", async () => {
    const rules = headerRules(headersText);
    expect(rules.map((rule) => rule.pattern)).toEqual(["/*", "/_astro/*", "/actions.json"]);
    for (const path of ["/", "/leaderboard/", ASSET_PATH, "/no-such-page", "/actions.json"]) {
      const response = await fetch(`${server.origin}${path}`);
      await response.arrayBuffer();
      for (const rule of rules.filter((each) => matches(each.pattern, path))) {
        for (const [name, value] of Object.entries(rule.headers)) {
          expect(response.headers.get(name), `${path} ${name}`).toBe(value);
        }
      }
    }
    expect(rules[0]?.headers["Content-Security-Policy"]).toMatch(/^default-src 'self'; script-src 'self' 'sha256-/);
  });

  it("answers pages revalidated and hashed assets immutable, each with its content type", async () => {
    const page = await fetch(`${server.origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(HTML);
    expect(page.headers.get("cache-control")).toBe(PAGE_CACHE_CONTROL);
    expect(await page.text()).toBe(HOME_PAGE);

    const asset = await fetch(`${server.origin}${ASSET_PATH}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await asset.text()).toBe(ASSET);
  });

  it("sends the build's precompressed files to clients that accept them", async () => {
    for (const coding of ["br", "gzip"]) {
      const response = await fetch(`${server.origin}/`, { headers: { "Accept-Encoding": coding } });
      expect(response.headers.get("content-encoding"), coding).toBe(coding);
      expect(response.headers.get("vary"), coding).toBe("Accept-Encoding");
      expect(await response.text(), coding).toBe(HOME_PAGE);
    }
  });

  it("answers an unknown path, and _headers itself, with the 404 page and status 404", async () => {
    for (const path of ["/no-such-page", "/_astro/gone.js", "/_headers"]) {
      const response = await fetch(`${server.origin}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toMatch(HTML);
      expect(await response.text(), path).toBe(NOT_FOUND_PAGE);
    }
    const post = await fetch(`${server.origin}/`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("reads the auction the pages were built for from the CSP's connect-src", async () => {
    const dir = await mkdtemp(join(tmpdir(), "nothing-static-origins-"));
    try {
      await writeFile(
        join(dir, HEADERS_FILE),
        "/*\n  Content-Security-Policy: default-src 'self'; connect-src 'self' ws://localhost:* http://localhost http://a.example:4321 ws://a.example:4321; frame-src 'none'\n",
      );
      expect(builtServiceOrigins(dir)).toEqual(["ws://a.example:4321"]);
      expect(builtServiceOrigins(site.dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [{ PORT: "80a" }, 'Configuration error: PORT must be an integer from 0 to 65535, got "80a"'],
    [{ PORT: "70000" }, 'Configuration error: PORT must be an integer from 0 to 65535, got "70000"'],
    [
      { HOST: "no-such-host.invalid" },
      'Configuration error: HOST must be an address of this machine, got "no-such-host.invalid"',
    ],
    [{ HOST: "192.0.2.1" }, 'Configuration error: HOST must be an address of this machine, got "192.0.2.1"'],
    [
      { ASTRO_OUT_DIR: "/nonexistent/dsit" },
      'Configuration error: ASTRO_OUT_DIR must name a built site, got "/nonexistent/dsit"',
    ],
  ])(
    "refuses %o with exit 2, naming the variable",
    async (settings, message) => {
      const { code, stderr } = await refusedStart({ ASTRO_OUT_DIR: site.dir, ...settings });
      expect(stderr).toContain(message);
      expect(stderr).not.toContain("    at ");
      expect(code).toBe(2);
    },
    30_000,
  );

  it("exits 1 naming HOST:PORT when the port is taken", async () => {
    const taken = new URL(server.origin).port;
    const { code, stderr } = await refusedStart({ ASTRO_OUT_DIR: site.dir, PORT: taken });
    expect(stderr).toContain(`Could not listen on 127.0.0.1:${taken} (HOST:PORT): the port is taken`);
    expect(code).toBe(1);
  });

  it("stops when npm's own process gets SIGTERM, as a supervisor sends it", async () => {
    const second = await startStaticServer({ ASTRO_OUT_DIR: site.dir });
    try {
      expect((await fetch(`${second.origin}/`)).status).toBe(200);
      second.child.kill("SIGTERM");
      await withTimeout(second.exited, 10_000, "npm run serve:static stopping");
      // The server itself is gone, not only npm: nothing answers on its port, and it said so.
      await expect(fetch(`${second.origin}/`)).rejects.toThrow();
      expect(second.logs.find((entry) => entry.msg === "stopped")).toMatchObject({ signal: "SIGTERM" });
    } finally {
      killGroup(second);
    }
  });
});

describe("the nginx snippet of docs/deploying.md", () => {
  let docs: string;
  beforeAll(async () => {
    docs = await readFile("docs/deploying.md", "utf8");
  });
  /** The docs' `sed` line that turns the build's `_headers` into nginx's include file. */
  const sedLine = () => docs.split("\n").find((line) => line.startsWith("sed -n ") && line.includes("dist/_headers"));
  /** Runs that line as written, on the test's build, writing the include file to `output`. */
  async function writeHeadersInclude(output: string): Promise<void> {
    const adapted = String(sedLine())
      .replace("dist/_headers", join(site.dir, HEADERS_FILE))
      .replace("/etc/nginx/nothing-store-headers.conf", output);
    await run("sh", ["-c", adapted]);
  }

  it("writes exactly the /* rule of _headers as nginx add_header lines", async () => {
    expect(sedLine()).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), "nothing-nginx-"));
    try {
      const output = join(dir, "headers.conf");
      await writeHeadersInclude(output);
      const lines = (await readFile(output, "utf8")).trim().split("\n");
      const written = Object.fromEntries(
        lines.map((line) => {
          const parsed = /^add_header ([A-Za-z-]+) "([^"]*)" always;$/.exec(line);
          expect(parsed, line).not.toBeNull();
          return [parsed?.[1], parsed?.[2]];
        }),
      );
      expect(written).toEqual(parseHeadersFile(headersText));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("caches as _headers and the static host do: pages revalidated, /_astro/ immutable, both with the build's headers", async () => {
    const block = /```nginx\n([\s\S]*?)```/.exec(docs)?.[1] ?? "";
    const astroLocation = /location \/_astro\/ \{([^}]*)\}/.exec(block)?.[1] ?? "";
    const serverLevel = block.replace(/location[^{]*\{[^}]*\}/g, "");
    const cacheOf = (text: string) => /add_header Cache-Control "([^"]*)" always;/.exec(text)?.[1];
    const assetRule = headerRules(headersText).find((rule) => rule.pattern === "/_astro/*");

    expect(cacheOf(astroLocation)).toBe(assetRule?.headers["Cache-Control"]);
    expect(cacheOf(serverLevel)).toBe(PAGE_CACHE_CONTROL);
    const served = await fetch(`${server.origin}${ASSET_PATH}`);
    expect(served.headers.get("cache-control")).toBe(cacheOf(astroLocation));
    // nginx drops the server's add_header lines in a location that has its own: both include them.
    for (const scope of [serverLevel, astroLocation]) {
      expect(scope).toContain("include /etc/nginx/nothing-store-headers.conf;");
    }
    expect(block).toContain("error_page 404 /404.html;");
    expect(block).toMatch(/location = \/_headers \{\s*return 404;\s*\}/);
  });

  it("serves the build under a real nginx as npm run serve:static does: status, type, encoding and every header", async () => {
    const dir = await mkdtemp(join(tmpdir(), "nothing-nginx-"));
    let nginx: ChildProcess | undefined;
    try {
      const included = join(dir, "headers.conf");
      await writeHeadersInclude(included);
      // The documented block as written, but for its address, folder and include file.
      const port = await freePort();
      const block = onLoopback(/```nginx\n([\s\S]*?)```/.exec(docs)?.[1] ?? "", port)
        .replace("root /srv/nothing-store/dist;", `root ${site.dir};`)
        .replaceAll("/etc/nginx/nothing-store-headers.conf", included);
      const config = join(dir, "nginx.conf");
      await writeFile(
        config,
        nginxConfig(dir, ["    include /etc/nginx/mime.types;", "    default_type application/octet-stream;", block]),
      );
      nginx = spawn(NGINX, ["-p", dir, "-c", config], { stdio: ["ignore", "inherit", "inherit"] });
      const origin = `http://127.0.0.1:${port}`;
      await expect
        .poll(
          () =>
            fetch(origin).then(
              (answer) => answer.status,
              () => 0,
            ),
          { timeout: 10_000 },
        )
        .toBe(200);

      // What each answer must agree on; Date, Server, ETag and Last-Modified are each server's own.
      const compared = [
        "content-type",
        "content-encoding",
        "cache-control",
        ...Object.keys(parseHeadersFile(headersText)).map((name) => name.toLowerCase()),
      ];
      for (const [path, acceptEncoding] of [
        ["/", "identity"],
        ["/", "gzip"],
        ["/leaderboard/", "identity"],
        [ASSET_PATH, "gzip"],
        ["/no-such-page", "identity"],
        ["/_headers", "identity"],
      ] as const) {
        const [fromNginx, fromStaticHost] = await Promise.all(
          [origin, server.origin].map(async (base) => {
            const answer = await fetch(`${base}${path}`, { headers: { "accept-encoding": acceptEncoding } });
            const body = await answer.text();
            const headers = Object.fromEntries(compared.map((name) => [name, answer.headers.get(name)]));
            return {
              status: answer.status,
              body,
              headers: { ...headers, "content-type": sameType(headers["content-type"]) },
            };
          }),
        );
        expect(fromNginx, `${path} (${acceptEncoding})`).toEqual(fromStaticHost);
      }
    } finally {
      nginx?.kill("SIGTERM");
      if (nginx && nginx.exitCode === null) await withTimeout(once(nginx, "exit"), 10_000, "nginx stopping");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
