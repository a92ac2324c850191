import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { run } from "../../../scripts/harness/childProcess.ts";
import { hashSource } from "../../../scripts/pagePolicy.ts";
import { formatHeadersFile, PAGE_HEADERS, parseHeadersFile } from "../../../service/http/securityHeaders.ts";
import { policyDirectives } from "../../harness/policyDirectives.ts";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

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

  it("writes one policy for every page of the build, with the service's origins when it is elsewhere", async () => {
    await writeFile(join(site, "index.html"), `<style>b{}</style><script>home()</script>`);
    await mkdir(join(site, "leaderboard"));
    await writeFile(
      join(site, "leaderboard", "index.html"),
      `<script type="module">fame()</script><nothing-embed data-src="https://video.example/embed/x"></nothing-embed>`,
    );
    await build({ PUBLIC_REALTIME_URL: "wss://auction.example.com:8443/realtime" });

    const headers = parseHeadersFile(await readFile(join(site, "_headers"), "utf8"));
    expect(headers).toMatchObject(PAGE_HEADERS);
    const policy = policyDirectives(headers["Content-Security-Policy"] ?? "");
    expect(policy.get("script-src")).toEqual(["'self'", hashSource("fame()"), hashSource("home()")].sort());
    expect(policy.get("style-src")).toEqual(["'self'", sha256("b{}")]);
    expect(policy.get("frame-src")).toEqual(["https://video.example"]);
    // The socket, and the same service over https for the Wall of Fame's winners.
    expect(policy.get("connect-src")).toEqual([
      "'self'",
      "ws://localhost:*",
      "http://localhost",
      "https://auction.example.com:8443",
      "wss://auction.example.com:8443",
    ]);
  });

  it("connects to the page's own origin only when the socket URL is left to its default", async () => {
    await writeFile(join(site, "index.html"), "<p>nothing</p>");
    await build({ PUBLIC_REALTIME_URL: "" });
    const headers = parseHeadersFile(await readFile(join(site, "_headers"), "utf8"));
    expect(policyDirectives(headers["Content-Security-Policy"] ?? "").get("connect-src")).toEqual([
      "'self'",
      "ws://localhost:*",
      "http://localhost",
    ]);
  });

  it("fails the build on an inline event handler, naming the page", async () => {
    await writeFile(join(site, "index.html"), `<button onclick="buy()">Buy</button>`);
    await expect(build()).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("index.html: event handler"),
    });
  });
});
