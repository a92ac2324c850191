import AxeBuilder from "@axe-core/playwright";
import { type BrowserContext, expect, type Page, test, type WebSocketRoute } from "@playwright/test";
import WebSocket from "ws";
import { nextWinningCents } from "../../src/lib/auction/bidRules.ts";
import { bidPlaced } from "../../src/lib/auction/bidToasts.ts";
import { REFUSAL_TEXTS, tooLowText } from "../../src/lib/auction/refusalTexts.ts";
import { auctionForm, nextBidCents, openAuction, openWithPausedClock, toast } from "./fixtures.ts";

// Every test here shares the one auction of the e2e server (a fresh PGlite directory per run), so each
// bids above whatever is highest when it starts and uses its own bidder names. The tests of this file
// run one after another: a bid from a neighbouring test must not land between reading and bidding.
test.describe.configure({ mode: "default" });

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

const dollars = (cents: number) => (cents / 100).toFixed(2);
const unique = (prefix: string) => `${prefix} ${test.info().workerIndex}-${Date.now() % 1_000_000}`;

/** Whether two boxes share any area. */
function overlap(a: { x: number; y: number; width: number; height: number }, b: typeof a) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

test("two visitors see each other's bids live; the passed leader alone hears it personally, clear of the price", async ({
  browser,
}) => {
  const contexts: BrowserContext[] = [
    await browser.newContext({ viewport: { width: 390, height: 844 } }),
    await browser.newContext(),
  ];
  try {
    const [alicePage, bobPage] = await Promise.all(contexts.map((context) => context.newPage()));
    if (!alicePage || !bobPage) throw new Error("no pages");
    const alice = await openAuction(alicePage);
    const bob = await openAuction(bobPage);
    const aliceName = unique("Alice");
    // Alice's phone shows the auction's price, leader and countdown just under the header.
    const stakes = alicePage.locator("[data-toast-keep-clear]");
    await stakes.evaluate((element) =>
      window.scrollBy({ top: element.getBoundingClientRect().top - 100, behavior: "instant" }),
    );

    const cents = (await nextBidCents(alicePage)) + 100;
    await alice.name.fill(aliceName);
    await alice.amount.fill(dollars(cents));
    await alice.amount.press("Enter");

    await expect(toast(alicePage, "Bid Placed!")).toContainText(bidPlaced(cents).description);
    await expect(alice.amount).toHaveValue("");
    await expect(alice.name).toHaveValue(aliceName);

    await expect(toast(bobPage, "New Bid!")).toContainText(`${aliceName} bid ${money.format(cents / 100)}`);
    await expect(bob.recent.getByRole("listitem").first()).toContainText(aliceName);
    await expect(bob.section).toContainText(`Leading: ${aliceName}`);
    // By now the broadcast of Alice's bid has reached Alice too: her own bid raises no toast for her.
    await expect(toast(alicePage, "New Bid!")).toHaveCount(0);

    // And back: Bob outbids by the smallest amount that wins; Alice, who led, hears it personally.
    const bobName = unique("Bob");
    const bobCents = nextWinningCents(cents);
    await bob.name.fill(bobName);
    await bob.amount.fill(dollars(bobCents));
    await bob.name.press("Enter");
    await expect(toast(bobPage, "Bid Placed!")).toBeVisible();
    const outbid = alicePage.getByRole("alert").locator("[data-toast]").filter({ hasText: "You've been outbid" });
    await expect(outbid).toContainText(`You've been outbid by ${bobName} — ${money.format(bobCents / 100)}`);
    await expect(toast(alicePage, "New Bid!")).toHaveCount(0);
    await expect(toast(bobPage, "outbid")).toHaveCount(0);
    await expect(alice.recent.getByRole("listitem").first()).toContainText(money.format(bobCents / 100));
    await expect(alice.section.getByText(/^\d+ Bidders?$/)).toBeVisible();

    // No toast on Alice's phone covers the price, the leader or the countdown.
    const stakesBox = await stakes.boundingBox();
    if (!stakesBox) throw new Error("the auction's stakes are not laid out");
    await expect(stakes).toBeInViewport();
    for (const card of await alicePage.locator("[data-toast]").all()) {
      const cardBox = await card.boundingBox();
      if (cardBox) expect(overlap(cardBox, stakesBox), await card.innerText()).toBe(false);
    }

    // Its link goes back to the form and sends the toast away.
    await outbid.getByRole("link", { name: "Bid again" }).click();
    await expect(outbid).toHaveCount(0);
    await expect(alice.amount).toBeInViewport();
    alice.assertNoErrors();
    bob.assertNoErrors();
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
  }
});

