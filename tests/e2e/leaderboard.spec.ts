import { expect, test } from "@playwright/test";

/** The Wall of Fame's order (docs/product.md#2-leaderboard): real patrons before made-up ones. */
test.describe("Wall of Fame order", () => {
  test("real patrons first, compact when empty, then the made-up legends, labelled as a joke", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    // Payments on, one on-chain patron; no auction winner yet.
    await page.route("**/payments/config", (route) => route.fulfill({ json: { enabled: true } }));
    await page.route("**/payments/patrons", (route) =>
      route.fulfill({
        json: {
          patrons: [
            {
              name: "Real Rita",
              total: "100",
              latestSignature:
                "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
              explorerUrl: "https://explorer.solana.com/tx/5VERv8",
            },
          ],
        },
      }),
    );
    await page.route("**/auction/winners", (route) => route.fulfill({ json: { winners: [] } }));
    await page.goto("/leaderboard");
    const patrons = page.getByRole("region", { name: "Verified Patrons" });
    const winners = page.getByRole("region", { name: "Auction Winners" });
    const legends = page.getByRole("region", { name: /Legends of the Void/ });
    await expect(patrons.getByRole("listitem")).toContainText("Real Rita");
    await expect(winners).toContainText("No auction winners yet. Nothing is still up for grabs.");
    await expect(legends).toContainText("Made up");
    await expect(legends).toContainText("these ten patrons, their tiers and their dollars are invented");

    const [patronsBox, winnersBox, legendsBox] = [
      await patrons.boundingBox(),
      await winners.boundingBox(),
      await legends.boundingBox(),
    ];
    if (!patronsBox || !winnersBox || !legendsBox) throw new Error("sections not laid out");
    // In this order, and the real ones start in the phone's first screen.
    expect(patronsBox.y).toBeLessThan(844);
    expect(patronsBox.y + patronsBox.height).toBeLessThanOrEqual(winnersBox.y + 1);
    expect(winnersBox.y + winnersBox.height).toBeLessThanOrEqual(legendsBox.y + 1);
    // An empty list is one line, not a reserved block: heading, lead and message in under 300 px.
    expect(winnersBox.height).toBeLessThan(300);
  });
});
