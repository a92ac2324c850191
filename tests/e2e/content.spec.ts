import { expect, test } from "@playwright/test";
import { LEADERBOARD } from "../../src/data/leaderboard.ts";
import { REVIEWS } from "../../src/data/reviews.ts";
import { TIERS } from "../../src/data/tiers.ts";
import { openWithPausedClock } from "./fixtures.ts";
import { consoleErrorsThroughPage } from "./harness/consoleErrors.ts";

test.describe("products", () => {
  const expected = [
    { name: "A Tiny Bit of Nothing", price: "25 $ZN", spins: "+3 Spins" },
    { name: "Deluxe Nothing", price: "100 $ZN", spins: "+7 Spins" },
    { name: "Premium Nothing", price: "500 $ZN", spins: "+15 Spins" },
    { name: "Ultimate Nothing", price: "1,000 $ZN", spins: "+25 Spins" },
    { name: "God-Tier Nothing", price: "10,000 $ZN", spins: "+100 Spins" },
    { name: "Millionaire's Nothing", price: "1,000,000 $ZN", spins: "+1,000 Spins" },
  ];

  test("every tier's card shows name, description, price, features, badges and buttons, and no address to pay", async ({
    page,
  }) => {
    await page.goto("/");
    const cards = page.locator("#products article");
    await expect(cards).toHaveCount(TIERS.length);
    // A transfer to a bare address carries no request's reference and is never credited: Buy Nothing is the way.
    await expect(cards.locator("[data-address]")).toHaveCount(0);
    await expect(cards.getByRole("button", { name: /^Copy/ })).toHaveCount(0);
    await expect(page.locator("#products")).not.toContainText(/payment address/i);
    await expect(page.locator("#how-to-buy")).toContainText("$ZN sent any other way is not credited.");

    for (const [index, tier] of expected.entries()) {
      const card = page.getByRole("article", { name: tier.name });
      const data = TIERS[index];
      if (!data) throw new Error(`no tier ${index}`);
      await expect(card.getByRole("heading", { level: 3 })).toHaveText(tier.name);
      await expect(card.getByText(data.description)).toBeVisible();
      await expect(card.locator("[data-price]")).toHaveText(tier.price);
      await expect(card.getByText(tier.spins, { exact: true })).toBeVisible();
      await expect(card.getByRole("listitem")).toHaveText(data.features);
      await expect(card.getByRole("button", { name: "Buy Nothing" })).toBeVisible();
      await expect(card.getByRole("button", { name: "View Certificate" })).toBeVisible();
      await expect(card.getByText("Most Popular")).toHaveCount(index === 1 ? 1 : 0);
    }
  });

  test("the +N Spins badge explains itself after the tooltip delay", async ({ page }) => {
    await openWithPausedClock(page, "/");
    const card = page.getByRole("article", { name: "Deluxe Nothing" });
    const badge = card.getByText("+7 Spins", { exact: true });
    await badge.focus();
    const tooltip = page.getByRole("tooltip", { name: "Includes 7 bonus lottery spins for the Nothing Lottery" });
    await page.clock.runFor(600);
    await expect(tooltip).toBeHidden();
    await page.clock.runFor(150);
    await expect(tooltip).toBeVisible();
    await expect(badge).toHaveAccessibleDescription("Includes 7 bonus lottery spins for the Nothing Lottery");
    await page.keyboard.press("Escape");
    await expect(tooltip).toBeHidden();
  });

  for (const [width, columns] of [
    [360, 1],
    [767, 1],
    [768, 2],
    [1024, 3],
    [1279, 3],
    // From 1280 px every tier in one row, however many there are.
    [1280, TIERS.length],
    [1920, TIERS.length],
  ] as const) {
    test(`the tier grid has ${columns} column(s) at ${width} px`, async ({ page }) => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto("/");
      const tracks = await page
        .locator("[data-tier-grid]")
        .evaluate((grid) => getComputedStyle(grid).gridTemplateColumns.split(" ").length);
      expect(tracks).toBe(columns);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    });
  }
});