test("the form says bids are pretend money, and asks before a bid ten times the smallest that wins", async ({
  page,
}) => {
  const form = await openAuction(page);
  await expect(form.amount).toHaveAccessibleName("Bid Amount (pretend $)");
  await expect(form.amount).toHaveAccessibleDescription("Pretend dollars: nobody pays, not even the winner.");
  const next = await nextBidCents(page);
  const huge = next * 10 + 10_001;
  await form.name.fill(unique("Bigspender"));
  await form.amount.fill(dollars(huge));
  await form.amount.press("Enter");
  const confirm = form.section.getByRole("alert");
  await expect(confirm).toContainText(`${money.format(huge / 100)} is more than 10 times the smallest winning bid`);
  await expect(toast(page, "Bid Placed!")).toHaveCount(0);
  // Changing the amount asks again; the same amount a second time is placed.
  await form.amount.fill(dollars(huge + 1));
  await expect(confirm).toHaveCount(0);
  await form.amount.press("Enter");
  await expect(confirm).toBeVisible();
  await form.submit.click();
  await expect(toast(page, "Bid Placed!")).toContainText(bidPlaced(huge + 1).description);
  await expect(confirm).toHaveCount(0);
});

test("the form answers bad input with the spec's toasts and keeps the amount", async ({ page }) => {
  const form = await openAuction(page);

  await form.amount.fill("5");
  await form.submit.click();
  await expect(toast(page, "Name Required")).toContainText("Please enter your name to place a bid");
  await expect(form.amount).toHaveValue("5");

  await form.name.fill("x".repeat(41));
  await form.submit.click();
  await expect(toast(page, "Invalid Name")).toContainText(REFUSAL_TEXTS.invalid_name);

  await form.name.fill(unique("Val"));
  for (const bad of ["", "0", "-3", "1.005"]) {
    await form.amount.fill(bad);
    await form.submit.click();
    await expect(toast(page, "Invalid Bid").first()).toContainText("Please enter a valid bid amount");
    await expect(form.amount).toHaveValue(bad);
  }
  await expect(toast(page, "Bid Placed!")).toHaveCount(0);

  // The same amount again is not above the highest bid any more.
  const cents = await nextBidCents(page);
  await form.amount.fill(dollars(cents));
  await form.submit.click();
  await expect(toast(page, "Bid Placed!")).toBeVisible();
  await form.amount.fill(dollars(cents));
  await form.submit.click();
  await expect(toast(page, "Bid Too Low")).toContainText(tooLowText(cents));
  await expect(form.amount).toHaveValue(dollars(cents));
});

test("the service refuses a name with a link or a profanity: Name Not Allowed, and the amount is kept", async ({
  page,
}) => {
  const form = await openAuction(page);
  const amount = dollars((await nextBidCents(page)) + 500);
  for (const name of ["buy at nothing.store", "Sh1t Bidder"]) {
    await form.name.fill(name);
    await form.amount.fill(amount);
    await form.submit.click();
    await expect(toast(page, "Name Not Allowed").first()).toContainText(REFUSAL_TEXTS.name_not_allowed);
    await expect(form.amount).toHaveValue(amount);
  }
  await expect(toast(page, "Bid Placed!")).toHaveCount(0);
  await expect(form.recent).not.toContainText("nothing.store");
});

