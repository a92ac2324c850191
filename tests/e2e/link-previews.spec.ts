/**
 * Links that look right when shared (docs/design.md#9, docs/product.md#2-head). The head of every
 * page `npm run build` left in dist/, each image it or the manifest names fetched from the running
 * service (type, cache, pixel size from the PNG header), the manifest as Chromium reads it under
 * the page's CSP, and robots.txt and the sitemap naming each other. Last, a build of its own with
 * PUBLIC_SITE_URL set: every absolute URL follows it, and the images keep their names.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { type DefaultTreeAdapterTypes, parse } from "parse5";
import { loadEnv } from "vite";
import { run } from "../../scripts/harness/childProcess.ts";
import { parseSiteUrl } from "../../src/lib/siteConfig.ts";
import { palette } from "../../uno.config.ts";
import { scaled } from "../harness/timeBudgets.ts";

/** The built pages, by file, and the path each is canonical at. */
const PAGES = [
  { file: "index.html", path: "/" },
  { file: "leaderboard/index.html", path: "/leaderboard/" },
  { file: "404.html", path: "/404/" },
];
const SHARE_IMAGE_ALT =
  "The Nothing Store: Buy Nothing. Feel Everything. An empty glass display case on a velvet pedestal, " +
  "under a spotlight, with a price tag reading 0 $ZN.";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The origin dist/ was built for: astro.config.mjs reads it the same way. */
const siteOrigin = () => parseSiteUrl(loadEnv("production", process.cwd(), "PUBLIC_"));

interface Head {
  title: string;
  /** Every <meta property|name> as [key, content], in order. */
  metas: [string, string][];
  /** Every <link> as its attributes. */
  links: Record<string, string>[];
  /** The content of the one meta with this property or name; fails on none or several. */
  meta(key: string): string;
  /** The one <link> with this rel. */
  link(rel: string): Record<string, string>;
}

type Element = DefaultTreeAdapterTypes.Element;

function readHead(html: string): Head {
  const document = parse(html);
  const find = (nodes: DefaultTreeAdapterTypes.ChildNode[], tag: string) =>
    nodes.find((node): node is Element => "tagName" in node && node.tagName === tag);
  const htmlElement = find(document.childNodes, "html");
  const head = htmlElement && find(htmlElement.childNodes, "head");
  if (!head) throw new Error("the page has no <head>");
  const elements = head.childNodes.filter((node): node is Element => "tagName" in node);
  const attributes = (element: Element) => Object.fromEntries(element.attrs.map(({ name, value }) => [name, value]));
  const metas = elements
    .filter((element) => element.tagName === "meta")
    .map(attributes)
    .flatMap((meta): [string, string][] => {
      const key = meta.property ?? meta.name;
      return key === undefined ? [] : [[key, meta.content ?? ""]];
    });
  const links = elements.filter((element) => element.tagName === "link").map(attributes);
  const titleElement = elements.find((element) => element.tagName === "title");
  const title = titleElement?.childNodes.map((node) => ("value" in node ? node.value : "")).join("") ?? "";
  return {
    title,
    metas,
    links,
    meta(key) {
      const found = metas.filter(([name]) => name === key);
      expect(found, `one <meta> ${key}`).toHaveLength(1);
      return found[0]?.[1] ?? "";
    },
    link(rel) {
      const found = links.filter((link) => link.rel === rel);
      expect(found, `one <link rel="${rel}">`).toHaveLength(1);
      return found[0] ?? {};
    },
  };
}

const readBuiltHead = async (dir: string, file: string) => readHead(await readFile(join(dir, file), "utf8"));

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE), "PNG signature").toBe(true);
  expect(bytes.toString("ascii", 12, 16)).toBe("IHDR");
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** GETs a path from the running service and checks it is a PNG of this size, cached as a hashed asset. */
async function expectPng(request: APIRequestContext, path: string, width: number, height: number) {
  expect(path, "a hashed asset's path").toMatch(/^\/_astro\/[\w-]+\.[\w-]{8}\.png$/);
  const response = await request.get(path);
  expect(response.status(), path).toBe(200);
  expect(response.headers()["content-type"], path).toBe("image/png");
  expect(response.headers()["cache-control"], path).toBe("public, max-age=31536000, immutable");
  expect(pngSize(await response.body()), path).toEqual({ width, height });
}

