import { expect, test } from "@playwright/test";
import { openWithPausedClock } from "./fixtures.ts";

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
  // The toaster hydrates when the page is idle; idle callbacks follow the paused clock.
  await page.clock.runFor(500);
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