test("a bid outbid in between by another visitor gets the service's Bid Too Low", async ({ page, browser }) => {
  // This visitor's socket stops hearing broadcasts, so only the service knows of the rival's bid.
  let deaf = false;
  await page.routeWebSocket(/\/realtime/, (socket) => {
    const server = socket.connectToServer();
    server.onMessage((message) => {
      if (deaf && typeof message === "string" && message.startsWith('{"type":"bid"')) return;
      socket.send(message);
    });
  });
  const form = await openAuction(page);
  deaf = true;
  const start = await nextBidCents(page);

  const rivalContext = await browser.newContext();
  try {
    const rival = await openAuction(await rivalContext.newPage());
    const rivalPage = rival.section.page();
    const rivalCents = Math.max(start, await nextBidCents(rivalPage)) + 500;
    await rival.name.fill(unique("Rival"));
    await rival.amount.fill(dollars(rivalCents));
    await rival.submit.click();
    await expect(toast(rivalPage, "Bid Placed!")).toBeVisible();

    await form.name.fill(unique("Slow"));
    await form.amount.fill(dollars(rivalCents - 100));
    await form.submit.click();
    await expect(toast(page, "Bid Too Low")).toContainText(tooLowText(rivalCents));
    await expect(form.amount).toHaveValue(dollars(rivalCents - 100));
  } finally {
    await rivalContext.close();
  }
});

test("a reload shows the bid history, newest first", async ({ page }) => {
  const form = await openAuction(page);
  const name = unique("Reloader");
  const cents = await nextBidCents(page);
  await form.name.fill(name);
  await form.amount.fill(dollars(cents));
  await form.submit.click();
  await expect(toast(page, "Bid Placed!")).toBeVisible();

  await page.reload();
  const reloaded = auctionForm(page);
  await reloaded.section.scrollIntoViewIfNeeded();
  // Other tests bid at the same time: look for this bid, and check the order of whatever is listed.
  await expect(reloaded.recent.getByRole("listitem").filter({ hasText: name })).toContainText(
    money.format(cents / 100),
  );
  const amounts = (await reloaded.recent.getByRole("listitem").allTextContents()).map((text) =>
    Number(text.slice(text.lastIndexOf("$") + 1).replace(/,/g, "")),
  );
  expect(amounts.length).toBeLessThanOrEqual(10);
  expect(amounts).toEqual([...amounts].sort((a, b) => b - a));
});

test("with the connection lost, the indicator says so and a bid fails with the amount kept", async ({ page }) => {
  const routes: WebSocketRoute[] = [];
  await page.routeWebSocket(/\/realtime/, (socket) => {
    routes.push(socket);
    socket.connectToServer();
  });
  // The paused clock holds the client's reconnect timer, so it stays disconnected while the bid is tried.
  await openWithPausedClock(page, "/");
  const form = auctionForm(page);
  await form.section.scrollIntoViewIfNeeded();
  await expect(form.live).toBeVisible();
  // client:idle islands (the toaster) hydrate only when the clock lets the browser go idle.
  await page.clock.runFor(500);
  await routes[0]?.close({ code: 1011, reason: "test: connection lost" });
  await expect(form.section.locator('[data-connection="reconnecting"]')).toHaveText("Reconnecting…");

  await form.name.fill(unique("Offline"));
  // Above the highest, and no big jump (which would ask first).
  const amount = dollars((await nextBidCents(page)) + 100);
  await form.amount.fill(amount);
  await form.submit.click();
  await expect(toast(page, "Bid Failed")).toContainText("Failed to place your bid. Please try again.");
  // Failures are announced assertively: the toast sits in the toaster's alert region.
  await expect(page.getByRole("alert").locator("[data-toast]").filter({ hasText: "Bid Failed" })).toHaveCount(1);
  await expect(form.amount).toHaveValue(amount);

  // Time moves on: the client reconnects after 1 s and is live again.
  await page.clock.runFor(1_000);
  await expect(form.live).toBeVisible();
  expect(routes.length).toBe(2);
});

