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

/** The live auction's section and its controls. */
export function auctionForm(page: Page) {
  const section = page.locator("#auction");
  return {
    section,
    name: section.getByLabel("Your Name"),
    amount: section.getByLabel("Bid Amount"),
    submit: section.getByRole("button", { name: "Place Bid" }),
    maximum: section.getByLabel("Maximum Bid"),
    setMaximum: section.getByRole("button", { name: "Set Maximum" }),
    recent: section.getByRole("list", { name: "Recent Bids" }),
    /** The connection indicator; its data-connection says live or reconnecting. */
    connection: section.locator("[data-connection]"),
    live: section.locator('[data-connection="live"]'),
  };
}

/** Opens the home page at the auction, once the island is hydrated and its socket is live. */
export async function openAuction(page: Page) {
  const opened = await openPage(page, "/");
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled();
  await expect(form.live).toBeVisible();
  return { ...form, assertNoErrors: opened.assertNoErrors };
}

/** The smallest winning bid, in cents, read from the amount field's placeholder ("$12.35"). */
export async function nextBidCents(page: Page) {
  const placeholder = (await auctionForm(page).amount.getAttribute("placeholder")) ?? "";
  return Math.round(Number(placeholder.replace(/[$,]/g, "")) * 100);
}

/** The toasts on screen with this title. */
export function toast(page: Page, title: string) {
  return page.getByRole("region", { name: "Notifications" }).locator("[data-toast]").filter({ hasText: title });
}

/** The seconds a countdown reads: "Ends in 1:02:03" is 3,723. */
export function secondsShown(text: string | null): number {
  const parts = (text ?? "").replace("Ends in ", "").split(":").map(Number);
  return parts.reduce((total, part) => total * 60 + part, 0);
}
