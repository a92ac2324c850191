import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { CHATBOT_FALLBACK_REPLIES, CHATBOT_GREETING, CHATBOT_KEYWORD_REPLIES } from "../../src/data/chatbot.ts";
import { NEWS_JOKES } from "../../src/data/newsJokes.ts";
import { openWithPausedClock, stubRandom } from "./fixtures.ts";

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];

/** The reply of the keyword group whose first keyword is `keyword`. */
function replyFor(keyword: string): string {
  const group = CHATBOT_KEYWORD_REPLIES.find((candidate) => candidate.keywords[0] === keyword);
  if (!group) throw new Error(`no group for ${keyword}`);
  return group.reply;
}

/** Opens the panel. The button is plain HTML with a module script: it works from page load. */
async function openChat(page: Page) {
  const button = page.getByRole("button", { name: "Open NothingBot" });
  await button.click();
  const panel = page.getByRole("dialog", { name: "NothingBot" });
  await expect(panel).toBeVisible();
  return panel;
}

/** The home page with Math.random stubbed to `random` and the clock paused, the chat open: its panel and input. */
async function chatOnHomePage(page: Page, random: number) {
  await stubRandom(page, random);
  await openWithPausedClock(page, "/");
  const panel = await openChat(page);
  return { panel, input: panel.getByRole("textbox", { name: "Message NothingBot" }) };
}

const messages = (page: Page) => page.getByRole("log").locator("[data-chat-message]");

test.describe("NothingBot", () => {
  test("opens with a greeting and focus in the input; Escape closes and returns focus", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const panel = await openChat(page);
    await expect(panel.getByRole("log")).toContainText(CHATBOT_GREETING);
    const input = panel.getByRole("textbox", { name: "Message NothingBot" });
    await expect(input).toBeFocused();

    await page.keyboard.press("Escape");
    await expect(panel).toBeHidden();
    const button = page.getByRole("button", { name: "Open NothingBot" });
    await expect(button).toBeFocused();

    await page.keyboard.press("Enter");
    await expect(panel).toBeVisible();
    await expect(input).toBeFocused();
    await panel.getByRole("button", { name: "Close NothingBot" }).click();
    await expect(button).toBeFocused();
  });

  test("the panel and React load only when the button is reached for, and a click during the load opens it", async ({
    page,
  }) => {
    const panelChunk = /\/_astro\/NothingBot\.[\w-]+\.js$/;
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(panelChunk, async (route) => {
      await held;
      await route.continue();
    });
    await openWithPausedClock(page, "/");
    await page.waitForLoadState("networkidle");
    expect(requested.filter((url) => panelChunk.test(url))).toEqual([]);

    // Pressing the button starts the fetch; the click lands while the panel is still on its way.
    const button = page.getByRole("button", { name: "Open NothingBot" });
    await button.click();
    await expect.poll(() => requested.filter((url) => panelChunk.test(url)).length).toBe(1);
    const panel = page.getByRole("dialog", { name: "NothingBot" });
    await expect(panel).toHaveCount(0);

    release();
    await expect(panel).toBeVisible();
    await expect(panel.getByRole("textbox", { name: "Message NothingBot" })).toBeFocused();
  });

  test("a panel that fails to load says so, and the button tries again", async ({ page }) => {
    const panelChunk = /\/_astro\/NothingBot\.[\w-]+\.js$/;
    await page.route(panelChunk, (route) => route.abort());
    await openWithPausedClock(page, "/");
    const button = page.getByRole("button", { name: "Open NothingBot" });
    await button.click();
    await expect(page.getByRole("alert").locator("[data-toast]")).toContainText("NothingBot didn't load");
    await expect(button).toBeVisible();

    await page.unroute(panelChunk);
    await button.click();
    await expect(page.getByRole("dialog", { name: "NothingBot" })).toBeVisible();
  });

  test("Enter sends, a typing indicator shows, the input is disabled, and the reply comes after the delay", async ({
    page,
  }) => {
    const { panel, input } = await chatOnHomePage(page, 0);

    await input.fill("So what do I actually get?");
    await input.press("Enter");
    await expect(messages(page)).toHaveCount(2);
    await expect(messages(page).last()).toHaveText("You: So what do I actually get?");
    await expect(input).toHaveValue("");
    await expect(input).toBeDisabled();
    await expect(panel.getByRole("button", { name: "Send" })).toBeDisabled();
    await expect(panel.getByText("NothingBot is typing…")).toBeAttached();

    // Random 0: the shortest delay, 1 s.
    await page.clock.runFor(999);
    await expect(messages(page)).toHaveCount(2);
    await page.clock.runFor(1);
    await expect(messages(page).last()).toHaveText(`NothingBot: ${replyFor("what")}`);
    await expect(panel.getByText("NothingBot is typing…")).toHaveCount(0);
    await expect(input).toBeEnabled();
    await expect(input).toBeFocused();
  });

  test("answers each keyword group, first match in the product's order (docs/product-behaviour.md#4-chatbot), case-insensitively", async ({
    page,
  }) => {
    const { panel, input } = await chatOnHomePage(page, 0);
    const cases: [string, string][] = [
      ["I want a REFUND", replyFor("refund")],
      ["how long is delivery", replyFor("shipping")],
      ["is Deluxe worth it?", replyFor("premium")],
      ["what is the point", replyFor("why")],
      ["help me", replyFor("support")],
      ["I have a problem with my refund", replyFor("refund")],
      ["thanks!", replyFor("thank")],
      ["what is this", CHATBOT_FALLBACK_REPLIES[0]],
    ];
    for (const [question, answer] of cases) {
      await input.fill(question);
      await panel.getByRole("button", { name: "Send" }).click();
      await page.clock.runFor(1000);
      await expect(messages(page).last()).toHaveText(`NothingBot: ${answer}`);
    }
  });

  test("Shift+Enter and blank messages do not send", async ({ page }) => {
    const { panel, input } = await chatOnHomePage(page, 0.99);

    await input.fill("refund please");
    await input.press("Shift+Enter");
    await expect(messages(page)).toHaveCount(1);
    await expect(input).toHaveValue("refund please");
    await expect(input).toBeEnabled();

    await input.fill("   ");
    await input.press("Enter");
    await panel.getByRole("button", { name: "Send" }).click();
    await expect(messages(page)).toHaveCount(1);
    await expect(panel.getByText("NothingBot is typing…")).toHaveCount(0);

    // Random 0.99: the longest delay, just under 3 s.
    await input.fill("hello there");
    await input.press("Enter");
    await page.clock.runFor(2979);
    await expect(messages(page)).toHaveCount(2);
    await page.clock.runFor(1);
    await expect(messages(page).last()).toHaveText(`NothingBot: ${CHATBOT_FALLBACK_REPLIES[4]}`);
  });

  test("under reduced motion the typing dots hold still, and the reply still comes", async ({ page }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    const { panel, input } = await chatOnHomePage(page, 0);
    await input.fill("why?");
    await page.keyboard.press("Enter");
    await expect(panel.getByText("NothingBot is typing…")).toBeAttached();
    expect(await panel.evaluate((element) => element.getAnimations({ subtree: true }).length)).toBe(0);
    await page.clock.runFor(1000);
    await expect(messages(page).last()).toHaveText(`NothingBot: ${replyFor("why")}`);
  });

  test("axe finds no WCAG 2.2 AA violation with the panel open and a conversation in it", async ({ page }) => {
    const { input } = await chatOnHomePage(page, 0);
    await input.fill("premium?");
    await page.keyboard.press("Enter");
    await page.clock.runFor(1000);
    await expect(messages(page)).toHaveCount(3);
    // axe schedules its own timers: let time flow again.
    await page.clock.resume();
    const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
    const summary = results.violations.map((violation) => ({
      id: violation.id,
      targets: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5),
    }));
    expect(summary).toEqual([]);
  });
});

