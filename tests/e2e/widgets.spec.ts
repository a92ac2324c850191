import { expect, test } from "@playwright/test";
import { openWithPausedClock, stubRandom } from "./fixtures.ts";

test.describe("Live Nothing Activity", () => {
  test("counts up to 7,850 in 2 s, then a 10 s tick with a winning draw adds one", async ({ page }) => {
    await stubRandom(page, 0.1);
    await openWithPausedClock(page, "/");
    const block = page.locator("activity-counter");
    const purchases = block.locator('[data-activity="purchases"]');
    const dollars = block.locator('[data-activity="dollarsSpent"]');
    const owners = block.locator('[data-activity="premiumOwners"]');

    await expect(purchases).toHaveText("0");
    await block.scrollIntoViewIfNeeded();
    await expect(block).toHaveAttribute("data-state", "counting");
    await page.clock.runFor(1000);
    await expect(purchases).not.toHaveText("0");
    await expect(purchases).not.toHaveText("7,850");
    await page.clock.runFor(1000);
    await expect(purchases).toHaveText("7,850");
    await expect(block).toHaveAttribute("data-state", "ticking");
    await expect(dollars).toHaveText("$371,305");
    await expect(owners).toHaveText("2,121");

    await page.clock.runFor(10_000);
    await expect(purchases).toHaveText("7,851");
    await expect(dollars).toHaveText("$371,352");
    await expect(owners).toHaveText("2,121");
  });

  test("a tick with a losing draw (30% or more) changes nothing", async ({ page }) => {
    await stubRandom(page, 0.3);
    await openWithPausedClock(page, "/");
    const block = page.locator("activity-counter");
    await block.scrollIntoViewIfNeeded();
    await expect(block).toHaveAttribute("data-state", "counting");
    await page.clock.runFor(2000 + 30_000);
    await expect(block.locator('[data-activity="purchases"]')).toHaveText("7,850");
  });

  test("under reduced motion the figures appear at once and still tick", async ({ page }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await stubRandom(page, 0);
    await openWithPausedClock(page, "/");
    const purchases = page.locator('activity-counter [data-activity="purchases"]');
    await expect(purchases).toHaveText("7,850");
    await page.clock.runFor(10_000);
    await expect(purchases).toHaveText("7,851");
  });
});

test.describe("copy buttons", () => {
  test.use({ permissions: ["clipboard-read", "clipboard-write"] });

  for (const [what, scope] of [
    ["contract address", "main"],
    ["donation address", "footer"],
  ] as const) {
    test(`copies the ${what} and says so`, async ({ page }) => {
      await page.goto("/");
      const container = page.locator(scope).first();
      const button = container.getByRole("button", { name: `Copy ${what}` }).first();
      const address = (await button.locator("xpath=ancestor::div[1]").locator("[data-address]").textContent())?.trim();
      expect(address).toMatch(/^[A-Za-z0-9]{20,}$/);

      await button.click();
      await expect(button).toContainText("Copied!");
      await expect(page.getByRole("status").filter({ hasText: "Copied!" })).toHaveCount(1);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address);
    });
  }

  test("the label returns to Copy after 2 s", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const button = page.getByRole("button", { name: "Copy contract address" });
    await button.click();
    await expect(button).toContainText("Copied!");
    await page.clock.runFor(2000);
    await expect(button).toContainText("Copy");
    await expect(button).not.toContainText("Copied!");
  });
});
