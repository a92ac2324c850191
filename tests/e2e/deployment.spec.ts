/**
 * The second deployment shape (docs/design.md#6d, docs/deploying.md "Deploying"): the pages built with
 * PUBLIC_REALTIME_URL naming the service's origin and served by `npm run serve:static`'s static host
 * (scripts/staticHost.ts), which applies _headers, and the service on another port with no pages
 * (STATIC_DIR empty) that accepts sockets from the pages' origin only, its auction on a PostgreSQL
 * cluster of its own, as the docs deploy it. Its own build, service and auction: nothing shared with
 * the suite's. Last, the Wall of Fame's "Auction Winners" (docs/design.md#6b) across the two origins,
 * against a service restarted with 1-second rounds, on PGlite: both backends in the split shape.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, expect, type Page, test } from "@playwright/test";
import postgres from "postgres";
import WebSocket from "ws";
import { run, stopChild, waitForOk } from "../../scripts/harness/childProcess.ts";
import { freePort } from "../../scripts/harness/ports.ts";
import { type PostgresCluster, startPostgresCluster } from "../../scripts/harness/postgresCluster.ts";
import { type StaticHost, serveStaticHost } from "../../scripts/staticHost.ts";
import { createLogger } from "../../service/logger.ts";
import { scaled } from "../harness/timeBudgets.ts";
import { auctionForm } from "./fixtures.ts";

// Its tests in order on one worker, sharing what beforeAll starts; a failed test does not skip the
// ones after it (Playwright runs them on a new worker, after beforeAll again).
test.describe.configure({ mode: "default" });

let workDir: string;
let service: ChildProcess;
let serviceOrigin: string;
let pages: StaticHost;
let thirdOrigin: StaticHost;
let cluster: PostgresCluster;

test.beforeAll(async () => {
  // A build of its own (~30 s, far more on a busy machine) and a PostgreSQL cluster of its own.
  test.setTimeout(scaled(300_000));
  workDir = await mkdtemp(join(tmpdir(), "nothing-deploy-"));
  const servicePort = await freePort();
  serviceOrigin = `http://127.0.0.1:${servicePort}`;
  const site = join(workDir, "site");
  [, cluster] = await Promise.all([
    run("npm", ["run", "build"], {
      env: { ...process.env, ASTRO_OUT_DIR: site, PUBLIC_REALTIME_URL: `ws://127.0.0.1:${servicePort}/realtime` },
      timeout: scaled(280_000),
    }),
    startPostgresCluster(),
  ]);
  // The static host operators run (npm run serve:static), quiet but for errors.
  const logger = createLogger("error");
  pages = await serveStaticHost(site, { logger });
  thirdOrigin = await serveStaticHost(site, { logger });
  service = await startService(join(workDir, "data"), { DATABASE_URL: cluster.url });
});

/**
 * The service alone on its port (the one the pages were built with), accepting the pages' origin;
 * on PGlite in `dataDir` unless `env` gives a DATABASE_URL.
 */