test("axe finds no WCAG 2.2 AA violation in the auction section, with bids listed", async ({ page }) => {
  const form = await openAuction(page);
  const cents = await nextBidCents(page);
  await form.name.fill(unique("Axe"));
  await form.amount.fill(dollars(cents));
  await form.submit.click();
  await expect(toast(page, "Bid Placed!")).toBeVisible();
  const results = await new AxeBuilder({ page }).include("#auction").withTags(WCAG_TAGS).analyze();
  expect(results.violations.map((violation) => violation.id)).toEqual([]);
});

// Bidder names are shown as text, never as HTML (docs/design.md#3): names carrying markup, scripts and
// Unicode tricks are placed through the form and through a socket of their own, and the page shows
// each one character for character, with nothing injected, no dialog and no script run. It lives
// in this file so that it, too, runs between the other auction tests and never during one.
declare global {
  interface Window {
    /** Set by a payload only if a name ever ran as script. */
    pwned?: number;
  }
}

/** Each sets the flag, or opens a dialog, if the page ever treats it as markup. At most 40 code points. */
const SCRIPTED_NAMES = [
  "<img src=x onerror=window.pwned=1>",
  "<script>window.pwned=2</script>",
  "<img src=x onerror=alert(1)>",
  '"><svg onload=window.pwned=3>',
  '<iframe srcdoc="<b>x</b>"></iframe>',
  "&lt;b&gt;not bold&lt;/b&gt;",
];
const UNICODE_NAMES = [
  "Zoe\u0308 Z\u0336\u0336a\u0301\u0327",
  "\u{1f98a}\u{1f1f3}\u{1f1f4}\u{1f44d}\u{1f3fd} Nothing",
  "\u05e9\u05dc\u05d5\u05dd \u0645\u0632\u0627\u064a\u062f",
];
/** A right-to-left override (U+202E, Unicode Cf) would show "nothing" as "gnihton": refused. */
const OVERRIDE_NAME = "\u202egnihton";

/** The names the Recent Bids list shows, as text. */
function listedNames(page: Page) {
  return auctionForm(page)
    .recent.locator("li > span:first-child")
    .evaluateAll((spans) => spans.map((span) => span.textContent));
}

interface Answer {
  type: string;
  requestId?: string;
  code?: string;
  highestCents?: number | null;
  bid?: { bidderName: string; amountCents: number };
}

/** A second client of the auction, as another visitor's browser would be (same Origin). */
async function openBidder(baseURL: string) {
  const socket = new WebSocket(`${baseURL.replace(/^http/, "ws")}/realtime`, { origin: baseURL });
  const answers = new Map<string, (answer: Answer) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as Answer;
    if (message.requestId) answers.get(message.requestId)?.(message);
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let counter = 0;
  function send(bidderName: string, cents: number): Promise<Answer> {
    counter++;
    const requestId = `hostile-${counter}`;
    const answered = new Promise<Answer>((resolve) => answers.set(requestId, resolve));
    socket.send(JSON.stringify({ type: "bid", requestId, bidderName, amount: cents / 100 }));
    return answered;
  }
  return {
    send,
    /** Bids above the highest; another spec's bid may win the race, so it tries again above that one. */
    async place(bidderName: string, fromCents: number) {
      let cents = fromCents;
      for (let attempt = 0; attempt < 5; attempt++) {
        const answer = await send(bidderName, cents);
        if (answer.type === "accepted") return answer;
        if (answer.code !== "too_low") throw new Error(`bid for ${bidderName} refused: ${JSON.stringify(answer)}`);
        cents = nextWinningCents(answer.highestCents ?? cents);
      }
      throw new Error(`bid for ${bidderName} outbid 5 times`);
    },
    close: () => socket.close(),
  };
}

