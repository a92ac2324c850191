/**
 * A page's console errors through a visit to its bottom: Lighthouse's best practices count any
 * (docs/performance.md), and so does a visitor's devtools. A 404 for a route the page asks is one.
 */
import { expect, type Page } from "@playwright/test";

/** Loads `url`, waits for every Wall of Fame list's answer, goes to the bottom: the errors logged. */
export async function consoleErrorsThroughPage(page: Page, url: string): Promise<string[]> {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url, { waitUntil: "networkidle" });
  // Every list of the Wall of Fame has its answer (or its "off"): nothing is still asked.
  for (const list of await page.locator("service-list").all()) {
    await expect(list).not.toHaveAttribute("data-state", "loading");
  }
  // Through the page, to its bottom: every island hydrated, every lazy section rendered.
  await page.keyboard.press("End");
  await page.waitForLoadState("networkidle");
  return errors;
}