test.describe("news pop-ups", () => {
  /** The joke's card in its own region, apart from the toaster's real messages. */
  const newsCard = (page: Page) => page.getByRole("region", { name: "Nothing News" }).locator("[data-news-popup]");

  test("the first joke pops up 10 s after load for 4 s; the next one 60 s + 30..60 s later", async ({ page }) => {
    await stubRandom(page, 0);
    await openWithPausedClock(page, "/");
    const joke = NEWS_JOKES[0];
    if (!joke) throw new Error("no jokes");
    const card = newsCard(page);

    await page.clock.runFor(9_999);
    await expect(card).toBeHidden();
    await page.clock.runFor(1);
    await expect(card).toBeVisible();
    await expect(card.locator("p")).toHaveText([joke.title, joke.description]);
    // Its own region, announced politely, never in the toaster's stack.
    await expect(page.getByRole("region", { name: "Notifications" })).not.toContainText(joke.description);
    await expect(page.getByRole("region", { name: "Nothing News" }).getByRole("status")).toContainText(joke.title);
    await page.clock.runFor(3_999);
    await expect(card).toBeVisible();
    await page.clock.runFor(1);
    await expect(card).toBeHidden();

    // Random 0: the next one 60 s + 30 s after the first, at 100 s.
    await page.clock.runFor(100_000 - 14_000 - 1);
    await expect(card).toBeHidden();
    await page.clock.runFor(1);
    await expect(card).toBeVisible();
  });

  test("on a phone a joke leaves as soon as the visitor scrolls, and none comes while they scroll", async ({
    page,
  }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await stubRandom(page, 0);
    await openWithPausedClock(page, "/");
    const card = newsCard(page);
    await page.clock.runFor(10_000);
    await expect(card).toBeVisible();
    await page.mouse.wheel(0, 400);
    await expect(card).toBeHidden();

    // The next is due at 100 s: a scroll just before it skips it.
    await page.clock.runFor(89_500);
    await page.mouse.wheel(0, 400);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(400);
    await page.clock.runFor(500);
    await expect(card).toBeHidden();
  });

  test("real messages win: no joke while a toast shows, and a toast sends a joke away", async ({ page }) => {
    await stubRandom(page, 0);
    await page.route(/\/_astro\/NothingBot\.[\w-]+\.js$/, (route) => route.abort());
    await openWithPausedClock(page, "/");
    const card = newsCard(page);
    const launcher = page.getByRole("button", { name: "Open NothingBot" });
    // An error at 8 s (5 s on screen): the joke due at 10 s is skipped.
    await page.clock.runFor(8_000);
    await launcher.click();
    await expect(page.getByRole("alert").locator("[data-toast]")).toHaveCount(1);
    await page.clock.runFor(2_000);
    await expect(card).toBeHidden();

    // The next joke, at 100 s, shows; an error arriving then sends it away.
    await page.clock.runFor(90_000);
    await expect(card).toBeVisible();
    await launcher.click();
    await expect(page.getByRole("alert").locator("[data-toast]")).toHaveCount(1);
    await expect(card).toBeHidden();
  });

  test("pop-ups still come under reduced motion", async ({ page }) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await stubRandom(page, 0.5);
    await openWithPausedClock(page, "/");
    await page.clock.runFor(10_000);
    await expect(newsCard(page)).toContainText(NEWS_JOKES[6]?.description ?? "");
  });
});
