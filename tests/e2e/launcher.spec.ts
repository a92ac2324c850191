import { expect, test } from "@playwright/test";

/**
 * The NothingBot button never covers a control (docs/product.md#2-home, Overlays): at a phone's and a
 * desktop's size, every visible button, link and field of the home page is scrolled into view (as
 * scrollIntoViewIfNeeded does it, then to the view's bottom edge, where the button sits), and the
 * button then either stands clear of its box or has stepped aside (transparent, clicks pass through).
 */
for (const viewport of [
  { width: 390, height: 844 },
  { width: 1280, height: 900 },
]) {
  test(`at ${viewport.width}x${viewport.height} the chat button covers no control, wherever one is scrolled`, async ({
    page,
  }) => {
    test.slow();
    await page.setViewportSize(viewport);
    await page.goto("/");
    const launcher = page.getByRole("button", { name: "Open NothingBot" });
    await expect(launcher).toBeEnabled();
    const { checked, covered } = await page.evaluate(async () => {
      const frames = () =>
        new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 0))));
      const button = document.querySelector("[data-nothingbot-open]") as HTMLElement;
      const own = button.closest("nothing-bot") as HTMLElement;
      const controls = [
        ...document.querySelectorAll<HTMLElement>("a[href], button, input, select, textarea, [tabindex='0']"),
      ].filter((control) => !own.contains(control));
      const overlaps = (a: DOMRect, b: DOMRect) =>
        a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      const inView = (box: DOMRect) =>
        box.bottom > 0 && box.top < innerHeight && box.right > 0 && box.left < innerWidth;
      const covered: string[] = [];
      let checked = 0;
      for (const control of controls) {
        for (const place of ["if-needed", "bottom"] as const) {
          if (place === "if-needed") {
            (control as HTMLElement & { scrollIntoViewIfNeeded(center?: boolean): void }).scrollIntoViewIfNeeded(true);
          } else control.scrollIntoView({ block: "end", behavior: "instant" });
          await frames();
          const box = control.getBoundingClientRect();
          if (
            box.width === 0 ||
            box.height === 0 ||
            !inView(box) ||
            !control.checkVisibility({ visibilityProperty: true })
          )
            continue;
          checked++;
          const stepsAside = button.hasAttribute("data-aside") && getComputedStyle(button).pointerEvents === "none";
          if (!stepsAside && overlaps(box, button.getBoundingClientRect())) {
            covered.push(
              `${control.tagName} "${(control.getAttribute("aria-label") ?? control.textContent ?? "").trim().slice(0, 40)}" (${place})`,
            );
          }
        }
      }
      return { checked, covered };
    });
    expect(covered).toEqual([]);
    // The walk saw the page's controls, from the hero's to the footer's.
    expect(checked).toBeGreaterThan(60);
  });
}

test("the chat button comes back once the control under it has scrolled on, and when focused", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  const launcher = page.getByRole("button", { name: "Open NothingBot" });
  await expect(launcher).toBeEnabled();
  // The first control below the first screen that reaches the button's column, scrolled to the bottom.
  await page.evaluate(() => {
    const button = (document.querySelector("[data-nothingbot-open]") as HTMLElement).getBoundingClientRect();
    const wide = [...document.querySelectorAll<HTMLElement>("main button, main a[href]")].find((control) => {
      const box = control.getBoundingClientRect();
      return box.top > innerHeight && box.height > 0 && box.right > button.left + 10 && box.left < button.left;
    });
    wide?.scrollIntoView({ block: "end", behavior: "instant" });
    if (!wide) throw new Error("no control reaches the button's column");
  });
  await expect(launcher).toHaveAttribute("data-aside", "");
  await launcher.focus();
  await expect(launcher).not.toHaveAttribute("data-aside");
  await launcher.blur();
  await expect(launcher).toHaveAttribute("data-aside", "");
  await page.evaluate(() => window.scrollTo({ top: 0, behavior: "instant" }));
  await expect(launcher).not.toHaveAttribute("data-aside");
});