/** The <loc> URLs of a sitemap or sitemap index. */
const locations = (xml: string) => [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((match) => match[1] ?? "");

test("every page's head names the PNG share image, the site, the large card, the icons and the manifest", async () => {
  const origin = siteOrigin();
  const shareImages = new Set<string>();
  for (const { file, path } of PAGES) {
    const head = await readBuiltHead("dist", file);
    const canonical = head.link("canonical").href;
    expect(canonical, file).toBe(`${origin}${path}`);
    expect(head.meta("og:url"), file).toBe(canonical);
    expect(head.meta("og:site_name"), file).toBe("The Nothing Store");
    expect(head.meta("og:type"), file).toBe("website");
    expect(head.meta("og:title"), file).toBe(head.title);
    expect(head.meta("og:description"), file).toBe(head.meta("description"));

    const image = head.meta("og:image");
    expect(image, file).toMatch(new RegExp(`^${origin.replaceAll(".", "\\.")}/_astro/share-image\\.[\\w-]{8}\\.png$`));
    shareImages.add(image);
    expect(head.meta("og:image:type"), file).toBe("image/png");
    expect(head.meta("og:image:width"), file).toBe("1200");
    expect(head.meta("og:image:height"), file).toBe("630");
    expect(head.meta("og:image:alt"), file).toBe(SHARE_IMAGE_ALT);
    expect(head.meta("twitter:card"), file).toBe("summary_large_image");
    expect(head.meta("twitter:image:alt"), file).toBe(SHARE_IMAGE_ALT);

    expect(head.link("icon"), file).toEqual({ rel: "icon", href: "/favicon.svg", type: "image/svg+xml" });
    expect(head.link("apple-touch-icon").href, file).toMatch(/^\/_astro\/apple-touch-icon\.[\w-]{8}\.png$/);
    expect(head.link("manifest").href, file).toBe("/manifest.webmanifest");
    expect(head.meta("theme-color"), file).toBe(palette.void.DEFAULT);
  }
  // One picture for the whole store.
  expect(shareImages.size).toBe(1);
});

test("the service sends each image as a PNG of its stated size: the share image, the apple-touch icon, the manifest's icons", async ({
  request,
}) => {
  const head = await readBuiltHead("dist", "index.html");
  await expectPng(request, new URL(head.meta("og:image")).pathname, 1200, 630);
  await expectPng(request, head.link("apple-touch-icon").href ?? "", 180, 180);

  const response = await request.get(head.link("manifest").href ?? "");
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toBe("application/manifest+json");
  const manifest = await response.json();
  expect(manifest).toMatchObject({
    id: "/",
    name: "The Nothing Store",
    short_name: "Nothing",
    start_url: "/",
    scope: "/",
    display: "standalone",
    theme_color: palette.void.DEFAULT,
    background_color: palette.void.DEFAULT,
  });
  const icons: { src: string; sizes: string; type: string; purpose: string }[] = manifest.icons;
  expect(icons.map(({ sizes, type, purpose }) => [sizes, type, purpose])).toEqual([
    ["192x192", "image/png", "any"],
    ["512x512", "image/png", "any"],
    ["512x512", "image/png", "maskable"],
  ]);
  for (const icon of icons) {
    const [width, height] = icon.sizes.split("x").map(Number);
    await expectPng(request, icon.src, width ?? 0, height ?? 0);
  }
});

test("Chromium reads the manifest under the page's CSP, without errors, and finds nothing in the way of installing", async ({
  page,
}) => {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content.Security.Policy|Manifest/i.test(message.text())) violations.push(message.text());
  });
  await page.goto("/");
  const browser = await page.context().newCDPSession(page);
  const manifest = await browser.send("Page.getAppManifest");
  expect(manifest.url).toBe(new URL("/manifest.webmanifest", page.url()).href);
  expect(manifest.errors).toEqual([]);
  expect(JSON.parse(manifest.data ?? "{}").name).toBe("The Nothing Store");
  const { installabilityErrors } = await browser.send("Page.getInstallabilityErrors");
  // Playwright's contexts are off the record, where Chromium installs nothing: the one reason allowed.
  expect(installabilityErrors.filter(({ errorId }) => errorId !== "in-incognito")).toEqual([]);
  expect(violations).toEqual([]);
});

test("robots.txt names the sitemap by its absolute URL, and the sitemap lists every page but the 404", async ({
  request,
}) => {
  const origin = siteOrigin();
  const robots = await request.get("/robots.txt");
  expect(robots.status()).toBe(200);
  expect(robots.headers()["content-type"]).toMatch(/^text\/plain/);
  expect(await robots.text()).toBe(`User-agent: *\nAllow: /\n\nSitemap: ${origin}/sitemap-index.xml\n`);

  const index = await request.get("/sitemap-index.xml");
  expect(index.status()).toBe(200);
  expect(index.headers()["content-type"]).toMatch(/xml/);
  const sitemaps = locations(await index.text());
  expect(sitemaps).toEqual([`${origin}/sitemap-0.xml`]);

  const sitemap = await request.get(new URL(sitemaps[0] ?? "").pathname);
  expect(sitemap.status()).toBe(200);
  const pages = locations(await sitemap.text());
  expect(pages).toEqual([`${origin}/`, `${origin}/leaderboard/`]);
  for (const page of pages) {
    const response = await request.get(new URL(page).pathname);
    expect(response.status(), page).toBe(200);
    expect(readHead(await response.text()).link("canonical").href, page).toBe(page);
  }
});

test("a build with PUBLIC_SITE_URL starts every absolute URL with it, and draws the same images under the same names", async () => {
  // A build of its own (seconds on a quiet machine, far more on a busy one).
  test.setTimeout(scaled(300_000));
  const site = "https://nothing-store.example";
  const outDir = await mkdtemp(join(tmpdir(), "nothing-previews-"));
  try {
    await run("npm", ["run", "build"], {
      env: { ...process.env, ASTRO_OUT_DIR: outDir, PUBLIC_SITE_URL: site },
      timeout: scaled(280_000),
    });
    for (const { file, path } of PAGES) {
      const head = await readBuiltHead(outDir, file);
      const shipped = await readBuiltHead("dist", file);
      expect(head.link("canonical").href, file).toBe(`${site}${path}`);
      expect(head.meta("og:url"), file).toBe(`${site}${path}`);
      const image = new URL(head.meta("og:image"));
      expect(image.origin, file).toBe(site);
      expect(image.pathname, file).toBe(new URL(shipped.meta("og:image")).pathname);
      expect(head.link("apple-touch-icon").href, file).toBe(shipped.link("apple-touch-icon").href);
    }
    const built = (name: string) => readFile(join(outDir, name), "utf8");
    expect(await built("robots.txt")).toContain(`\nSitemap: ${site}/sitemap-index.xml\n`);
    expect(locations(await built("sitemap-index.xml"))).toEqual([`${site}/sitemap-0.xml`]);
    expect(locations(await built("sitemap-0.xml"))).toEqual([`${site}/`, `${site}/leaderboard/`]);
    expect(await built("manifest.webmanifest")).toBe(await readFile(join("dist", "manifest.webmanifest"), "utf8"));
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});
