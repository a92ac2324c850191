import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { CALCULATOR_MESSAGES } from "../../src/data/calculator.ts";
import { openPage, openWithPausedClock, stubRandom } from "./fixtures.ts";

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const FORTUNE = "The future holds… nothing.";

/**
 * Scrolls a section into view and waits for its island: it hydrates when visible and keeps its
 * controls disabled until then (Playwright scrolls to an element only once it is enabled).
 */
async function showSection(page: Page, id: "fortune" | "calculator" | "captcha") {
  const section = page.locator(`#${id}`);
  const island = section.locator("astro-island");
  await island.scrollIntoViewIfNeeded();
  await expect(island).not.toHaveAttribute("ssr", "");
  return section;
}

async function axeViolations(page: Page, selector: string) {
  const results = await new AxeBuilder({ page }).include(selector).withTags(AXE_TAGS).analyze();
  return results.violations.map((violation) => ({
    id: violation.id,
    targets: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5),
  }));
}

/** CSS animations running anywhere inside the element. */
const runningAnimations = (page: Page, selector: string) =>
  page.locator(selector).evaluate((element) => element.getAnimations({ subtree: true }).length);

const square = (page: Page, number: number) =>
  page.locator("#captcha").getByRole("button", { name: `Square ${number}`, exact: true });

/** Presses calculator keys by their accessible names, which are the symbols they show. */
async function press(page: Page, keys: string[]) {
  const calculator = page.locator("#calculator");
  for (const key of keys) await calculator.getByRole("button", { name: key, exact: true }).click();
}

test.describe("fortune", () => {
  test("consults for 2 s, reveals nothing, counts each click and offers to consult again", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const fortune = await showSection(page, "fortune");
    const result = fortune.getByRole("status");

    await fortune.getByRole("button", { name: "Consult the Crystal Ball" }).click();
    await expect(fortune.getByRole("button", { name: "Consulting..." })).toBeDisabled();
    await expect(fortune.getByText("Fortunes told: 1")).toBeVisible();
    expect(await runningAnimations(page, "#fortune [data-crystal-ball]")).toBeGreaterThan(0);
    await page.clock.runFor(1999);
    await expect(result).not.toHaveText(FORTUNE);

    await page.clock.runFor(1);
    await expect(result).toHaveText(FORTUNE);
    const again = fortune.getByRole("button", { name: "Consult Again" });
    await expect(again).toBeEnabled();

    await again.click();
    await expect(fortune.getByText("Fortunes told: 2")).toBeVisible();
    await expect(result).not.toHaveText(FORTUNE);
    await page.clock.runFor(2000);
    await expect(result).toHaveText(FORTUNE);
    await expect(fortune.getByRole("button", { name: "Consult Again" })).toBeEnabled();
  });

  test("works from the keyboard", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const fortune = await showSection(page, "fortune");
    const button = fortune.getByRole("button", { name: "Consult the Crystal Ball" });
    await expect(button).toBeEnabled();
    await button.focus();
    await page.keyboard.press("Enter");
    await page.clock.runFor(2000);
    await expect(fortune.getByRole("status")).toHaveText(FORTUNE);
    await expect(fortune.getByRole("button", { name: "Consult Again" })).toBeFocused();
  });
});