test("hostile names are shown as literal text, run nothing and inject nothing", async ({ page, baseURL }) => {
  const dialogs: string[] = [];
  page.on("dialog", async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const form = await openAuction(page);
  // What markup the page has of these kinds before any hostile name arrives (none is expected).
  const injected = page.locator('img[src="x"], svg[onload], iframe[srcdoc], #auction script, [data-toast] script');
  const bold = page.locator("#auction b, [data-toast] b");
  const before = { injected: await injected.count(), bold: await bold.count() };
  const bidder = await openBidder(baseURL ?? "");
  try {
    // Through the form: the visitor's own bid.
    const [formName, ...socketNames] = [...SCRIPTED_NAMES, ...UNICODE_NAMES];
    if (!formName) throw new Error("no names");
    for (let attempt = 0; ; attempt++) {
      const seen = { placed: await toast(page, "Bid Placed!").count(), low: await toast(page, "Bid Too Low").count() };
      await form.name.fill(formName);
      await form.amount.fill(((await nextBidCents(page)) / 100).toFixed(2));
      await form.submit.click();
      await expect
        .poll(async () => (await toast(page, "Bid Placed!").count()) + (await toast(page, "Bid Too Low").count()))
        .toBeGreaterThan(seen.placed + seen.low);
      if ((await toast(page, "Bid Placed!").count()) > seen.placed) break;
      // Another spec's bid came in between reading the placeholder and bidding.
      if (attempt >= 3) throw new Error("outbid 4 times in a row");
    }
    await expect.poll(() => listedNames(page)).toContain(formName);

    // Through another visitor's socket, in one burst (the shared auction's other specs read the
    // high and then bid: the shorter the burst, the less it lands in between). Each arrives as a
    // broadcast with a New Bid! toast; a bid that lost a race to another spec's bids is placed again.
    const amounts = [await nextBidCents(page)];
    while (amounts.length < socketNames.length) amounts.push(nextWinningCents(amounts.at(-1) as number));
    const answers = await Promise.all(socketNames.map((name, index) => bidder.send(name, amounts[index] as number)));
    for (const [index, answer] of answers.entries()) {
      const name = socketNames[index] ?? "";
      const placed = answer.type === "accepted" ? answer : await bidder.place(name, await nextBidCents(page));
      expect(placed.bid?.bidderName).toBe(name);
    }
    for (const name of socketNames) await expect.poll(() => listedNames(page)).toContain(name);
    const lastName = socketNames.at(-1) ?? "";
    await expect(toast(page, "New Bid!").filter({ hasText: lastName }).first()).toBeVisible();

    // The leader line names the highest bid as text too, while no other spec has outbid it.
    if ((await listedNames(page))[0] === lastName) {
      expect(await form.section.getByText(/^Leading: /).textContent()).toBe(`Leading: ${lastName}`);
    }

    // A right-to-left override is refused, by the form and by the service.
    await form.name.fill(OVERRIDE_NAME);
    await form.amount.fill(((await nextBidCents(page)) / 100).toFixed(2));
    await form.submit.click();
    await expect(toast(page, "Invalid Name")).toContainText(REFUSAL_TEXTS.invalid_name);
    expect(await bidder.send(OVERRIDE_NAME, await nextBidCents(page))).toMatchObject({ code: "invalid_name" });
    expect(await listedNames(page)).not.toContain(OVERRIDE_NAME);

    // Nothing ran and nothing was injected, anywhere in the page.
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(before).toEqual({ injected: 0, bold: 0 });
    await expect(injected).toHaveCount(0);
    await expect(bold).toHaveCount(0);
    form.assertNoErrors();
  } finally {
    bidder.close();
  }
});
