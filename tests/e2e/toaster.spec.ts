import { expect, type Page, test } from "@playwright/test";
import { openWithPausedClock } from "./fixtures.ts";

test("the toaster's live region is in the server-rendered page, before any toast or script", async ({ request }) => {
  const html = await (await request.get("/")).text();
  const region = html.slice(html.indexOf('aria-label="Notifications"'));
  expect(region).toMatch(
    /^[^>]*>\s*<div role="alert" aria-atomic="false"[^>]*><\/div>\s*<div role="status" aria-atomic="false"/,
  );
});

/** The chat panel's chunk fails to load: pressing the launcher raises the error toast "NothingBot didn't load". */
async function failingChatPanel(page: Page) {
  await page.route(/\/_astro\/NothingBot\.[\w-]+\.js$/, (route) => route.abort());
}

async function raiseError(page: Page) {
  await page.getByRole("button", { name: "Open NothingBot" }).click();
  const toast = page.getByRole("alert").locator("[data-toast]").filter({ hasText: "NothingBot didn't load" });
  await expect(toast.last()).toBeVisible();
  return toast;
}

test("a toast never covers the focused element: the stack moves to the other edge", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 740 });
  await failingChatPanel(page);
  await openWithPausedClock(page, "/");
  const region = page.getByRole("region", { name: "Notifications" });
  await expect(region).toHaveAttribute("data-edge", "top");

  // A control just under the sticky header, where the stack of toasts sits by default.
  const focused = page.getByRole("link", { name: "Buy Nothing Now" });
  await focused.evaluate((element) => {
    const top = element.getBoundingClientRect().top + window.scrollY - 90;
    window.scrollTo({ top, behavior: "instant" });
  });
  const toast = await raiseError(page);
  await focused.focus();
  await expect(focused).toBeFocused();
  await expect(region).toHaveAttribute("data-edge", "bottom");
  const [toastBox, focusedBox] = [await toast.boundingBox(), await focused.boundingBox()];
  if (!toastBox || !focusedBox) throw new Error("toast or focused control not laid out");
  const overlaps =
    toastBox.x < focusedBox.x + focusedBox.width &&
    focusedBox.x < toastBox.x + toastBox.width &&
    toastBox.y < focusedBox.y + focusedBox.height &&
    focusedBox.y < toastBox.y + toastBox.height;
  expect(overlaps).toBe(false);
});

test.describe("a toast on screen", () => {
  /** An error toast (5 s on screen), raised 1 s after load. */
  async function errorToast(page: Page) {
    await failingChatPanel(page);
    await openWithPausedClock(page, "/");
    await page.clock.runFor(1_000);
    return raiseError(page);
  }

  test("shows its title and description as separate elements, and its button dismisses it", async ({ page }) => {
    const toast = await errorToast(page);
    await expect(toast.locator("p")).toHaveText(["NothingBot didn't load", "Check your connection and try again."]);
    await expect(toast).not.toHaveAttribute("role");
    await toast.getByRole("button", { name: "Dismiss notification" }).click();
    await expect(toast).toHaveCount(0);
  });

  test("holds while hovered, then finishes its time once the pointer leaves", async ({ page }) => {
    const toast = await errorToast(page);
    await toast.hover();
    await page.clock.runFor(30_000);
    await expect(toast).toBeVisible();
    await page.mouse.move(5, 400);
    await page.clock.runFor(4_000);
    await expect(toast).toBeVisible();
    await page.clock.runFor(1_100);
    await expect(toast).toHaveCount(0);
  });

  test("holds while focus is inside it", async ({ page }) => {
    const toast = await errorToast(page);
    const dismiss = toast.getByRole("button", { name: "Dismiss notification" });
    await dismiss.focus();
    await page.clock.runFor(30_000);
    await expect(dismiss).toBeFocused();
    await dismiss.blur();
    await page.clock.runFor(5_100);
    await expect(toast).toHaveCount(0);
  });
});

test("the newest toast is on top", async ({ page }) => {
  await failingChatPanel(page);
  await openWithPausedClock(page, "/");
  const first = await raiseError(page);
  await page.clock.runFor(1_000);
  await raiseError(page);
  await expect(first).toHaveCount(2);
  const [newest, oldest] = [await first.nth(0).boundingBox(), await first.nth(1).boundingBox()];
  if (!newest || !oldest) throw new Error("toasts not laid out");
  // The newest was prepended: first in the region, and on top.
  expect(newest.y + newest.height).toBeLessThanOrEqual(oldest.y);
});

test("real toasts live in the top layer: a toast raised while a modal dialog is open comes above its backdrop", async ({
  page,
}) => {
  await failingChatPanel(page);
  await openWithPausedClock(page, "/");
  const region = page.getByRole("region", { name: "Notifications" });
  await expect.poll(() => region.evaluate((element) => element.matches(":popover-open"))).toBe(true);
  const toasts = await raiseError(page);
  /** A few pixels of the oldest toast's padding, as the screen shows them. */
  const padding = async () => {
    const box = await toasts.last().boundingBox();
    if (!box) throw new Error("toast not laid out");
    return page.screenshot({ clip: { x: box.x + 4, y: box.y + box.height - 8, width: 4, height: 4 } });
  };
  const clear = await padding();
  // A modal dialog opens over it: its backdrop dims the toast...
  await page.evaluate(() => {
    const style = document.createElement("style");
    style.textContent = "dialog::backdrop { background: rgb(0 0 0 / 0.6) }";
    const dialog = document.createElement("dialog");
    dialog.textContent = "A dialog";
    document.body.append(style, dialog);
    dialog.showModal();
  });
  expect((await padding()).equals(clear)).toBe(false);
  // ...until the next toast raises the stack above the dialog, both toasts undimmed.
  await page.evaluate(() => (document.querySelector("[data-nothingbot-open]") as HTMLButtonElement).click());
  await expect(toasts).toHaveCount(2);
  expect((await padding()).equals(clear)).toBe(true);
});
