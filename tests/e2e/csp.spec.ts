import { expect, type Page, test } from "@playwright/test";
import { NEWS_JOKES } from "../../src/data/newsJokes.ts";
import { policyDirectives } from "../harness/policyDirectives.ts";
import { openWithPausedClock, stubRandom } from "./fixtures.ts";
import { watchViolations } from "./harness/cspViolations.ts";

/**
 * The pages work under the service's Content-Security-Policy: every widget is used and Chromium
 * reports no violation, neither as a securitypolicyviolation event nor on the console. The policy
 * is then shown to be live: an injected inline script without a matching hash does not run.
 */

/** Scrolls to a control of a client:visible island and waits until it is hydrated (enabled). */
async function reach(locator: ReturnType<Page["getByRole"]>) {
  await locator.scrollIntoViewIfNeeded();
  await expect(locator).toBeEnabled();
}

test.describe("Content-Security-Policy", () => {
  test("the pages send the policy: hashes for inline scripts, embed hosts only for frames", async ({ page }) => {
    const response = await page.goto("/");
    const policy = response?.headers()["content-security-policy"] ?? "";
    const parsed = policyDirectives(policy);

    const scripts = parsed.get("script-src") ?? [];
    expect(scripts).toContain("'self'");
    for (const source of scripts) expect(source).toMatch(/^'self'$|^'sha256-[A-Za-z0-9+/]+={0,2}'$/);
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(parsed.get("default-src")).toEqual(["'self'"]);
    // And the phone's wallet app on its loopback socket (Mobile Wallet Adapter, Android).
    expect(parsed.get("connect-src")).toEqual(["'self'", "ws://localhost:*", "http://localhost"]);
    expect(parsed.get("object-src")).toEqual(["'none'"]);
    expect(parsed.get("frame-ancestors")).toEqual(["'none'"]);

    // frame-src names exactly the hosts that the click-to-load facades say they load from.
    const facadeHosts = await page
      .getByText(/^Loads from \S+ when you click$/)
      .allTextContents()
      .then((texts) => [...new Set(texts.map((text) => text.split(" ")[2]))].sort());
    expect(facadeHosts.length).toBeGreaterThan(0);
    expect((parsed.get("frame-src") ?? []).map((origin) => new URL(origin).host).sort()).toEqual(facadeHosts);

    const headers = response?.headers() ?? {};
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");

    for (const path of ["/leaderboard", "/no-such-page"]) {
      const other = await page.request.get(path);
      expect(other.headers()["content-security-policy"], path).toBe(policy);
    }
  });

  test("the home page reports no violation with every widget used", async ({ page, context }) => {
    test.slow();
    const violations = await watchViolations(context);
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    page.on("dialog", (dialog) => void dialog.accept());
    await stubRandom(page, 0);
    await openWithPausedClock(page, "/");
    // Idle islands (the toaster, the chatbot button, the auction connection) start on idle callbacks.
    await page.clock.runFor(500);

    await test.step("the first news pop-up, 10 s after load", async () => {
      await page.clock.runFor(9_500);
      const joke = NEWS_JOKES[0];
      await expect(page.getByRole("region", { name: "Nothing News" })).toContainText(joke?.title ?? "missing joke");
    });

    await test.step("copy button and tooltip", async () => {
      const copy = page.getByRole("button", { name: "Copy contract address" });
      await copy.hover();
      await page.clock.runFor(700);
      await copy.click();
      await expect(copy).toContainText("Copied!");
    });

    await test.step("promo video and price chart facades (their hosts do not resolve here)", async () => {
      await page
        .getByRole("button", { name: /^Play video: / })
        .first()
        .click();
      await page.getByRole("button", { name: /^Load .*chart/ }).click();
      await expect(page.locator("iframe")).toHaveCount(2);
    });

    await test.step("lottery wheel", async () => {
      const spin = page.getByRole("button", { name: "Spin for Nothing!" });
      await reach(spin);
      await spin.click();
      await page.clock.runFor(2_000);
      await expect(page.getByRole("button", { name: "No Spins Left" })).toBeVisible();
    });

    await test.step("fortune", async () => {
      const consult = page.getByRole("button", { name: "Consult the Crystal Ball" });
      await reach(consult);
      await consult.click();
      await page.clock.runFor(2_000);
      await expect(page.getByRole("button", { name: "Consult Again" })).toBeVisible();
    });

    await test.step("Buy Nothing, and the certificate: open, download, close", async () => {
      const tier = page.locator("#products article").first();
      await tier.getByRole("button", { name: "Buy Nothing" }).click();
      await tier.getByRole("button", { name: "View Certificate" }).click();
      const dialog = page.getByRole("dialog", { name: /^Certificate Preview/ });
      await expect(dialog).toBeVisible();
      const popupOpened = page.waitForEvent("popup");
      await dialog.getByRole("button", { name: "Download Certificate" }).click();
      const popup = await popupOpened;
      await expect(popup.locator("body")).toContainText("Certificate");
      expect(await violations.events(popup)).toEqual([]);
      await popup.close();
      await dialog.getByRole("button", { name: "Close" }).click();
      await expect(dialog).toBeHidden();
    });

    await test.step("calculator", async () => {
      const calculator = page.locator("#calculator");
      const seven = calculator.getByRole("button", { name: "7", exact: true });
      await reach(seven);
      for (const key of ["7", "+", "7", "×", "7", "=", "±", "%", "C"]) {
        await calculator.getByRole("button", { name: key, exact: true }).click();
      }
    });

    await test.step("CAPTCHA", async () => {
      const first = page.getByRole("button", { name: "Square 1", exact: true });
      await reach(first);
      await first.click();
      await page.getByRole("button", { name: "Square 5", exact: true }).click();
      await page.getByRole("button", { name: "Verify" }).click();
      await page.clock.runFor(2_000);
      await expect(page.getByRole("button", { name: "Try Again" })).toBeVisible();
    });

    await test.step("auction bid over the socket", async () => {
      const place = page.getByRole("button", { name: "Place Bid" });
      await reach(place);
      await page.getByLabel("Your Name").fill(`CSP ${Date.now() % 1_000_000}`);
      const placeholder = (await page.getByLabel("Bid Amount").getAttribute("placeholder")) ?? "$0";
      const amount = Number(placeholder.replace(/[$,]/g, "")) + 1;
      await page.getByLabel("Bid Amount").fill(amount.toFixed(2));
      await place.click();
      await expect(page.getByRole("region", { name: "Notifications" })).toContainText("Bid Placed!");
    });

    await test.step("NothingBot: open, send, reply", async () => {
      await page.getByRole("button", { name: "Open NothingBot" }).click();
      const panel = page.getByRole("dialog", { name: "NothingBot" });
      await expect(panel).toBeVisible();
      await panel.getByRole("textbox", { name: "Message NothingBot" }).fill("what do I get?");
      await panel.getByRole("button", { name: "Send" }).click();
      await page.clock.runFor(3_000);
      await expect(panel.getByRole("log")).toContainText("what do I get?");
      // Escape, not the close button: the bid's toast (held by the paused clock) may sit over it.
      await page.keyboard.press("Escape");
      await expect(panel).toBeHidden();
    });

    expect(await violations.events(page)).toEqual([]);
    expect(violations.console).toEqual([]);
  });

  for (const path of ["/leaderboard", "/no-such-page"]) {
    test(`${path} reports no violation`, async ({ page, context }) => {
      const violations = await watchViolations(context);
      const response = await page.goto(path);
      expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'self'/);
      await page.mouse.wheel(0, 10_000);
      await page.waitForLoadState("networkidle");
      expect(await violations.events(page)).toEqual([]);
      expect(violations.console).toEqual([]);
    });
  }

  test("the policy is live: an unhashed inline script and style, a foreign frame and fetch are refused", async ({
    page,
    context,
  }) => {
    const violations = await watchViolations(context);
    await page.goto("/");
    const outcome = await page.evaluate(async () => {
      const script = document.createElement("script");
      script.textContent = "window.injectedScriptRan = true;";
      document.body.append(script);
      const style = document.createElement("style");
      style.textContent = "body { outline: 7px solid rgb(1, 2, 3); }";
      document.head.append(style);
      const frame = document.createElement("iframe");
      frame.src = "https://elsewhere.example/";
      document.body.append(frame);
      const fetched = await fetch("https://elsewhere.example/").then(
        () => "fetched",
        () => "refused",
      );
      return {
        ran: (window as unknown as { injectedScriptRan?: boolean }).injectedScriptRan ?? false,
        outline: getComputedStyle(document.body).outlineColor,
        fetched,
      };
    });
    expect(outcome.ran).toBe(false);
    expect(outcome.outline).not.toBe("rgb(1, 2, 3)");
    expect(outcome.fetched).toBe("refused");
    // The violation events fire as the browser gets to each refusal: wait for them, bounded.
    const directivesHit = async () => (await violations.events(page)).map((violation) => violation.directive).sort();
    await expect.poll(directivesHit).toEqual(["connect-src", "frame-src", "script-src-elem", "style-src-elem"]);
    await expect.poll(() => violations.console.length).toBeGreaterThanOrEqual(4);
  });
});
