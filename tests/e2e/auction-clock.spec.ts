/**
 * The round's countdown runs on the service's clock (docs/design.md#6b) and, between its messages, on
 * the page's monotonic clock (docs/design.md#9): a visitor whose clock is five hours off sees the
 * same time left as the service, and so does one whose clock is moved hours while the page is open.
 * On the suite's own server, rounds at their defaults (an hour), in the auction project: its files
 * take turns, so no bid here lands between another spec's reading of the highest bid and its own bid.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import WebSocket from "ws";
import { withTimeout } from "../../scripts/harness/childProcess.ts";
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

/**
 * The service's time left in the round, in seconds, as a function of this (test) process's clock,
 * which nothing here moves: the end as a fresh socket hears it, put on this machine's real clock.
 */
async function serviceSecondsLeft(baseURL: string): Promise<() => number> {
  const { round, now } = await readSnapshot(baseURL);
  expect(round.endsAt).not.toBeNull();
  const endsHere = Date.now() + Date.parse(round.endsAt ?? "") - Date.parse(now);
  return () => (endsHere - Date.now()) / 1_000;
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
    await expect.poll(answers).toBeGreaterThan(before);
    if ((await toast(page, "Bid Placed!").count()) > 0) return;
  }
  throw new Error("outbid 4 times in a row");
}

/** Opens the home page, live, and bids as `name` (made unique): the round then counts down. */
async function openAndBid(page: Page, name: string) {
  const opened = await openPage(page, "/");
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.submit).toBeEnabled();
  await expect(form.live).toBeVisible();
  await form.name.fill(`${name} ${Date.now() % 1_000_000}`);
  await bidAboveHighest(page);
  return { opened, form, timer: form.section.getByRole("timer") };
}

test("the countdown shows the service's time left, not the time by a page clock hours off", async ({
  page,
  baseURL,
}) => {
  // The page's clock runs five hours behind the real one (and the service's) from before load.
  await page.clock.install({ time: Date.now() - FIVE_HOURS_MS });
  const { opened, timer } = await openAndBid(page, "Clockwatcher");
  // Under an hour: a page counting on its own clock would show five hours more.
  await expect(timer).toHaveText(/^Ends in \d{1,2}:\d{2}$/);
  const serviceLeft = await serviceSecondsLeft(baseURL ?? "");
  await expect
    .poll(async () => Math.abs(secondsShown(await timer.textContent()) - serviceLeft()))
    .toBeLessThanOrEqual(2);
  // It ticks: a second later it reads less.
  const shown = secondsShown(await timer.textContent());
  await expect.poll(async () => secondsShown(await timer.textContent())).toBeLessThan(shown);

  const results = await new AxeBuilder({ page }).include("#auction").withTags(WCAG_TAGS).analyze();
  expect(results.violations.map((violation) => violation.id)).toEqual([]);
  opened.assertNoErrors();
});

test("the countdown keeps the service's time when the page's clock is moved hours back or forward after load", async ({
  page,
  baseURL,
}) => {
  // Playwright's clock keeps two readings: the time Date reads and the ticks performance.now()
  // reads. setSystemTime sets only the first (playwright-core's injected clock.ts: _innerSetTime
  // assigns _now.time, and performanceNow() returns _now.ticks), so it moves this page's wall clock
  // and leaves its monotonic clock running, as an NTP step or a hand on the clock would. Installed
  // at the real time, the clock runs in real time, like the service's.
  await page.clock.install();
  const sockets: string[] = [];
  page.on("websocket", (socket) => sockets.push(socket.url()));
  const { opened, form, timer } = await openAndBid(page, "Clockmover");
  await expect(timer).toHaveText(/^Ends in /);
  const serviceLeft = await serviceSecondsLeft(baseURL ?? "");
  const offBy = async () => Math.abs(secondsShown(await timer.textContent()) - serviceLeft());
  await expect.poll(offBy).toBeLessThanOrEqual(2);
  const placeholder = await form.amount.getAttribute("placeholder");
  /** Waits for the countdown's next tick after a move, so what it reads was computed after the move. */
  const nextTick = async () => {
    const before = await timer.textContent();
    await expect.poll(() => timer.textContent()).not.toBe(before);
  };

  // Five hours back: a page counting on its wall clock would read five hours more.
  await page.clock.setSystemTime(Date.now() - FIVE_HOURS_MS);
  await nextTick();
  expect(await offBy()).toBeLessThanOrEqual(2);
  await nextTick();
  expect(await offBy()).toBeLessThanOrEqual(2);
  // The monotonic clock was right all along: the page has nothing to ask the service.
  expect(sockets).toHaveLength(1);

  // Five hours ahead of the real time: a page on its wall clock would read the time up ("Ends in
  // 0:00", "Going, going…") and let any amount through its form.
  await page.clock.setSystemTime(Date.now() + FIVE_HOURS_MS);
  await nextTick();
  expect(await offBy()).toBeLessThanOrEqual(2);
  await expect(form.section.getByText("Going, going…")).toHaveCount(0);
  expect(await form.amount.getAttribute("placeholder")).toBe(placeholder);
  // A wall clock that leaps ahead of the monotonic one is also what waking from sleep looks like (the
  // monotonic clock stands still in sleep on most systems), so the page asks the service for its time
  // again: a second socket, resuming after the last bid it has.
  await expect.poll(() => sockets.length).toBe(2);
  expect(new URL(sockets[1] ?? "").searchParams.has("after")).toBe(true);
  await expect(form.live).toBeVisible();
  await nextTick();
  expect(await offBy()).toBeLessThanOrEqual(2);
  opened.assertNoErrors();
});
