import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, inventoryPage, serviceConnectOrigins } from "../../scripts/pagePolicy.ts";
import { policyDirectives } from "../harness/policyDirectives.ts";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

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
  const parsed = policyDirectives(policy);

  it("allows scripts from the site and by hash only, never inline", () => {
    expect(parsed.get("script-src")).toEqual(["'self'", "'sha256-a'", "'sha256-b'"]);
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(policy).not.toContain("unsafe-eval");
  });

  it("limits frames, connections and everything else", () => {
    expect(parsed.get("frame-src")).toEqual(["https://www.youtube-nocookie.com"]);
    expect(parsed.get("connect-src")).toEqual([
      "'self'",
      "ws://localhost:*",
      "http://localhost",
      "wss://auction.example.com",
    ]);
    expect(parsed.get("style-src")).toEqual(["'self'", "'sha256-s'"]);
    expect(parsed.get("object-src")).toEqual(["'none'"]);
    expect(parsed.get("frame-ancestors")).toEqual(["'none'"]);
    expect(parsed.get("base-uri")).toEqual(["'none'"]);
  });

  it("frames nothing when the pages have no embed", () => {
    const bare = policyDirectives(
      contentSecurityPolicy({ scriptHashes: [], styleHashes: [], frameOrigins: [], connectOrigins: [] }),
    );
    expect(bare.get("frame-src")).toEqual(["'none'"]);
    expect(bare.get("script-src")).toEqual(["'self'"]);
  });
});

describe("serviceConnectOrigins", () => {
  it("names the service's socket origin and its http(s) origin, for the Wall of Fame's winners", () => {
    expect(serviceConnectOrigins("wss://auction.example.com/realtime")).toEqual([
      "wss://auction.example.com",
      "https://auction.example.com",
    ]);
    expect(serviceConnectOrigins("ws://127.0.0.1:8787/realtime")).toEqual([
      "ws://127.0.0.1:8787",
      "http://127.0.0.1:8787",
    ]);
  });

  it("adds nothing when the service is on the page's own origin ('self' covers it)", () => {
    expect(serviceConnectOrigins("")).toEqual([]);
  });
});

describe("inventoryPage reads the page as a browser does", () => {
  it("decodes attribute values and finds frames and handlers inside <template> contents", () => {
    const page = inventoryPage(
      `<template><iframe src="https://video.example/embed?a=1&amp;b=2"></iframe><b ONCLICK=x>!</b></template>`,
    );
    expect(page.frameOrigins).toEqual(new Set(["https://video.example"]));
    expect(page.problems).toEqual([expect.stringContaining("event handler attribute onclick in <b>")]);
  });

  it('hashes only real scripts: "</script>" inside another element\'s attribute is text', () => {
    const page = inventoryPage(`<p title="</script>">x</p><script>let a = "</scr" + "ipt>";</script>`);
    expect(page.scriptHashes).toEqual(new Set([sha256('let a = "</scr" + "ipt>";')]));
  });
});
