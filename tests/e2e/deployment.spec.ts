/**
 * The second deployment shape (DESIGN.md 6d, docs/realtime.md "Deploying"): the pages built with
 * PUBLIC_REALTIME_URL naming the service's origin and served by a plain static host that applies
 * _headers, and the service on another port with no pages (STATIC_DIR empty) that accepts sockets
 * from the pages' origin only. Its own build, service and auction: nothing shared with the suite's.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, type Page, test } from "@playwright/test";
import WebSocket from "ws";
import { stopChild, waitForOk } from "../../scripts/support/childProcess.ts";
import { freePort } from "../../scripts/support/ports.ts";
import { auctionForm } from "./fixtures.ts";
import { type StaticHost, serveStaticHost } from "./support/staticHost.ts";

const run = promisify(execFile);
test.describe.configure({ mode: "serial" });

let workDir: string;
let service: ChildProcess;
let serviceOrigin: string;
let pages: StaticHost;
let thirdOrigin: StaticHost;

test.beforeAll(async () => {
  // A build of its own (~30 s, far more on a busy machine) and a PGlite directory of its own.
  test.setTimeout(300_000);
  workDir = await mkdtemp(join(tmpdir(), "nothing-deploy-"));
  const servicePort = await freePort();
  serviceOrigin = `http://127.0.0.1:${servicePort}`;
  const site = join(workDir, "site");
  await run("npm", ["run", "build"], {
    env: { ...process.env, ASTRO_OUT_DIR: site, PUBLIC_REALTIME_URL: `ws://127.0.0.1:${servicePort}/realtime` },
    timeout: 280_000,
  });
  pages = await serveStaticHost(site);
  thirdOrigin = await serveStaticHost(site);
  service = spawn(process.execPath, ["realtime/main.ts"], {
    env: {
      ...process.env,
      PORT: String(servicePort),
      HOST: "127.0.0.1",
      STATIC_DIR: "",
      ALLOWED_ORIGINS: pages.origin,
      DATA_DIR: join(workDir, "data"),
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForOk(`${serviceOrigin}/readyz`, service, "the realtime service", 120_000);
});

test.afterAll(async () => {
  if (service) await stopChild(service);
  await pages?.close();
  await thirdOrigin?.close();
  await rm(workDir, { recursive: true, force: true });
});

async function openAuction(page: Page, origin: string) {
  await page.goto(`${origin}/`);
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled();
  return form;
}

test("the static host sends the build's headers: the CSP connects to the pages' origin and exactly the service's socket", async ({
  request,
}) => {
  for (const path of ["/", "/leaderboard/", "/no-such-page"]) {
    const response = await request.get(`${pages.origin}${path}`);
    const policy = response.headers()["content-security-policy"] ?? "";
    const connectSrc = policy.split(";").find((directive) => directive.trim().startsWith("connect-src"));
    expect(connectSrc?.trim(), path).toBe(`connect-src 'self' ws://127.0.0.1:${new URL(serviceOrigin).port}`);
    expect(response.headers()["x-frame-options"], path).toBe("DENY");
  }
  // The service serves no pages in this shape.
  expect((await request.get(`${serviceOrigin}/`)).status()).toBe(404);
});

test("a bid placed on the statically hosted page reaches another visitor live through the service", async ({
  browser,
}) => {
  const [bidderContext, watcherContext] = [await browser.newContext(), await browser.newContext()];
  try {
    const violations: string[] = [];
    const bidderPage = await bidderContext.newPage();
    bidderPage.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    const bidder = await openAuction(bidderPage, pages.origin);
    const watcher = await openAuction(await watcherContext.newPage(), pages.origin);
    await expect(bidder.connection).toHaveAttribute("data-connection", "live");
    await expect(watcher.connection).toHaveAttribute("data-connection", "live");

    await bidder.name.fill("Static Sam");
    await bidder.amount.fill("12.34");
    await bidder.submit.click();
    await expect(bidderPage.getByRole("region", { name: "Notifications" })).toContainText("Bid Placed!");
    await expect(watcher.recent.getByRole("listitem").first()).toContainText("Static Sam");
    await expect(watcher.recent.getByRole("listitem").first()).toContainText("$12.34");
    expect(violations).toEqual([]);
  } finally {
    await Promise.all([bidderContext.close(), watcherContext.close()]);
  }
});

test("a page on a third origin is refused by the service: no socket, and its bid fails", async ({ page }) => {
  const refused = new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(serviceOrigin).port}/realtime`, {
      origin: thirdOrigin.origin,
    });
    socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
    socket.once("open", () => reject(new Error("the service accepted a socket from a third origin")));
    socket.once("error", () => {});
  });
  expect(await refused).toBe(403);

  const form = await openAuction(page, thirdOrigin.origin);
  await expect(form.connection).toHaveAttribute("data-connection", "reconnecting");
  await form.name.fill("Third Party");
  await form.amount.fill("99.99");
  await form.submit.click();
  await expect(page.getByRole("region", { name: "Notifications" })).toContainText("Bid Failed");
});
