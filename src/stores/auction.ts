/**
 * The page's auction connection: one socket per page, opened when the page is idle, so "New Bid!"
 * reaches a visitor anywhere on the page. Islands read $auction and call placeBid. Built from
 * createAuctionConnection with the browser's WebSocket, clock, console and the page's toaster.
 */
import { config } from "../config.ts";
import type { SocketLike } from "../lib/auction/realtimeClient.ts";
import { realtimeEndpoint } from "../lib/auction/realtimeClient.ts";
import { globalTimers } from "../lib/timers.ts";
import { createAuctionConnection } from "./auctionConnection.ts";
import { showToast } from "./toasts.ts";

const connection = createAuctionConnection({
  url: () => realtimeEndpoint(config.realtimeUrl, window.location),
  createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
  timers: globalTimers,
  log: console,
  notify: showToast,
});

export const {
  $auction,
  $typedBidderName,
  $won,
  connect: connectAuction,
  placeBid,
  send: sendToAuction,
  listen: listenToAuction,
  claimBid,
  answerWithMaximum,
  watchPayment,
  resync: resyncAuction,
} = connection;
