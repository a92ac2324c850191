import { expect, type Page, test } from "@playwright/test";
import { openWithPausedClock } from "./fixtures.ts";

const VIDEO_HOST = "https://www.youtube-nocookie.com";
const CHART_HOST = "https://dexscreener.com";

const promoSection = (page: Page) => page.getByRole("region", { name: "Experience the Nothing Revolution" });

test.describe("third-party embeds", () => {
  test("loading and scrolling through every page requests nothing from another host", async ({ page, baseURL }) => {
    const own = new URL(baseURL ?? "").host;
    const foreign: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.protocol !== "data:" && url.host !== own) foreign.push(request.url());
    });
    // Anything that does leave is stopped here, so a regression cannot reach the network either.
    await page.route(
      (url) => url.host !== own,
      (route) => route.abort(),
    );

    for (const path of ["/", "/leaderboard", "/missing-page"]) {
      await page.goto(path);
      await page.waitForLoadState("networkidle");
      const height = await page.evaluate(() => document.body.scrollHeight);
      for (let y = 0; y < height && y < 50_000; y += 600) {
        await page.mouse.wheel(0, 600);
      }
      await page.waitForLoadState("networkidle");
    }
    expect(foreign).toEqual([]);
  });

  test("a video loads from the video service only when asked, with its title", async ({ page }) => {
    const requested: string[] = [];
    await page.route(`${VIDEO_HOST}/**`, (route) => {
      requested.push(route.request().url());
      return route.fulfill({
        contentType: "text/html",
        body: "<!doctype html><title>stub video</title><p>a video of nothing</p>",
      });
    });
    await page.goto("/");
    expect(requested).toEqual([]);

    await page.getByRole("button", { name: "Play video: Experience the Nothing Revolution" }).click();
    const frame = page.locator('iframe[title="Experience the Nothing Revolution"]');
    await expect(frame).toBeVisible();
    await expect(frame).toHaveAttribute(
      "src",
      /^https:\/\/www\.youtube-nocookie\.com\/embed\/[A-Za-z0-9_-]{11}\?autoplay=1/,
    );
    await expect(
      page.frameLocator('iframe[title="Experience the Nothing Revolution"]').getByText("a video of nothing"),
    ).toBeVisible();
    expect(requested).toHaveLength(1);
  });

  test("the price chart loads from the chart service only when asked", async ({ page }) => {
    const requested: string[] = [];
    await page.route(`${CHART_HOST}/**`, (route) => {
      requested.push(route.request().url());
      return route.fulfill({ contentType: "text/html", body: "<!doctype html><title>chart</title><p>flat line</p>" });
    });
    await page.goto("/");
    expect(requested).toEqual([]);
    await page.getByRole("button", { name: "Load $ZN live price chart" }).click();
    await expect(page.frameLocator('iframe[title="$ZN live price chart"]').getByText("flat line")).toBeVisible();
    expect(requested).toHaveLength(1);
  });

  test("an embed that never loads leaves a tidy note and a retry", async ({ page }) => {
    // The video service never answers.
    await page.route(`${VIDEO_HOST}/**`, () => undefined);
    await openWithPausedClock(page, "/");
    await page.getByRole("button", { name: "Play video: Experience the Nothing Revolution" }).click();
    await expect(page.locator('iframe[title="Experience the Nothing Revolution"]')).toHaveCount(1);
    await page.clock.runFor(15_000);
    const note = promoSection(page).getByText("This embed couldn't load. Nothing to see here, even more than usual.");
    await expect(note).toBeVisible();
    await expect(page.locator('iframe[title="Experience the Nothing Revolution"]')).toHaveCount(0);
    await expect(promoSection(page).getByRole("button", { name: "Try again" })).toBeFocused();

    await page.unroute(`${VIDEO_HOST}/**`);
    await page.route(`${VIDEO_HOST}/**`, (route) => route.fulfill({ contentType: "text/html", body: "<p>back</p>" }));
    await promoSection(page).getByRole("button", { name: "Try again" }).click();
    await expect(note).toBeHidden();
    await expect(
      page.frameLocator('iframe[title="Experience the Nothing Revolution"]').getByText("back"),
    ).toBeVisible();
  });

  test("offline, the embed shows the note instead of a broken frame", async ({ page, context }) => {
    await page.goto("/");
    await context.setOffline(true);
    await page.getByRole("button", { name: "Play video: Experience the Nothing Revolution" }).click();
    await expect(
      promoSection(page).getByText("This embed couldn't load. Nothing to see here, even more than usual."),
    ).toBeVisible();
    await expect(page.locator("iframe")).toHaveCount(0);
    await expect(promoSection(page).getByRole("button", { name: "Try again" })).toBeFocused();
  });
});
