import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { openPage, openWithPausedClock } from "./fixtures.ts";

const TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
/** openWithPausedClock's day: the certificate dates itself today. */
const TODAY = "November 21, 2026";
const GOLD = "rgb(245, 196, 81)";
const ACCENT = "rgb(182, 156, 255)";

const card = (page: Page, tierName: string) =>
  page.locator("#products article").filter({ has: page.getByRole("heading", { name: tierName, exact: true }) });

/** Collects every window.alert text and accepts it. */
function collectAlerts(page: Page) {
  const alerts: string[] = [];
  page.on("dialog", (dialog) => {
    alerts.push(dialog.message());
    void dialog.accept();
  });
  return alerts;
}

test.describe("Buy Nothing", () => {
  for (const [tierName, price, spins] of [
    ["Deluxe Nothing", "100 $ZN", 7],
    ["Millionaire's Nothing", "1,000,000 $ZN", 1000],
  ] as const) {
    test(`${tierName}: dispatches planPurchased, then says the spins are added and asks for no payment`, async ({
      page,
    }) => {
      const alerts = collectAlerts(page);
      const { assertNoErrors } = await openPage(page, "/");
      await page.evaluate(() => {
        const seen: unknown[] = [];
        (window as unknown as { purchases: unknown[] }).purchases = seen;
        window.addEventListener("planPurchased", (event) => seen.push((event as CustomEvent).detail));
      });

      await card(page, tierName).getByRole("button", { name: "Buy Nothing" }).click();
      await expect.poll(() => alerts.length).toBe(1);
      expect(alerts[0]).toBe(
        `You chose ${tierName} for ${price}!\n\n` +
          "The store takes no payments right now: send nothing anywhere, as nothing sent would be credited.\n\n" +
          `Your +${spins.toLocaleString("en-US")} lottery spins are added anyway!\n\n` +
          "Because nothing is worth everything.",
      );
      const purchases = await page.evaluate(() => (window as unknown as { purchases: unknown[] }).purchases);
      expect(purchases).toEqual([{ planId: tierName === "Deluxe Nothing" ? 2 : 6, spins }]);
      assertNoErrors();
    });
  }

  test("adds the tier's spins to the wheel, once per purchase", async ({ page }) => {
    collectAlerts(page);
    await page.goto("/");
    const counter = page.locator("#lottery [data-spin-counter]");
    await counter.scrollIntoViewIfNeeded();
    await expect(counter).toHaveText("1 Spin Remaining");

    await card(page, "A Tiny Bit of Nothing").getByRole("button", { name: "Buy Nothing" }).click();
    await card(page, "Premium Nothing").getByRole("button", { name: "Buy Nothing" }).click();
    await expect(counter).toHaveText("19 Spins Remaining");
    expect(await page.evaluate(() => localStorage.getItem("nothingStoreSpins"))).toBe("19");
    await expect(page.locator("#lottery [data-wheel-card]").getByRole("status")).toHaveText(
      "+15 spins from your purchase! 19 spins remaining.",
    );
  });

  test("a purchase celebrates with 50 dots of confetti for 3 s", async ({ page }) => {
    collectAlerts(page);
    await openWithPausedClock(page, "/");
    const confetti = page.locator("[data-confetti]");
    await expect(confetti).toBeHidden();
    await card(page, "Deluxe Nothing").getByRole("button", { name: "Buy Nothing" }).click();
    await expect(confetti).toBeVisible();
    await expect(confetti.locator(".confetti-dot")).toHaveCount(50);
    await page.clock.runFor(3_000);
    await expect(confetti).toBeHidden();
  });
});

