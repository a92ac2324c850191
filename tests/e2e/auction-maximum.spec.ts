import AxeBuilder from "@axe-core/playwright";
import { type BrowserContext, expect, test } from "@playwright/test";
import { isBigJump, nextWinningCents } from "../../src/lib/auction/bidRules.ts";
import { nextBidCents, openAuction, toast } from "./fixtures.ts";

// The e2e server's one auction is shared with the other auction specs: this file runs in their
// project, one test at a time, and bids above whatever is highest when it starts.
test.describe.configure({ mode: "default" });

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"];
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
const dollars = (cents: number) => (cents / 100).toFixed(2);
const unique = (prefix: string) => `${prefix} ${test.info().workerIndex}-${Date.now() % 1_000_000}`;

/** Every way an amount could be written on a page or in a frame: 988655, 9886.55, $9,886.55. */
const spellings = (cents: number) => [String(cents), dollars(cents), money.format(cents / 100)];

test("a maximum bids for its owner, who alone sees it, across a reload", async ({ browser }) => {
  const contexts: BrowserContext[] = [await browser.newContext(), await browser.newContext()];
  try {
    const [alicePage, bobPage] = await Promise.all(contexts.map((context) => context.newPage()));
    if (!alicePage || !bobPage) throw new Error("no pages");
    // Every frame Bob's page receives, from the first socket on.
    const bobFrames: string[] = [];
    bobPage.on("websocket", (socket) => socket.on("framereceived", (frame) => bobFrames.push(String(frame.payload))));
    const alice = await openAuction(alicePage);
    const bob = await openAuction(bobPage);
    const aliceName = unique("Alice");
    const bobName = unique("Bob");

    // A maximum far above the price, with odd cents no bid of this test makes.
    const startCents = await nextBidCents(alicePage);
    const maximumCents = startCents + 987_654;
    const maximumText = money.format(maximumCents / 100);
    await alice.name.fill(aliceName);
    await alice.maximum.fill(dollars(maximumCents));
    // By keyboard: from the field to its button.
    await alice.maximum.press("Tab");
    await expect(alice.setMaximum).toBeFocused();
    await alicePage.keyboard.press("Enter");
    await expect(toast(alicePage, "Maximum Set")).toContainText(`up to ${maximumText}`);
    await expect(alice.maximum).toHaveValue("");
    await expect(alice.section).toContainText(`Your maximum ${maximumText} — you lead`);
    // The maximum opened with a bid that leads, in Alice's name, seen by Bob as any bid.
    await expect(bob.section).toContainText(`Leading: ${aliceName}`);

    // Bob bids the smallest winning amount: Alice's maximum answers it at once, one step above.
    const bobCents = await nextBidCents(bobPage);
    expect(bobCents).toBeLessThan(maximumCents);
    const automaticCents = nextWinningCents(bobCents);
    await bob.name.fill(bobName);
    await bob.amount.fill(dollars(bobCents));
    await bob.amount.press("Enter");
    await expect(toast(bobPage, "Outbid by an automatic bid")).toBeVisible();
    const bobTop = bob.recent.getByRole("listitem").first();
    await expect(bobTop).toContainText(aliceName);
    await expect(bobTop).toContainText(money.format(automaticCents / 100));
    await expect(bob.section).toContainText(`Leading: ${aliceName}`);
    // Once the automatic bid is shown: Bob's bid never led, so its one toast is the one above.
    await expect(toast(bobPage, "Bid Placed!")).toHaveCount(0);
    await expect(toast(bobPage, "You've been outbid")).toHaveCount(0);
    await expect(alice.section).toContainText(`Your maximum ${maximumText} — you lead`);

    // Bob never learns the maximum: not in his page's text or markup, not in any frame he received.
    // The checks can fail: the frames hold the automatic bid, and Alice's page the maximum.
    expect(bobFrames.some((frame) => frame.includes(`"amountCents":${automaticCents}`))).toBe(true);
    expect(await alicePage.locator("body").innerText()).toContain(maximumText);
    const bobText = `${await bobPage.locator("body").innerText()}\n${await bobPage.content()}`;
    for (const spelling of spellings(maximumCents)) {
      expect(bobText.includes(spelling), `Bob's page shows ${spelling}`).toBe(false);
      expect(
        bobFrames.filter((frame) => frame.includes(spelling)),
        `frames to Bob with ${spelling}`,
      ).toEqual([]);
    }

    // The form with the maximum and its owner's line is clean for axe.
    const results = await new AxeBuilder({ page: alicePage }).include("#place-bid").withTags(WCAG_TAGS).analyze();
    expect(results.violations).toEqual([]);

    // Alice loads the page again: it asks the service with her secret and shows her maximum again.
    const reloaded = await openAuction(alicePage);
    await expect(reloaded.section).toContainText(`Your maximum ${maximumText} — you lead`);
    await expect(reloaded.name).toHaveValue(aliceName);

    // Bob goes above the maximum: Alice's line says so.
    const aboveCents = maximumCents + 100;
    await bob.amount.fill(dollars(aboveCents));
    await bob.amount.press("Enter");
    // A big jump asks first; the same amount again confirms it.
    if (isBigJump(aboveCents, automaticCents)) await bob.amount.press("Enter");
    await expect(toast(bobPage, "Bid Placed!")).toBeVisible();
    await expect(reloaded.section).toContainText(`Your maximum ${maximumText} was outbid`);
    alice.assertNoErrors();
    bob.assertNoErrors();
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
  }
});