test.describe("NothingCalc Pro", () => {
  test("an operation stores the display and resets it; = resets, clears and shows the next message", async ({
    page,
  }) => {
    const { assertNoErrors } = await openPage(page, "/");
    const calculator = await showSection(page, "calculator");
    const display = calculator.locator("[data-calc-display]");
    const pending = calculator.locator("[data-calc-pending]");
    const message = calculator.getByRole("status");

    await expect(display).toHaveText("0");
    await press(page, ["1", "2"]);
    await expect(display).toHaveText("12");
    await press(page, ["+"]);
    await expect(display).toHaveText("0");
    await expect(pending).toHaveText("12 +");
    await press(page, ["3", "4", "="]);
    await expect(display).toHaveText("0");
    await expect(pending).toHaveText("");
    await expect(message).toHaveText(CALCULATOR_MESSAGES[0]);

    await press(page, ["9", "×", "9", "="]);
    await expect(message).toHaveText(CALCULATOR_MESSAGES[1]);
    assertNoErrors();
  });

  test("rotates through six messages", async ({ page }) => {
    await openPage(page, "/");
    const message = (await showSection(page, "calculator")).getByRole("status");
    for (const expected of [...CALCULATOR_MESSAGES, CALCULATOR_MESSAGES[0]]) {
      await press(page, ["="]);
      await expect(message).toHaveText(expected);
    }
  });

  test("± % − ÷ × act as operations", async ({ page }) => {
    await openPage(page, "/");
    const calculator = await showSection(page, "calculator");
    for (const operation of ["±", "%", "−", "÷", "×"]) {
      await press(page, ["5", operation]);
      await expect(calculator.locator("[data-calc-display]")).toHaveText("0");
      await expect(calculator.locator("[data-calc-pending]")).toHaveText(`5 ${operation}`);
      await press(page, ["C"]);
    }
  });

  test("one decimal point at most; C and Reset return to 0", async ({ page }) => {
    await openPage(page, "/");
    const calculator = await showSection(page, "calculator");
    const display = calculator.locator("[data-calc-display]");
    await press(page, [".", "5", ".", "2"]);
    await expect(display).toHaveText("0.52");
    await press(page, ["C"]);
    await expect(display).toHaveText("0");

    await press(page, ["7", "÷", "3", "=", "4"]);
    await expect(calculator.getByRole("status")).toHaveText(CALCULATOR_MESSAGES[0]);
    await calculator.getByRole("button", { name: "Reset" }).click();
    await expect(display).toHaveText("0");
    await expect(calculator.getByRole("status")).toHaveText("");
    await press(page, ["="]);
    await expect(calculator.getByRole("status")).toHaveText(CALCULATOR_MESSAGES[0]);
  });

  test("works from the keyboard", async ({ page }) => {
    await openPage(page, "/");
    const calculator = await showSection(page, "calculator");
    const seven = calculator.getByRole("button", { name: "7", exact: true });
    await expect(seven).toBeEnabled();
    await seven.focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    await expect(calculator.locator("[data-calc-display]")).toHaveText("78");
  });
});

test.describe("CAPTCHA", () => {
  test("squares toggle, Refresh clears them, Verify needs a selection", async ({ page }) => {
    await openPage(page, "/");
    const captcha = await showSection(page, "captcha");
    await expect(captcha.getByRole("heading", { name: "Security Check" })).toBeVisible();
    for (let number = 1; number <= 9; number += 1) {
      await expect(square(page, number)).toHaveAttribute("aria-pressed", "false");
    }
    const verify = captcha.getByRole("button", { name: "Verify" });
    await expect(verify).toBeDisabled();

    await square(page, 1).click();
    await square(page, 5).click();
    await expect(square(page, 1)).toHaveAttribute("aria-pressed", "true");
    await expect(verify).toBeEnabled();
    await square(page, 1).click();
    await expect(square(page, 1)).toHaveAttribute("aria-pressed", "false");
    await expect(verify).toBeEnabled();

    await captcha.getByRole("button", { name: "Refresh" }).click();
    await expect(square(page, 5)).toHaveAttribute("aria-pressed", "false");
    await expect(verify).toBeDisabled();
  });

  test("passes after 2 s with a draw under 0.7", async ({ page }) => {
    await stubRandom(page, 0.5);
    await openWithPausedClock(page, "/");
    const captcha = await showSection(page, "captcha");
    await square(page, 3).click();
    await captcha.getByRole("button", { name: "Verify" }).click();
    await expect(captcha.getByRole("button", { name: "Verifying..." })).toBeDisabled();
    await expect(square(page, 3)).toBeDisabled();
    await page.clock.runFor(1999);
    await expect(captcha.getByText("CAPTCHA Solved!")).toHaveCount(0);
    await page.clock.runFor(1);
    await expect(captcha.getByRole("status")).toContainText("CAPTCHA Solved!");
    await expect(captcha.getByRole("button", { name: "Try Again" })).toBeFocused();
  });

  test("fails with a hint for 3 s, rotates the hints, and passes on the third attempt", async ({ page }) => {
    await stubRandom(page, 0.9);
    await openWithPausedClock(page, "/");
    const captcha = await showSection(page, "captcha");
    const status = captcha.getByRole("status");
    const verify = captcha.getByRole("button", { name: "Verify" });

    await square(page, 9).click();
    await verify.click();
    await page.clock.runFor(2000);
    await expect(status).toHaveText("Hint: Look more carefully at the empty spaces!");
    await expect(captcha.getByRole("button", { name: "Try Again" })).toBeVisible();
    await page.clock.runFor(2999);
    await expect(status).toHaveText("Hint: Look more carefully at the empty spaces!");
    await page.clock.runFor(1);
    await expect(status).toHaveText("");

    await verify.click();
    await page.clock.runFor(2000);
    await expect(status).toHaveText("Tip: Nothing is hiding in plain sight.");

    // Third attempt: two came before, so it passes whatever the draw.
    await verify.click();
    await page.clock.runFor(2000);
    await expect(status).toContainText("CAPTCHA Solved!");

    // Try Again resets the grid and the attempt counter: the next attempt can fail again.
    await captcha.getByRole("button", { name: "Try Again" }).click();
    await expect(square(page, 1)).toBeFocused();
    await expect(square(page, 9)).toHaveAttribute("aria-pressed", "false");
    await expect(verify).toBeDisabled();
    await expect(captcha.getByRole("button", { name: "Try Again" })).toHaveCount(0);
    await square(page, 2).click();
    await verify.click();
    await page.clock.runFor(2000);
    await expect(status).toHaveText("Remember: Absence is presence in the void!");
  });
});

