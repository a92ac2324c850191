/**
 * The round's countdown runs on the service's clock (docs/design.md#6b): a visitor whose clock is five
 * hours off sees the same time left as the service. On the suite's own server, rounds at their
 * defaults (an hour), in the auction project: its files take turns, so no bid here lands between
 * another spec's reading of the highest bid and its own bid.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import WebSocket from "ws";
import { withTimeout } from "../../scripts/support/childProcess.ts";
import type { SnapshotMessage } from "../../src/lib/auction/protocol.ts";
import { auctionForm, openPage, secondsShown, toast } from "./fixtures.ts";

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const FIVE_HOURS_MS = 5 * 3_600_000;

/** The auction as a fresh visitor's socket first hears it. */
async function readSnapshot(baseURL: string): Promise<SnapshotMessage> {
  const socket = new WebSocket(`${baseURL.replace(/^http/, "ws")}/realtime`, { origin: baseURL });
  try {
    const first = new Promise<SnapshotMessage>((resolve, reject) => {
      socket.once("message", (data) => resolve(JSON.parse(String(data)) as SnapshotMessage));
      socket.once("error", reject);
    });
    return await withTimeout(first, 10_000, "the snapshot");
  } finally {
    socket.close();
  }
}

/** Bids the smallest winning amount through the form; another spec's bid may win the race, then again. */
async function bidAboveHighest(page: Page) {
  const form = auctionForm(page);
  const answers = async () => (await toast(page, "Bid Placed!").count()) + (await toast(page, "Bid Too Low").count());
  for (let attempt = 0; attempt < 4; attempt++) {
    const before = await answers();
    const placeholder = (await form.amount.getAttribute("placeholder")) ?? "";
    await form.amount.fill(placeholder.replace(/[$,]/g, ""));
    await form.submit.click();
    await expect.poll(answers, { timeout: 15_000 }).toBeGreaterThan(before);
    if ((await toast(page, "Bid Placed!").count()) > 0) return;
  }
  throw new Error("outbid 4 times in a row");
}

test("the countdown shows the service's time left, not the time by a page clock hours off", async ({
  page,
  baseURL,
}) => {
  // The page's clock runs five hours behind the real one (and the service's) from before load.
  await page.clock.install({ time: Date.now() - FIVE_HOURS_MS });
  const opened = await openPage(page, "/");
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled({ timeout: 15_000 });
  await expect(form.live).toBeVisible({ timeout: 15_000 });
  await form.name.fill(`Clockwatcher ${Date.now() % 1_000_000}`);
  await bidAboveHighest(page);

  const timer = form.section.getByRole("timer");
  // Under an hour: a page counting on its own clock would show five hours more.
  await expect(timer).toHaveText(/^Ends in \d{1,2}:\d{2}$/, { timeout: 10_000 });
  const { round, now } = await readSnapshot(baseURL ?? "");
  expect(round.endsAt).not.toBeNull();
  // The end on this machine's real clock, as the service's clock puts it.
  const endsHere = Date.now() + Date.parse(round.endsAt ?? "") - Date.parse(now);
  await expect
    .poll(async () => Math.abs(secondsShown(await timer.textContent()) - (endsHere - Date.now()) / 1_000), {
      timeout: 10_000,
    })
    .toBeLessThanOrEqual(2);
  // It ticks: a second later it reads less.
  const shown = secondsShown(await timer.textContent());
  await expect.poll(async () => secondsShown(await timer.textContent()), { timeout: 5_000 }).toBeLessThan(shown);

  const results = await new AxeBuilder({ page }).include("#auction").withTags(WCAG_TAGS).analyze();
  expect(results.violations.map((violation) => violation.id)).toEqual([]);
  opened.assertNoErrors();
});
