/**
 * The page's maximum bid over its one auction connection (src/stores/auction.ts), with the
 * browser's storage, randomness and clock. Imported by the auction island only, so none of it
 * loads before a visitor reaches the auction.
 */
import { globalTimers } from "../lib/timers.ts";
import { $auction, $typedBidderName, answerWithMaximum, claimBid, listenToAuction, sendToAuction } from "./auction.ts";
import { createMaximumBid } from "./maximumBid.ts";

export const { $maximum, setMaximum } = createMaximumBid({
  connection: { $auction, send: sendToAuction, listen: listenToAuction, claimBid, answerWithMaximum },
  storage: () => localStorage,
  fillRandom: (bytes) => crypto.getRandomValues(bytes),
  timers: globalTimers,
});

// A reloaded page whose maximum still stands bids under its name: the name field starts with it,
// and the maximum's automatic bids raise no "New Bid!" here.
$maximum.subscribe((maximum) => {
  if (maximum?.bidderName && $typedBidderName.get().trim() === "") $typedBidderName.set(maximum.bidderName);
});