test.describe("reduced motion", () => {
  test.beforeEach(({ page }) => page.emulateMedia({ reducedMotion: "reduce" }));

  test("the crystal ball does not swirl, yet the fortune still comes and is announced", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const fortune = await showSection(page, "fortune");
    await fortune.getByRole("button", { name: "Consult the Crystal Ball" }).click();
    await expect(fortune.getByRole("button", { name: "Consulting..." })).toBeDisabled();
    expect(await runningAnimations(page, "#fortune [data-crystal-ball]")).toBe(0);
    await page.clock.runFor(2000);
    await expect(fortune.getByRole("status")).toHaveText(FORTUNE);
  });

  test("the CAPTCHA and the calculator still change state and say so", async ({ page }) => {
    await stubRandom(page, 0.9);
    await openWithPausedClock(page, "/");
    const captcha = await showSection(page, "captcha");
    await square(page, 1).click();
    await captcha.getByRole("button", { name: "Verify" }).click();
    await page.clock.runFor(2000);
    await expect(captcha.getByRole("status")).toHaveText("Hint: Look more carefully at the empty spaces!");
    const calculator = await showSection(page, "calculator");
    await press(page, ["="]);
    await expect(calculator.getByRole("status")).toHaveText(CALCULATOR_MESSAGES[0]);
  });
});

test.describe("accessibility of the widgets", () => {
  for (const id of ["fortune", "calculator", "captcha"] as const) {
    test(`axe finds no WCAG 2.2 AA violation in #${id} once hydrated`, async ({ page }) => {
      await page.goto("/");
      await showSection(page, id);
      expect(await axeViolations(page, `#${id}`)).toEqual([]);
    });
  }

  test("axe finds no violation with the results on screen", async ({ page }) => {
    await stubRandom(page, 0.9);
    await openWithPausedClock(page, "/");
    await (await showSection(page, "fortune")).getByRole("button", { name: "Consult the Crystal Ball" }).click();
    await showSection(page, "calculator");
    await press(page, ["="]);
    const captcha = await showSection(page, "captcha");
    await square(page, 4).click();
    await captcha.getByRole("button", { name: "Verify" }).click();
    await page.clock.runFor(2000);
    await expect(page.locator("#fortune").getByRole("status")).toHaveText(FORTUNE);
    await expect(captcha.getByRole("status")).not.toHaveText("");
    // axe schedules its own timers: let time flow again. The hint shows for 3 s of real time now:
    // scan the CAPTCHA first, while it is most likely still on screen.
    await page.clock.resume();
    expect(await axeViolations(page, "#captcha")).toEqual([]);
    expect(await axeViolations(page, "#fortune")).toEqual([]);
    expect(await axeViolations(page, "#calculator")).toEqual([]);
  });
});
