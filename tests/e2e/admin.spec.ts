import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";

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
  const signOut = page.getByRole("button", { name: "Sign out" });
  await expect(signOut).toBeVisible();
  await expectNoAxeViolations(page);

  await page.keyboard.press("Tab");
  await expect(signOut).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
  expect(violations).toEqual([]);
});