test.describe("certificate dialog", () => {
  test("shows the tier's certificate: name, price, gold border for premium, icon, Preview stamp, date, serial", async ({
    page,
  }) => {
    await openWithPausedClock(page, "/");
    await card(page, "Premium Nothing").getByRole("button", { name: "View Certificate" }).click();
    const dialog = page.getByRole("dialog", { name: "Certificate Preview - Premium Nothing" });
    await expect(dialog).toBeVisible();
    const certificate = dialog.locator("[data-certificate-card]");
    await expect(certificate).toContainText("Premium Nothing");
    await expect(certificate).toContainText("500 $ZN");
    await expect(certificate).toContainText("Preview");
    await expect(certificate).toContainText(TODAY);
    await expect(certificate.locator("[data-certificate-serial]")).toHaveText(/^NO-[A-Z0-9]{9}$/);
    await expect(certificate).toHaveCSS("border-top-color", GOLD);
    await expect(certificate.locator('[data-icon="gem"]')).toBeVisible();
    await expect(certificate.locator("[data-icon]:visible")).toHaveCount(1);
    await expect(dialog.getByRole("button", { name: "Download Certificate" })).toBeVisible();
    await expect(dialog.getByRole("button", { name: "Close" })).toBeVisible();
  });

  test("a non-premium tier has the accent border, and below 100 $ZN an empty dashed box", async ({ page }) => {
    await page.goto("/");
    await card(page, "A Tiny Bit of Nothing").getByRole("button", { name: "View Certificate" }).click();
    const dialog = page.getByRole("dialog", { name: "Certificate Preview - A Tiny Bit of Nothing" });
    const certificate = dialog.locator("[data-certificate-card]");
    await expect(certificate).toHaveCSS("border-top-color", ACCENT);
    await expect(certificate.locator('[data-icon="empty"]')).toBeVisible();
    await expect(certificate.locator('[data-icon="empty"]')).toHaveCSS("border-top-style", "dashed");
    await expect(certificate).toContainText("25 $ZN");
  });

  test("each price band has its own icon", async ({ page }) => {
    await page.goto("/");
    for (const [tierName, icon] of [
      ["Deluxe Nothing", "star"],
      ["Ultimate Nothing", "crown"],
      ["God-Tier Nothing", "trophy"],
      ["Millionaire's Nothing", "trophy"],
    ] as const) {
      await card(page, tierName).getByRole("button", { name: "View Certificate" }).click();
      const dialog = page.getByRole("dialog", { name: `Certificate Preview - ${tierName}` });
      await expect(dialog.locator(`[data-icon="${icon}"]`)).toBeVisible();
      await expect(dialog.locator("[data-icon]:visible")).toHaveCount(1);
      await dialog.getByRole("button", { name: "Close" }).click();
    }
  });

  for (const [how, close] of [
    ["its Close button", (page: Page) => page.getByRole("dialog").getByRole("button", { name: "Close" }).click()],
    ["Escape", (page: Page) => page.keyboard.press("Escape")],
    ["a click outside it", (page: Page) => page.mouse.click(5, 5)],
  ] as const) {
    test(`closes with ${how} and gives focus back to its button`, async ({ page }) => {
      await page.goto("/");
      const opener = card(page, "Ultimate Nothing").getByRole("button", { name: "View Certificate" });
      await opener.click();
      const dialog = page.getByRole("dialog", { name: "Certificate Preview - Ultimate Nothing" });
      await expect(dialog).toBeVisible();
      await close(page);
      await expect(dialog).toBeHidden();
      await expect(opener).toBeFocused();
    });
  }

  test("a click inside the dialog keeps it open", async ({ page }) => {
    await page.goto("/");
    await card(page, "Deluxe Nothing").getByRole("button", { name: "View Certificate" }).click();
    const dialog = page.getByRole("dialog", { name: "Certificate Preview - Deluxe Nothing" });
    await dialog.locator("[data-certificate-serial]").click();
    await expect(dialog).toBeVisible();
  });

  test("Download opens the certificate in a new window and prints it", async ({ page }) => {
    // The popup is about:blank, written by the page: wrap window.open to catch its print() call.
    await page.addInitScript(() => {
      const open = window.open.bind(window);
      window.open = (...args: Parameters<typeof window.open>) => {
        const popup = open(...args);
        if (popup) {
          popup.print = () => {
            (window as unknown as { printed: string }).printed = popup.document.body.textContent ?? "";
          };
        }
        return popup;
      };
    });
    const { assertNoErrors } = await openPage(page, "/");
    await card(page, "God-Tier Nothing").getByRole("button", { name: "View Certificate" }).click();
    const dialog = page.getByRole("dialog", { name: "Certificate Preview - God-Tier Nothing" });
    const serial = await dialog.locator("[data-certificate-serial]").textContent();

    const popupEvent = page.waitForEvent("popup");
    await dialog.getByRole("button", { name: "Download Certificate" }).click();
    const popup = await popupEvent;
    await expect(popup).toHaveTitle("Certificate of Nothing - God-Tier Nothing");
    await expect(popup.locator("body")).toContainText("God-Tier Nothing");
    await expect(popup.locator("body")).toContainText("10,000 $ZN");
    const printed = await page.evaluate(() => (window as unknown as { printed?: string }).printed);
    expect(printed).toContain("God-Tier Nothing");
    expect(printed).toContain(serial ?? "missing serial");
    assertNoErrors();
  });

  test("Download does nothing when the popup is blocked", async ({ page, context }) => {
    await page.addInitScript(() => {
      window.open = () => null;
    });
    const { assertNoErrors } = await openPage(page, "/");
    await card(page, "Deluxe Nothing").getByRole("button", { name: "View Certificate" }).click();
    const dialog = page.getByRole("dialog", { name: "Certificate Preview - Deluxe Nothing" });
    await dialog.getByRole("button", { name: "Download Certificate" }).click();
    await expect(dialog).toBeVisible();
    expect(context.pages()).toHaveLength(1);
    assertNoErrors();
  });

  test("axe finds no WCAG 2.2 AA violation with the dialog open", async ({ page }) => {
    await page.goto("/");
    await card(page, "Premium Nothing").getByRole("button", { name: "View Certificate" }).click();
    await expect(page.getByRole("dialog")).toBeVisible();
    const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
    expect(
      results.violations.map((violation) => ({
        id: violation.id,
        targets: violation.nodes.map((node) => node.target),
      })),
    ).toEqual([]);
  });
});