test.describe("the contract address", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("says it is the token's address, not where to pay, and wraps in groups on a phone", async ({ page }) => {
    await page.goto("/");
    const hero = page.locator("main section").first();
    await expect(hero).toContainText(
      "It is not where to pay: tokens sent here buy nothing and are credited to no one. To buy, press Buy Nothing on a tier.",
    );
    const address = hero.locator("[data-address]");
    // Lines at 390 px, as the browser laid them out: the characters of the groups on each.
    const lines = await address.evaluate((code) => {
      const byTop = new Map<number, string>();
      for (const group of code.querySelectorAll("span")) {
        const top = Math.round(group.getBoundingClientRect().top);
        byTop.set(top, (byTop.get(top) ?? "") + (group.textContent ?? ""));
      }
      return [...byTop.values()];
    });
    expect(lines.join("")).toBe((await address.textContent())?.trim());
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length, lines.join(" / ")).toBeGreaterThanOrEqual(3);
  });
});

test.describe("reviews and footer", () => {
  test("six five-star reviews and the summary", async ({ page }) => {
    await page.goto("/");
    const section = page.locator("#reviews");
    await expect(section.getByText("5.0 out of 5 stars (2,847 reviews)")).toBeVisible();
    const reviews = section.getByRole("article");
    await expect(reviews).toHaveCount(6);
    for (const review of REVIEWS) {
      const card = section.getByRole("article", { name: `Review by ${review.name}` });
      await expect(card.getByRole("img", { name: "Rated 5 out of 5 stars" })).toBeVisible();
      await expect(card.getByText(review.review)).toBeVisible();
      await expect(card.getByText(review.tier, { exact: true })).toBeVisible();
    }
    await expect(section.getByText("September 14, 2026")).toBeVisible();
  });

  test("the footer's donation block shows the address for the token and the native coin", async ({ page }) => {
    await page.goto("/");
    const footer = page.getByRole("contentinfo");
    await expect(footer.getByRole("heading", { name: "Donate to the Void" })).toBeVisible();
    await expect(footer.getByText("Donation address ($ZN or SOL)", { exact: true })).toBeVisible();
    await expect(footer.getByRole("button", { name: /Play video/ })).toBeVisible();
  });
});

test.describe("Wall of Fame", () => {
  test("top three as cards, ranks 4 to 10 as a list, and the hard-coded total", async ({ page }) => {
    await page.goto("/leaderboard");
    await expect(page.locator("[data-fame-total]")).toHaveText("$83,600");

    const podium = page.locator("[data-fame-podium] > li");
    await expect(podium).toHaveCount(3);
    const list = page.locator("[data-fame-list] > li");
    await expect(list).toHaveCount(7);

    const amounts = [
      "$25,000",
      "$15,000",
      "$12,000",
      "$8,500",
      "$7,200",
      "$5,000",
      "$3,500",
      "$2,800",
      "$2,100",
      "$1,500",
    ];
    for (const [index, entry] of LEADERBOARD.entries()) {
      const row = index < 3 ? podium.filter({ hasText: entry.name }) : list.nth(index - 3);
      await expect(row).toContainText(`#${entry.rank}`);
      await expect(row).toContainText(entry.name);
      await expect(row).toContainText(amounts[index] ?? "");
      await expect(row).toContainText(entry.tier);
    }
  });

  test("with payments off, no Verified Patrons section, and the patrons never asked (docs/design.md#8)", async ({
    page,
  }) => {
    const asked: string[] = [];
    page.on("request", (request) => asked.push(new URL(request.url()).pathname));
    const config = page.waitForResponse((response) => response.url().endsWith("/payments/config"));
    await page.goto("/leaderboard");
    expect((await config).status()).toBe(200);
    await expect(page.locator(`service-list[data-kind="patrons"]`)).toHaveAttribute("data-state", "off");
    await expect(page.getByRole("heading", { name: "Verified Patrons" })).toBeHidden();
    await expect(page.locator("section", { has: page.locator(`service-list[data-kind="patrons"]`) })).toBeHidden();
    expect(asked).not.toContain("/payments/patrons");
  });
});

test.describe("console", () => {
  for (const path of ["/", "/leaderboard"]) {
    test(`${path} logs no error in the console with payments off`, async ({ page }) => {
      expect(await consoleErrorsThroughPage(page, path)).toEqual([]);
    });
  }
});
