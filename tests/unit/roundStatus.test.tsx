import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { RoundStatus } from "../../src/islands/AuctionRound.tsx";

const text = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

describe("the round line", () => {
  it("counts down with no word of the soft close while the round is open", () => {
    expect(text(renderToStaticMarkup(<RoundStatus phase="open" msLeft={65_000} softCloseSeconds={30} />))).toBe(
      "Ends in 1:05",
    );
  });

  it("in the soft-close window says that a late bid extends the round, and by how much", () => {
    expect(text(renderToStaticMarkup(<RoundStatus phase="going" msLeft={22_000} softCloseSeconds={30} />))).toBe(
      "Ends in 0:22 Going, going… Late bids extend the round: it ends 30 s after the latest bid.",
    );
  });

  it("once the time is up here, waits for the service's word without promising an extension", () => {
    expect(text(renderToStaticMarkup(<RoundStatus phase="closing" msLeft={0} softCloseSeconds={30} />))).toBe(
      "Ends in 0:00 Going, going…",
    );
  });
});
