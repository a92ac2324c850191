/**
 * Rounds from end to end (docs/design.md#6b), on a service of this file's own with 3-second rounds and a
 * 1-second soft close: it serves the built pages itself (dist/, same origin), from an empty
 * PGlite directory, so nothing here touches the suite's shared auction.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContextOptions, expect, type Page, test } from "@playwright/test";
import { stopChild, waitForOk } from "../../scripts/harness/childProcess.ts";
import { LIFTED_LIMITS_ENV } from "../../scripts/harness/liftedLimits.ts";
import { freePort } from "../../scripts/harness/ports.ts";
import { scaled } from "../harness/timeBudgets.ts";
import { auctionForm, toast } from "./fixtures.ts";

// Its tests in order on one worker, sharing what beforeAll starts; a failed test does not skip the
// ones after it (Playwright runs them on a new worker, after beforeAll again).
test.describe.configure({ mode: "default" });

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
/** Long enough for a 3-second round to end and its end to reach the pages on a busy machine. */
const ROUND_END_TIMEOUT_MS = scaled(30_000);

let dataDir: string;
let service: ChildProcess | undefined;
let origin: string;

test.beforeAll(async () => {
  test.setTimeout(scaled(150_000));
  dataDir = await mkdtemp(join(tmpdir(), "nothing-rounds-"));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = spawn(process.execPath, ["service/main.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      // /metrics on a free port of its own: the suite's other services hold theirs.
      METRICS_PORT: "0",
      // The pages the suite's own server serves (STATIC_DIR, as the config passes it), else dist/.
      STATIC_DIR: process.env.STATIC_DIR ?? "dist",
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
      ...LIFTED_LIMITS_ENV,
      AUCTION_ROUND_SECONDS: "3",
      AUCTION_SOFT_CLOSE_SECONDS: "1",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForOk(`${origin}/readyz`, service, "the short-rounds service", 120_000);
});

test.afterAll(async () => {
  if (service) await stopChild(service);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Celebrations {
  /** Each end's toast as it appeared: a Sold! toast's description, or the winner's own "You won …" title. */
  sold: string[];
  /** Each time the auction's confetti layer was unhidden: whether it could be seen. */
  confetti: boolean[];
}

/**
 * Records from before load what a page celebrates, as it happens: toasts last 5 s and the
 * confetti 3 s, so counting what is on screen later could miss one or a repeat.
 */
function recordCelebrations() {
  const record: Celebrations = { sold: [], confetti: [] };
  Object.assign(window, { celebrations: record });
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      const target = mutation.target as Element;
      if (mutation.type === "attributes" && target.matches("[data-auction-confetti]:not([hidden])")) {
        record.confetti.push(target.checkVisibility());
      }
      for (const node of mutation.addedNodes) {
        const title = node instanceof Element ? node.querySelector("[data-toast-title]")?.textContent : undefined;
        if (title === "Sold!") {
          record.sold.push((node as Element).querySelector("[data-toast-description]")?.textContent ?? "");
        } else if (title?.startsWith("You won")) record.sold.push(title);
      }
    }
  }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
}

/** A visitor of its own (a browser context), at the auction, hydrated and live. */
async function openVisitor(browser: Browser, options: BrowserContextOptions = {}) {
  const context = await browser.newContext(options);
  await context.addInitScript(recordCelebrations);
  const page = await context.newPage();
  const errors: Error[] = [];
  page.on("pageerror", (error) => errors.push(error));
  await page.goto(`${origin}/`);
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled();
  await expect(form.live).toBeVisible();
  return {
    page,
    ...form,
    confetti: page.locator("[data-auction-confetti]"),
    pastWinners: form.section.getByRole("list", { name: "Past winners" }),
    celebrations: () => page.evaluate(() => (window as unknown as { celebrations: Celebrations }).celebrations),
    close: () => context.close(),
    assertNoErrors: () => expect(errors, errors.map(String).join("\n")).toEqual([]),
  };
}

async function bid(visitor: { page: Page } & ReturnType<typeof auctionForm>, name: string, dollars: string) {
  await visitor.name.fill(name);
  await visitor.amount.fill(dollars);
  await visitor.submit.click();
  await expect(toast(visitor.page, "Bid Placed!")).toBeVisible();
}

async function expectNoAxeViolations(page: Page) {
  const results = await new AxeBuilder({ page }).include("#auction").withTags(WCAG_TAGS).analyze();
  expect(results.violations.map((violation) => violation.id)).toEqual([]);
}

test("a round ends on every page: Sold to the winner (You won, on the winner's page), once, with confetti there only; the next bid opens round 2", async ({
  browser,
}) => {
  const winner = await openVisitor(browser);
  const watcher = await openVisitor(browser);
  try {
    // Rounds are on and none has ended yet.
    await expect(watcher.section.getByText("No round has ended yet.")).toBeVisible();

    await bid(winner, "Winnie", "12.34");
    for (const [visitor, heard] of [
      [winner, "You won for $12.34!"],
      [watcher, "Sold to Winnie for $12.34"],
    ] as const) {
      await expect(visitor.section.getByText("Sold to Winnie for $12.34")).toBeVisible({
        timeout: ROUND_END_TIMEOUT_MS,
      });
      await expect.poll(async () => (await visitor.celebrations()).sold).toEqual([heard]);
      await expect(visitor.section.getByText("The next bid opens a new round")).toBeVisible();
      await expect(visitor.section.getByText(/^Leading: /)).toHaveCount(0);
      await expect(visitor.section.getByRole("timer")).toHaveCount(0);
      await expect(visitor.pastWinners.getByRole("listitem")).toHaveCount(1);
      await expect(visitor.pastWinners.getByRole("listitem").first()).toContainText("Winnie");
      await expect(visitor.pastWinners.getByRole("listitem").first()).toContainText("$12.34");
    }
    // Confetti for 3 s on the winner's page, none on the other.
    expect((await winner.celebrations()).confetti).toEqual([true]);
    await expect(winner.confetti.locator(".confetti-dot")).toHaveCount(50);
    await expect(watcher.confetti).toBeHidden();
    await expectNoAxeViolations(watcher.page);
    await expect(winner.confetti).toBeHidden();
    // Announced once: nothing more came while the confetti fell.
    for (const visitor of [winner, watcher]) expect((await visitor.celebrations()).sold).toHaveLength(1);
    expect((await watcher.celebrations()).confetti).toEqual([]);

    // Any amount opens the next round, even one below the last winning bid.
    await bid(watcher, "Wanda", "1.00");
    for (const visitor of [winner, watcher]) {
      await expect(visitor.section.getByText("1 Bidder", { exact: true })).toBeVisible();
      await expect(visitor.recent.getByRole("listitem")).toHaveCount(1);
      await expect(visitor.recent.getByRole("listitem")).toContainText("Wanda");
      await expect(visitor.recent).not.toContainText("Winnie");
      // Round 2 ends by itself 3 s later, and joins the past winners, newest first.
      await expect(visitor.section.getByText("Sold to Wanda for $1.00")).toBeVisible({
        timeout: ROUND_END_TIMEOUT_MS,
      });
      await expect(visitor.pastWinners.getByRole("listitem")).toHaveCount(2);
      await expect(visitor.pastWinners.getByRole("listitem").first()).toContainText("Wanda");
      await expect(visitor.pastWinners.getByRole("listitem").nth(1)).toContainText("Winnie");
    }
    expect((await winner.celebrations()).sold).toEqual(["You won for $12.34!", "Sold to Wanda for $1.00"]);
    expect((await watcher.celebrations()).sold).toEqual(["Sold to Winnie for $12.34", "You won for $1.00!"]);
    await expectNoAxeViolations(winner.page);
    winner.assertNoErrors();
    watcher.assertNoErrors();
  } finally {
    await winner.close();
    await watcher.close();
  }
});

test("under reduced motion the winner gets the You won toast and no confetti at all", async ({ browser }) => {
  const visitor = await openVisitor(browser, { reducedMotion: "reduce" });
  try {
    // The last round has ended (or is about to): any amount opens the next, or beats its highest.
    const placeholder = (await visitor.amount.getAttribute("placeholder")) ?? "";
    await bid(visitor, "Stillwater", placeholder.replace(/[$,]/g, ""));
    await expect(visitor.section.getByText(/^Sold to Stillwater for \$/)).toBeVisible({
      timeout: ROUND_END_TIMEOUT_MS,
    });
    await expect(toast(visitor.page, "You won for $")).toContainText(
      "Nothing is yours now. Pretend money: nobody pays.",
    );
    // The win was celebrated (the layer unhidden), yet nothing could be seen.
    await expect.poll(async () => (await visitor.celebrations()).confetti).toEqual([false]);
    await expect(visitor.confetti).toBeHidden();
    visitor.assertNoErrors();
  } finally {
    await visitor.close();
  }
});
