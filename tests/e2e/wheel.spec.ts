import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { openPage, openWithPausedClock, stubRandom } from "./fixtures.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
/** Draw points on the 155 weights (stubRandom): 0 is Basic Nothing (common), 0.9 is Epic Emptiness. */
const COMMON_DRAW = 0;
const EPIC_DRAW = 0.9;

function wheel(page: Page) {
  const section = page.locator("#lottery");
  return {
    section,
    island: section.locator('astro-island[component-url*="LotteryWheel"]'),
    counter: section.locator("[data-spin-counter]"),
    result: section.locator("[data-wheel-result]"),
    stats: section.locator("[data-wheel-stats]"),
    status: section.locator("[data-wheel-card]").getByRole("status"),
    spinButton: section.locator("[data-wheel-card]").getByRole("button"),
    confetti: page.locator("[data-confetti]"),
  };
}

/** Scrolls the wheel into view, which hydrates it (client:visible), and waits until it is live. */
async function showWheel(page: Page) {
  const parts = wheel(page);
  await parts.counter.scrollIntoViewIfNeeded();
  await expect(parts.island).not.toHaveAttribute("ssr");
  await expect(parts.spinButton).not.toHaveAttribute("disabled");
  return parts;
}

test.describe("Nothing Lottery", () => {
  test("shows the section: video, counter, wheel, six prizes, statistics and the win rate", async ({ page }) => {
    const { assertNoErrors } = await openPage(page, "/");
    const { section, counter, stats, spinButton } = await showWheel(page);
    await expect(section.getByRole("heading", { level: 2 })).toHaveText("The Nothing Lottery");
    await expect(section.getByRole("button", { name: /^Play video:/ })).toBeVisible();
    await expect(counter).toHaveText("1 Spin Remaining");
    await expect(spinButton).toHaveText("Spin for Nothing!");

    const prizes = section.getByRole("list", { name: "Prizes you could win" }).getByRole("listitem");
    await expect(prizes).toHaveCount(6);
    await expect(prizes.getByRole("heading")).toHaveText([
      "Basic Nothing",
      "Shiny Nothing",
      "Rare Void",
      "Epic Emptiness",
      "Mythical Nothing",
      "Quantum Void",
    ]);
    await expect(prizes).toContainText(["common", "common", "rare", "epic", "legendary", "legendary"]);
    for (const prize of await prizes.all()) await expect(prize).toContainText("$0");

    for (const [label, value] of [
      ["Spins Left", "1"],
      ["Total Wins", "0"],
      ["Total Value", "∞"],
      ["Items Shipped", "0"],
    ] as const) {
      await expect(stats.locator("div", { has: page.getByText(label, { exact: true }) }).locator("dd")).toHaveText(
        value,
      );
    }
    await expect(section.getByText("100% Win Rate")).toBeVisible();
    assertNoErrors();
  });

  test("a free spin arrives 60 s after the page loads", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const { counter } = await showWheel(page);
    await expect(counter).toHaveText("1 Spin Remaining");
    await page.clock.runFor(59_000);
    await expect(counter).toHaveText("1 Spin Remaining");
    await page.clock.runFor(1_000);
    await expect(counter).toHaveText("2 Spins Remaining");
    await page.clock.runFor(60_000);
    await expect(counter).toHaveText("3 Spins Remaining");
  });

  test("the free-spin timer runs from page load, before the wheel is hydrated", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const { island } = wheel(page);
    await expect(island).toHaveAttribute("ssr");
    await page.clock.runFor(120_000);
    const { counter } = await showWheel(page);
    await expect(counter).toHaveText("3 Spins Remaining");
  });

  test("a spin spends one at once and shows its prize after 2 s; the labels follow", async ({ page }) => {
    await stubRandom(page, EPIC_DRAW);
    await openWithPausedClock(page, "/");
    const { counter, spinButton, result, stats, section, confetti } = await showWheel(page);

    await spinButton.click();
    await expect(spinButton).toHaveText("Spinning...");
    await expect(spinButton).toBeDisabled();
    await expect(counter).toHaveText("0 Spins Remaining");
    await page.clock.runFor(1_999);
    await expect(result).not.toContainText("Epic Emptiness");
    await page.clock.runFor(1);

    await expect(result).toContainText("You won");
    await expect(result).toContainText("Epic Emptiness");
    await expect(result).toContainText("epic");
    await expect(stats.locator("div", { hasText: "Total Wins" }).locator("dd")).toHaveText("1");
    await expect(spinButton).toHaveText("No Spins Left");
    await expect(spinButton).toHaveClass(/btn-outline/);
    await expect(spinButton).toBeDisabled();
    await expect(section.getByRole("link", { name: "Purchase a Nothing plan below" })).toHaveAttribute(
      "href",
      "#products",
    );

    // A non-common prize: 50 dots of confetti for 3 s.
    await expect(confetti).toBeVisible();
    await expect(confetti.locator(".confetti-dot")).toHaveCount(50);
    await page.clock.runFor(2_999);
    await expect(confetti).toBeVisible();
    await page.clock.runFor(1);
    await expect(confetti).toBeHidden();

    // Blocked with no spins left: pressing changes nothing.
    await spinButton.click({ force: true });
    await expect(counter).toHaveText("0 Spins Remaining");
    await expect(spinButton).toHaveText("No Spins Left");
  });

  test("works from the keyboard, and focus stays on the Spin button while it is blocked", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const { spinButton, counter } = await showWheel(page);
    await spinButton.focus();
    await page.keyboard.press("Enter");
    await expect(spinButton).toHaveText("Spinning...");
    await expect(spinButton).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(counter).toHaveText("0 Spins Remaining");
    await page.clock.runFor(2_000);
    await expect(spinButton).toHaveText("No Spins Left");
    await expect(spinButton).toBeFocused();
  });

  test("a common prize brings no confetti", async ({ page }) => {
    await stubRandom(page, COMMON_DRAW);
    await openWithPausedClock(page, "/");
    const { spinButton, result, confetti } = await showWheel(page);
    await spinButton.click();
    await page.clock.runFor(2_000);
    await expect(result).toContainText("Basic Nothing");
    await expect(confetti).toBeHidden();
  });

  test("the spin count survives a reload", async ({ page }) => {
    await openWithPausedClock(page, "/");
    let parts = await showWheel(page);
    await parts.spinButton.click();
    await expect(parts.counter).toHaveText("0 Spins Remaining");
    expect(await page.evaluate(() => localStorage.getItem("nothingStoreSpins"))).toBe("0");

    await page.reload();
    parts = await showWheel(page);
    await expect(parts.counter).toHaveText("0 Spins Remaining");
    await expect(parts.spinButton).toHaveText("No Spins Left");

    await page.evaluate(() => localStorage.setItem("nothingStoreSpins", "12"));
    await page.reload();
    parts = await showWheel(page);
    await expect(parts.counter).toHaveText("12 Spins Remaining");
  });

  test("an unreadable stored count starts at 1 and is rewritten", async ({ page }) => {
    await page.addInitScript(() => {
      if (!sessionStorage.getItem("seeded")) {
        localStorage.setItem("nothingStoreSpins", "lots");
        sessionStorage.setItem("seeded", "1");
      }
    });
    await page.goto("/");
    const { counter } = await showWheel(page);
    await expect(counter).toHaveText("1 Spin Remaining");
    expect(await page.evaluate(() => localStorage.getItem("nothingStoreSpins"))).toBe("1");
  });

  test("a purchase before the wheel hydrates still reaches it: one store for the page", async ({ page }) => {
    const alerts: string[] = [];
    page.on("dialog", (dialog) => {
      alerts.push(dialog.message());
      void dialog.accept();
    });
    const { assertNoErrors } = await openPage(page, "/");
    const { island } = wheel(page);
    await page.locator("#products article").nth(1).getByRole("button", { name: "Buy Nothing" }).click();
    await expect.poll(() => alerts.length).toBe(1);
    await expect(island).toHaveAttribute("ssr");

    const { counter } = await showWheel(page);
    await expect(counter).toHaveText("8 Spins Remaining");
    assertNoErrors();
  });

  test("under reduced motion nothing moves, yet every change happens and is announced", async ({ page }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await stubRandom(page, EPIC_DRAW);
    await openWithPausedClock(page, "/");
    const { spinButton, status, result, counter, confetti, section } = await showWheel(page);
    const wheelDisc = section.locator("[data-wheel]");

    await spinButton.click();
    await expect(spinButton).toHaveText("Spinning...");
    await expect(status).toHaveText("Spinning the wheel...");
    await expect(wheelDisc).toHaveClass(/wheel-spinning/);
    expect(await wheelDisc.evaluate((node) => getComputedStyle(node).animationName)).toBe("none");

    await page.clock.runFor(2_000);
    await expect(result).toContainText("Epic Emptiness");
    await expect(status).toHaveText("You won Epic Emptiness (epic)! Worth an epic $0. Total wins: 1.");
    await expect(confetti).toBeVisible();
    const dot = confetti.locator(".confetti-dot").first();
    expect(await dot.evaluate((node) => getComputedStyle(node).animationName)).toBe("none");

    await page.clock.runFor(60_000);
    await expect(counter).toHaveText("1 Spin Remaining");
    await expect(status).toHaveText("Free spin! 1 spin remaining.");
  });

  test("with motion allowed the wheel turns while spinning", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const { spinButton, section } = await showWheel(page);
    await spinButton.click();
    const wheelDisc = section.locator("[data-wheel]");
    await expect(wheelDisc).toHaveClass(/wheel-spinning/);
    expect(await wheelDisc.evaluate((node) => getComputedStyle(node).animationName)).toBe("wheel-spin");
  });

  test("axe finds no WCAG 2.2 AA violation in the wheel section, with a prize shown and no spins left", async ({
    page,
  }) => {
    await stubRandom(page, EPIC_DRAW);
    await page.goto("/");
    const { spinButton, result } = await showWheel(page);
    await spinButton.click();
    await expect(result).toContainText("Epic Emptiness");
    await expect(spinButton).toHaveText("No Spins Left");
    const results = await new AxeBuilder({ page }).include("#lottery").withTags(TAGS).analyze();
    expect(
      results.violations.map((violation) => ({
        id: violation.id,
        targets: violation.nodes.map((node) => node.target),
      })),
    ).toEqual([]);
  });
});
