import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  contentSecurityPolicy,
  formatHeadersFile,
  hashSource,
  inventoryPage,
  PAGE_HEADERS,
  parseHeadersFile,
} from "../../realtime/securityHeaders.ts";

const run = promisify(execFile);
const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The directives of a policy by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(";").map((directive) => {
      const [name = "", ...values] = directive.trim().split(/\s+/);
      return [name, values];
    }),
  );
}

describe("inventoryPage", () => {
  it("hashes inline scripts and styles exactly as written, and skips external scripts", () => {
    const page = inventoryPage(
      `<!doctype html><style>a{color:red}</style><script type="module">console.log("<a onclick=x>")</script>` +
        `<script src="/_astro/app.js"></script><script>(()=>{})()</script>`,
    );
    expect(page.scriptHashes).toEqual(new Set([sha256('console.log("<a onclick=x>")'), sha256("(()=>{})()")]));
    expect(page.styleHashes).toEqual(new Set([sha256("a{color:red}")]));
    expect(page.problems).toEqual([]);
  });

  it("hashes the text as the browser parses it: line breaks normalised to LF", () => {
    const page = inventoryPage("<script>a();\r\nb();\rc();</script>");
    expect(page.scriptHashes).toEqual(new Set([sha256("a();\nb();\nc();")]));
  });

  it("reads the origins of frames and click-to-load embeds", () => {
    const page = inventoryPage(
      `<nothing-embed class="x" data-src="https://www.youtube-nocookie.com/embed/abc?autoplay=1&amp;rel=0"></nothing-embed>` +
        `<iframe title="chart" src="https://dexscreener.com/solana/x?embed=1"></iframe>`,
    );
    expect(page.frameOrigins).toEqual(new Set(["https://www.youtube-nocookie.com", "https://dexscreener.com"]));
  });

  it("reports inline code that no hash can allow", () => {
    const page = inventoryPage(`<button onclick="go()">Go</button><a href="javascript:void 0">x</a>`);
    expect(page.problems).toEqual([
      expect.stringContaining("event handler attribute onclick"),
      expect.stringContaining("javascript: URL"),
    ]);
  });
});

describe("contentSecurityPolicy", () => {
  const policy = contentSecurityPolicy({
    scriptHashes: ["'sha256-b'", "'sha256-a'", "'sha256-a'"],
    styleHashes: ["'sha256-s'"],
    frameOrigins: ["https://www.youtube-nocookie.com"],
    connectOrigins: ["wss://auction.example.com"],
  });
  const parsed = directives(policy);

  it("allows scripts from the site and by hash only, never inline", () => {
    expect(parsed.get("script-src")).toEqual(["'self'", "'sha256-a'", "'sha256-b'"]);
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(policy).not.toContain("unsafe-eval");
  });

  it("limits frames, connections and everything else", () => {
    expect(parsed.get("frame-src")).toEqual(["https://www.youtube-nocookie.com"]);
    expect(parsed.get("connect-src")).toEqual(["'self'", "wss://auction.example.com"]);
    expect(parsed.get("style-src")).toEqual(["'self'", "'sha256-s'"]);
    expect(parsed.get("object-src")).toEqual(["'none'"]);
    expect(parsed.get("frame-ancestors")).toEqual(["'none'"]);
    expect(parsed.get("base-uri")).toEqual(["'none'"]);
  });

  it("frames nothing when the pages have no embed", () => {
    const bare = directives(
      contentSecurityPolicy({ scriptHashes: [], styleHashes: [], frameOrigins: [], connectOrigins: [] }),
    );
    expect(bare.get("frame-src")).toEqual(["'none'"]);
    expect(bare.get("script-src")).toEqual(["'self'"]);
  });
});

describe("the _headers file", () => {
  it("reads back what it writes, ignoring comments and other rules", () => {
    const headers = { "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'", ...PAGE_HEADERS };
    const file = formatHeadersFile(headers, ["generated"]);
    expect(file.startsWith("# generated\n/*\n  Content-Security-Policy: default-src 'self'")).toBe(true);
    expect(parseHeadersFile(`${file}\n/_astro/*\n  Cache-Control: immutable\n`)).toEqual(headers);
  });
});

describe("scripts/security-headers.ts", () => {
  let site: string;
  beforeEach(async () => {
    site = await mkdtemp(join(tmpdir(), "nothing-headers-"));
  });
  afterEach(async () => {
    await rm(site, { recursive: true, force: true });
  });

  async function build(env: NodeJS.ProcessEnv = {}) {
    return run(process.execPath, ["scripts/security-headers.ts", site], { env: { ...process.env, ...env } });
  }

  it("writes one policy for every page of the build, with the socket's origin when it is elsewhere", async () => {
    await writeFile(join(site, "index.html"), `<style>b{}</style><script>home()</script>`);
    await mkdir(join(site, "leaderboard"));
    await writeFile(
      join(site, "leaderboard", "index.html"),
      `<script type="module">fame()</script><nothing-embed data-src="https://video.example/embed/x"></nothing-embed>`,
    );
    await build({ PUBLIC_REALTIME_URL: "wss://auction.example.com:8443/realtime" });

    const headers = parseHeadersFile(await readFile(join(site, "_headers"), "utf8"));
    expect(headers).toMatchObject(PAGE_HEADERS);
    const policy = directives(headers["Content-Security-Policy"] ?? "");
    expect(policy.get("script-src")).toEqual(["'self'", hashSource("fame()"), hashSource("home()")].sort());
    expect(policy.get("style-src")).toEqual(["'self'", sha256("b{}")]);
    expect(policy.get("frame-src")).toEqual(["https://video.example"]);
    expect(policy.get("connect-src")).toEqual(["'self'", "wss://auction.example.com:8443"]);
  });

  it("connects to the page's own origin only when the socket URL is left to its default", async () => {
    await writeFile(join(site, "index.html"), "<p>nothing</p>");
    await build({ PUBLIC_REALTIME_URL: "" });
    const headers = parseHeadersFile(await readFile(join(site, "_headers"), "utf8"));
    expect(directives(headers["Content-Security-Policy"] ?? "").get("connect-src")).toEqual(["'self'"]);
  });

  it("fails the build on an inline event handler, naming the page", async () => {
    await writeFile(join(site, "index.html"), `<button onclick="buy()">Buy</button>`);
    await expect(build()).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("index.html: event handler"),
    });
  });
});
