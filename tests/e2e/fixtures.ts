import { expect, type Page } from "@playwright/test";

/** Loads a page and fails the test on any uncaught error in it. */
export async function openPage(page: Page, path: string) {
  const errors: Error[] = [];
  page.on("pageerror", (error) => errors.push(error));
  const response = await page.goto(path);
  return {
    response,
    assertNoErrors: () => expect(errors, errors.map(String).join("\n")).toEqual([]),
  };
}

/** Replaces Math.random in the page before any of its scripts run, so draws are deterministic. */
export async function stubRandom(page: Page, value: number) {
  await page.addInitScript((draw) => {
    Math.random = () => draw;
  }, value);
}

const CLOCK_START = new Date("2026-11-21T12:00:00Z").getTime();

/**
 * Opens a page under Playwright's fake clock, paused from before load: timers then advance only
 * through page.clock.runFor, so assertions that poll cannot let real time fire them.
 */
export async function openWithPausedClock(page: Page, path: string) {
  await page.clock.install({ time: CLOCK_START });
  await page.clock.pauseAt(CLOCK_START + 1000);
  return page.goto(path);
}
