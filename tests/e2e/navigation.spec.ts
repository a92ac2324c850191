import { expect, test } from "@playwright/test";
import { openPage } from "./fixtures.ts";

test.describe("routes and header", () => {
  test("the home page and the Wall of Fame answer 200 with their headings", async ({ page }) => {
    const home = await openPage(page, "/");
    expect(home.response?.status()).toBe(200);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Buy Nothing. Feel Everything.");
    home.assertNoErrors();

    const fame = await page.goto("/leaderboard");
    expect(fame?.status()).toBe(200);
    await expect(page.getByRole("heading", { level: 1, name: "Wall of Fame" })).toBeVisible();
  });

  test("the header links go where they say", async ({ page }) => {
    await page.goto("/leaderboard");
    const nav = page.getByRole("navigation", { name: "Main" });

    await nav.getByRole("link", { name: "Shop Nothing" }).click();
    await expect(page).toHaveURL("/");
    await expect(nav.getByRole("link", { name: "Shop Nothing" })).toHaveAttribute("aria-current", "page");

    await nav.getByRole("link", { name: "Wall of Fame" }).click();
    await expect(page).toHaveURL("/leaderboard");
    await expect(nav.getByRole("link", { name: "Wall of Fame" })).toHaveAttribute("aria-current", "page");

    await nav.getByRole("link", { name: "The Nothing Store" }).click();
    await expect(page).toHaveURL("/");
  });

  test("the header stays in view while scrolling", async ({ page }) => {
    await page.goto("/");
    await page.locator("#reviews").scrollIntoViewIfNeeded();
    await expect(page.getByRole("navigation", { name: "Main" })).toBeInViewport();
  });

  test("Cart (Empty) is inert: no navigation, no dialog, no change", async ({ page }) => {
    await page.goto("/");
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const before = await page.getByRole("banner").innerHTML();
    await page.getByRole("button", { name: "Cart (Empty)" }).click();
    await expect(page).toHaveURL("/");
    expect(dialogs).toEqual([]);
    expect(await page.getByRole("banner").innerHTML()).toBe(before);
  });

  test("an unknown path answers 404 with the 404 page and logs the path", async ({ page }) => {
    const logged = page.waitForEvent("console", (message) => message.text().includes("/no/such/nothing"));
    const response = await page.goto("/no/such/nothing");
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Oops! Page not found");
    const line = await logged;
    expect(line.type()).toBe("error");
    expect(line.text()).toContain("404 Error: User attempted to access non-existent route: /no/such/nothing");

    await page.getByRole("link", { name: "Return to Home" }).click();
    await expect(page).toHaveURL("/");
  });

  test("Buy Nothing Now lands on the products section", async ({ page }) => {
    await page.goto("/");
    await page.getByRole("link", { name: "Buy Nothing Now" }).click();
    await expect(page).toHaveURL("/#products");
    await expect(
      page.getByRole("heading", { name: "Choose Your Level of Nothing... or whatever..." }),
    ).toBeInViewport();
    // The heading is not hidden under the sticky header.
    const headerBottom = await page.getByRole("banner").evaluate((header) => header.getBoundingClientRect().bottom);
    const headingTop = await page.locator("#products-title").evaluate((heading) => heading.getBoundingClientRect().top);
    expect(headingTop).toBeGreaterThanOrEqual(headerBottom);
  });

  test("the community link opens in a new tab", async ({ page }) => {
    await page.goto("/");
    const link = page.getByRole("link", { name: /Join the Nothing Community/ });
    await expect(link).toHaveAttribute("target", "_blank");
    await expect(link).toHaveAttribute("rel", /noopener/);
    await expect(link).toHaveAttribute("href", /^https:\/\//);
    await expect(page.getByText("Premium nothing from 25 $ZN")).toBeVisible();
  });

  test("the home sections come in the designed order (docs/design.md#3a)", async ({ page }) => {
    await page.goto("/");
    const headings = await page.locator("main h2, footer h2").allTextContents();
    const order = [
      "$ZN live price chart",
      "Experience the Nothing Revolution",
      "Meet $ZN, the Zero Note",
      "Choose Your Level of Nothing... or whatever...",
      "How to buy $ZN",
      "What Our Customers Say About Nothing",
      "Donate to the Void",
    ];
    expect(headings.filter((heading) => order.includes(heading))).toEqual(order);
  });
});