async function startService(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["service/main.ts"], {
    env: {
      ...process.env,
      PORT: new URL(serviceOrigin).port,
      HOST: "127.0.0.1",
      // /metrics on a free port of its own: the suite's other services hold theirs.
      METRICS_PORT: "0",
      STATIC_DIR: "",
      ALLOWED_ORIGINS: pages.origin,
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForOk(`${serviceOrigin}/readyz`, child, "the realtime service", 120_000);
  return child;
}

test.afterAll(async () => {
  if (service) await stopChild(service);
  await pages?.close();
  await thirdOrigin?.close();
  await cluster?.destroy();
  await rm(workDir, { recursive: true, force: true });
});

async function openAuction(page: Page, origin: string) {
  await page.goto(`${origin}/`);
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled();
  return form;
}

test("the static host sends the build's headers: the CSP connects to the pages' origin and exactly the service", async ({
  request,
}) => {
  const port = new URL(serviceOrigin).port;
  for (const path of ["/", "/leaderboard/", "/no-such-page"]) {
    const response = await request.get(`${pages.origin}${path}`);
    const policy = response.headers()["content-security-policy"] ?? "";
    const connectSrc = policy.split(";").find((directive) => directive.trim().startsWith("connect-src"));
    // The socket, and the same service over http for the Wall of Fame's winners.
    expect(connectSrc?.trim(), path).toBe(
      `connect-src 'self' ws://localhost:* http://localhost http://127.0.0.1:${port} ws://127.0.0.1:${port}`,
    );
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
    // Kept where the docs' deployment keeps it: in PostgreSQL.
    const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
    try {
      expect([...(await sql`SELECT bidder_name, amount::text AS amount FROM auction_bids`)]).toEqual([
        { bidder_name: "Static Sam", amount: "12.34" },
      ]);
    } finally {
      await sql.end();
    }
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

test.describe("the Wall of Fame's auction winners, fetched from the service on its own origin", () => {
  const WINNER = "<b>Winnie</b> the Bidder";
  const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];

  test.beforeAll(async () => {
    test.setTimeout(scaled(180_000));
    // A fresh auction with 1-second rounds, on PGlite: a round opened by a bid ends within the test.
    await stopChild(service);
    service = await startService(join(workDir, "rounds-data"), {
      AUCTION_ROUND_SECONDS: "1",
      AUCTION_SOFT_CLOSE_SECONDS: "0",
    });
  });

  /**
   * The leaderboard in a context of its own: a fresh HTTP cache (the winners may be cached 5 s), a
   * viewport tall enough to hold the whole page (layout shifts count only in view), and every CSP
   * violation recorded, as a DOM event or on the console.
   */
  async function openLeaderboard(browser: Browser) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 3000 } });
    await context.addInitScript(() => {
      const seen: string[] = [];
      const shifts: number[] = [];
      Object.assign(window, { cspViolations: seen, layoutShifts: shifts });
      document.addEventListener("securitypolicyviolation", (event) => seen.push(event.blockedURI));
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) shifts.push((entry as unknown as { value: number }).value);
      }).observe({ type: "layout-shift", buffered: true });
    });
    const page = await context.newPage();
    const consoleViolations: string[] = [];
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) consoleViolations.push(message.text());
    });
    await page.goto(`${pages.origin}/leaderboard`);
    const winners = page.locator(`service-list[data-kind="winners"]`);
    await expect(winners).not.toHaveAttribute("data-state", "loading");
    const cspViolations = async () => [
      ...consoleViolations,
      ...(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)),
    ];
    const layoutShifts = () => page.evaluate(() => (window as unknown as { layoutShifts: number[] }).layoutShifts);
    return { context, page, winners, cspViolations, layoutShifts };
  }

  async function bidThroughSocket(bidderName: string, amount: number) {
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(serviceOrigin).port}/realtime`, { origin: pages.origin });
    try {
      await once(socket, "open");
      const answer = new Promise<{ type?: string }>((resolve) => {
        socket.on("message", (data) => {
          const message = JSON.parse(String(data));
          if (message.requestId === "r1") resolve(message);
        });
      });
      socket.send(JSON.stringify({ type: "bid", requestId: "r1", bidderName, amount }));
      expect(await answer).toMatchObject({ type: "accepted" });
    } finally {
      socket.close();
    }
  }

  test("none yet, then the round's winner below the static ten: no shift, no axe violation, no CSP violation", async ({
    browser,
  }) => {
    const before = await openLeaderboard(browser);
    try {
      await expect(before.winners.getByText("No auction winners yet. Nothing is still up for grabs.")).toBeVisible();
      expect(await before.cspViolations()).toEqual([]);
    } finally {
      await before.context.close();
    }

    await bidThroughSocket(WINNER, 12.5);
    // The service records the round's end on time, about a second after the bid.
    await expect
      .poll(async () => (await (await fetch(`${serviceOrigin}/auction/winners`)).json()).winners.length)
      .toBe(1);

    const after = await openLeaderboard(browser);
    try {
      const { page, winners } = after;
      await expect(page.getByRole("heading", { level: 2, name: "Auction Winners" })).toBeVisible();
      const rows = winners.getByRole("listitem");
      await expect(rows).toHaveCount(1);
      // The name is text: its markup is shown, never rendered.
      await expect(rows.first()).toContainText(WINNER);
      await expect(rows.first().locator("b")).toHaveCount(0);
      await expect(rows.first()).toContainText("$12.50");
      await expect(rows.first()).toContainText("Round 1");
      // The static ten are untouched.
      await expect(page.locator("[data-fame-podium] > li")).toHaveCount(3);
      await expect(page.locator("[data-fame-list] > li")).toHaveCount(7);

      expect(await after.layoutShifts()).toEqual([]);
      const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
      expect(results.violations.map((violation) => violation.id)).toEqual([]);
      expect(await after.cspViolations()).toEqual([]);
    } finally {
      await after.context.close();
    }
  });

  test("says the winners are unavailable when the service cannot be reached", async ({ browser }) => {
    await stopChild(service);
    const { context, winners, cspViolations } = await openLeaderboard(browser);
    try {
      await expect(winners.getByText("Auction winners are unavailable right now.", { exact: true })).toBeVisible();
      await expect(winners.getByRole("listitem")).toHaveCount(0);
      expect(await cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
