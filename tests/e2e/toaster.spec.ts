import { expect, type Page, test } from "@playwright/test";
import { NEWS_JOKES } from "../../src/data/newsJokes.ts";
import { openWithPausedClock, stubRandom } from "./fixtures.ts";

test("the toaster's live region is in the server-rendered page, before any toast or script", async ({ request }) => {
  const html = await (await request.get("/")).text();
  const region = html.slice(html.indexOf('aria-label="Notifications"'));
  expect(region).toMatch(
    /^[^>]*>\s*<div role="alert" aria-atomic="false"[^>]*><\/div>\s*<div role="status" aria-atomic="false"/,
  );
});

test("a toast never covers the focused element: the stack moves to the other edge", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 740 });
  await openWithPausedClock(page, "/");
  const region = page.getByRole("region", { name: "Notifications" });
  await expect(region).toHaveAttribute("data-edge", "top");

  // Focus a control just under the sticky header, where the stack of toasts sits by default.
  const focused = page.getByRole("button", { name: "Copy contract address" });
  await focused.evaluate((element) => {
    const top = element.getBoundingClientRect().top + window.scrollY - 90;
    window.scrollTo({ top, behavior: "instant" });
    (element as HTMLElement).focus();
  });
  await expect(focused).toBeFocused();

  // The first news pop-up arrives at 10 s.
  await page.clock.runFor(10_000);
  const newsToast = region.locator("[data-toast]");
  await expect(newsToast).toHaveCount(1);
  await expect(region).toHaveAttribute("data-edge", "bottom");
  const [toastBox, focusedBox] = [await newsToast.boundingBox(), await focused.boundingBox()];
  if (!toastBox || !focusedBox) throw new Error("toast or focused control not laid out");
  const overlaps =
    toastBox.x < focusedBox.x + focusedBox.width &&
    focusedBox.x < toastBox.x + toastBox.width &&
    toastBox.y < focusedBox.y + focusedBox.height &&
    focusedBox.y < toastBox.y + toastBox.height;
  expect(overlaps).toBe(false);
});

test.describe("a toast on screen", () => {
  /** The first news pop-up (4 s on screen) arrives 10 s after load. */
  async function firstPopup(page: Page) {
    await stubRandom(page, 0);
    await openWithPausedClock(page, "/");
    await page.clock.runFor(10_000);
    const toast = page.getByRole("status").locator("[data-toast]");
    await expect(toast).toHaveCount(1);
    return toast;
  }

  test("shows its title and description as separate elements, and its button dismisses it", async ({ page }) => {
    const toast = await firstPopup(page);
    const joke = NEWS_JOKES[0];
    if (!joke) throw new Error("no jokes");
    await expect(toast.locator("p")).toHaveText([joke.title, joke.description]);
    await expect(toast).not.toHaveAttribute("role");
    await toast.getByRole("button", { name: "Dismiss notification" }).click();
    await expect(toast).toHaveCount(0);
  });

  test("holds while hovered, then finishes its time once the pointer leaves", async ({ page }) => {
    const toast = await firstPopup(page);
    await page.clock.runFor(1_000);
    await toast.hover();
    await page.clock.runFor(30_000);
    await expect(toast).toBeVisible();
    await page.mouse.move(5, 400);
    await page.clock.runFor(2_999);
    await expect(toast).toBeVisible();
    await page.clock.runFor(1);
    await expect(toast).toHaveCount(0);
  });

  test("holds while focus is inside it", async ({ page }) => {
    const toast = await firstPopup(page);
    const dismiss = toast.getByRole("button", { name: "Dismiss notification" });
    await dismiss.focus();
    await page.clock.runFor(30_000);
    await expect(dismiss).toBeFocused();
    await dismiss.blur();
    await page.clock.runFor(4_000);
    await expect(toast).toHaveCount(0);
  });
});

test("the newest toast is on top, whether it is an error or not", async ({ page }) => {
  await stubRandom(page, 0);
  await page.route(/\/_astro\/NothingBot\.[\w-]+\.js$/, (route) => route.abort());
  await openWithPausedClock(page, "/");
  // An error 9 s after load (on screen for 5 s), then the first news pop-up at 10 s.
  await page.clock.runFor(9_000);
  await page.getByRole("button", { name: "Open NothingBot" }).click();
  const error = page.getByRole("alert").locator("[data-toast]");
  await expect(error).toContainText("NothingBot didn't load");
  await page.clock.runFor(1_000);
  const news = page.getByRole("status").locator("[data-toast]");
  await expect(news).toHaveCount(1);
  const [newsBox, errorBox] = [await news.boundingBox(), await error.boundingBox()];
  if (!newsBox || !errorBox) throw new Error("toasts not laid out");
  expect(newsBox.y + newsBox.height).toBeLessThanOrEqual(errorBox.y);
});
