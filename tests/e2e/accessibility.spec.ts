import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { openWithPausedClock } from "./fixtures.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const VIEWPORTS = [
  { name: "phone", width: 360, height: 780 },
  { name: "desktop", width: 1280, height: 800 },
];

for (const path of ["/", "/leaderboard", "/no-such-page"]) {
  for (const viewport of VIEWPORTS) {
    test(`axe finds no WCAG 2.2 AA violation on ${path} (${viewport.name})`, async ({ page }) => {
      await page.setViewportSize(viewport);
      await page.goto(path);
      const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
      const summary = results.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        targets: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5),
      }));
      expect(summary).toEqual([]);
    });
  }
}

test("the tooltips and the copy status are in the accessibility tree when shown", async ({ page }) => {
  await openWithPausedClock(page, "/");
  await page.getByRole("button", { name: "Copy contract address" }).hover();
  await page.clock.runFor(700);
  await expect(page.getByRole("tooltip", { name: "Copy contract address" })).toBeVisible();
  // axe schedules its own timers: let time flow again (the tooltip stays open while hovered).
  await page.clock.resume();
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  expect(results.violations.map((violation) => violation.id)).toEqual([]);
});
