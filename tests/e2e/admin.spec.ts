import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { REFRESH_MS } from "../../service/console/pulse.ts";
import { E2E_EXPECT_MS } from "../harness/timeBudgets.ts";
import { auctionForm } from "./fixtures.ts";

/** The password whose hash playwright.config.ts gives the e2e server. */
const ADMIN_E2E_PASSWORD = "the e2e operator's password";
const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];

async function expectNoAxeViolations(page: Page) {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  expect(violations.map((violation) => violation.id)).toEqual([]);
}

test("the operator signs in and out by keyboard alone, axe-clean and under the console's own policy", async ({
  page,
}) => {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.goto("/admin");
  await expect(page.getByRole("heading", { level: 1, name: "Operator console" })).toBeVisible();
  await expectNoAxeViolations(page);

  // The field has focus on arrival; a wrong password is announced and the field keeps working.
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type("not the password");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("alert")).toHaveText("Wrong password");
  await expectNoAxeViolations(page);

  await page.getByLabel("Password").focus();
  await page.keyboard.type(ADMIN_E2E_PASSWORD);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/admin$/);
  const signOut = page.getByRole("button", { name: "Sign out", exact: true });
  await expect(signOut).toBeVisible();
  await expectNoAxeViolations(page);

  await page.keyboard.press("Tab");
  await expect(signOut).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();

  // Signed in again, "Sign out everywhere" is the next stop, and says what it did.
  await page.getByLabel("Password").fill(ADMIN_E2E_PASSWORD);
  await page.keyboard.press("Enter");
  await expect(signOut).toBeVisible();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Sign out everywhere" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("status")).toHaveText("Every session is signed out.");
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
  await expectNoAxeViolations(page);
  expect(violations).toEqual([]);
});

test("the operator hides a bid by keyboard from the live console: its HTML name is text, and the visitor's page loses it", async ({
  browser,
}) => {
  const violations: string[] = [];
  const watch = (page: Page) =>
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
  const operatorContext = await browser.newContext();
  const visitorContext = await browser.newContext();
  try {
    const console = await operatorContext.newPage();
    watch(console);
    await console.goto("/admin");
    await console.getByLabel("Password").fill(ADMIN_E2E_PASSWORD);
    await console.getByRole("button", { name: "Sign in" }).click();
    await expect(console.getByRole("heading", { level: 2, name: "Bids" })).toBeVisible();

    const visitor = await visitorContext.newPage();
    watch(visitor);
    await visitor.goto("/");
    const form = auctionForm(visitor);
    await form.section.scrollIntoViewIfNeeded();
    await expect(form.live).toBeVisible();
    const name = `<b>Troll</b> ${test.info().workerIndex}-${Date.now() % 100_000}`;
    const placeholder = (await form.amount.getAttribute("placeholder")) ?? "";
    await form.name.fill(name);
    await form.amount.fill(placeholder.replace(/[$,]/g, ""));
    await form.submit.click();
    await expect(form.recent).toContainText(name);

    // Live: the console lists the bid without a reload, its name as text, no <b> element.
    const row = console.getByRole("row").filter({ has: console.getByRole("cell", { name, exact: true }) });
    await expect(row).toBeVisible();
    await expect(console.locator("td b")).toHaveCount(0);
    const bidId = Number((await row.getAttribute("id"))?.replace("bid-", ""));
    await expectNoAxeViolations(console);

    await console.getByLabel(`Reason for bid ${bidId} (optional)`).focus();
    await console.keyboard.type("a test troll");
    await console.keyboard.press("Tab");
    await expect(console.getByRole("button", { name: `Hide bid ${bidId}` })).toBeFocused();
    await console.keyboard.press("Enter");
    await expect(console.getByRole("status")).toHaveText(`Bid ${bidId} is hidden.`);
    await expect(console.getByRole("button", { name: `Restore bid ${bidId}` })).toBeVisible();
    await expect(console.getByRole("cell", { name: "a test troll" })).toBeVisible();

    // From the Recent Bids and the leader line alike (within a second on a quiet machine), and the
    // card says why the leader changed: the troll's bid was the highest.
    await expect(form.section).not.toContainText(name);
    await expect(form.section.getByRole("status")).toHaveText("The leading bid was removed by a moderator");
    await expectNoAxeViolations(console);
    expect(violations).toEqual([]);
  } finally {
    await operatorContext.close();
    await visitorContext.close();
  }
});

test("the console's pulse charts the bids with a text equivalent, axe-clean, and follows new bids live", async ({
  browser,
}) => {
  const operatorContext = await browser.newContext();
  const visitorContext = await browser.newContext();
  try {
    const console = await operatorContext.newPage();
    // The chart is markup the console's policy already allows: no style attribute, no script of its own.
    const violations: string[] = [];
    console.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    await console.goto("/admin");
    await console.getByLabel("Password").fill(ADMIN_E2E_PASSWORD);
    await console.getByRole("button", { name: "Sign in" }).click();
    const pulse = console.locator("#pulse");
    await expect(pulse.getByRole("heading", { level: 2, name: "Pulse" })).toBeVisible();
    await expect(
      pulse.getByRole("img", { name: /^Bar chart of bids per minute over the last 24 hours/ }),
    ).toBeVisible();
    // The e2e server has payments off: said in words, no empty chart.
    await expect(pulse.getByText("Sales per hour: payments are off.")).toBeVisible();
    await expect(pulse.getByRole("img", { name: /sales/ })).toHaveCount(0);

    // The text equivalent: a summary under the chart, and every clock hour in a table.
    const lastHour = pulse.locator("#pulse-bids-hour");
    const bidsInLastHour = async () =>
      Number(/^(\d+) in the last hour$/.exec((await lastHour.textContent()) ?? "")?.[1] ?? 0);
    const before = await bidsInLastHour();
    await pulse.getByText("Hour by hour").click();
    const hours = pulse.getByRole("table", { name: /^Bids per hour/ });
    await expect(hours.locator("tbody tr")).toHaveCount(24);
    await expectNoAxeViolations(console);

    // Two bids from a visitor reach the open console without a reload, within the pulse's refresh.
    await console.evaluate(() => {
      (window as { notReloaded?: boolean }).notReloaded = true;
    });
    const visitor = await visitorContext.newPage();
    await visitor.goto("/");
    const form = auctionForm(visitor);
    await form.section.scrollIntoViewIfNeeded();
    await expect(form.live).toBeVisible();
    for (const n of [1, 2]) {
      const name = `Pulse ${n} ${test.info().workerIndex}-${Date.now() % 100_000}`;
      const placeholder = (await form.amount.getAttribute("placeholder")) ?? "";
      await form.name.fill(name);
      await form.amount.fill(placeholder.replace(/[$,]/g, ""));
      await form.submit.click();
      await expect(form.recent).toContainText(name);
    }
    await expect.poll(bidsInLastHour, { timeout: REFRESH_MS + E2E_EXPECT_MS }).toBeGreaterThanOrEqual(before + 2);
    await expect(lastHour).toHaveText(/^\d+ in the last hour$/);
    expect(await console.evaluate(() => (window as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // The swap keeps the table open as the operator left it.
    await expect(pulse.locator("details#pulse-hours")).toHaveAttribute("open", "");
    await expectNoAxeViolations(console);
    expect(violations).toEqual([]);
  } finally {
    await operatorContext.close();
    await visitorContext.close();
  }
});
