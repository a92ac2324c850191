/**
 * The Wall of Fame's "Auction Winners" (docs/design.md#6b): where the page asks for them, and the answer's
 * shape. The service (realtime/auctionWinners.ts) answers in it; the page's <auction-winners>
 * element (src/scripts/auctionWinners.ts) validates it, since the service may be on another origin
 * and another version.
 */
import * as v from "valibot";

export const WINNERS_PATH = "/auction/winners";
/** The Wall of Fame lists the last ten rounds' winners, newest first. */
export const WINNERS_LIMIT = 10;

export const WINNERS_UNAVAILABLE_TEXT = "Auction winners are unavailable right now.";
export const NO_WINNERS_TEXT = "No auction winners yet. Nothing is still up for grabs.";

const WinnerSchema = v.object({
  round: v.pipe(v.number(), v.integer(), v.minValue(1)),
  bidderName: v.string(),
  amountCents: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** When the round ended, ISO 8601. */
  endedAt: v.pipe(v.string(), v.isoTimestamp()),
});
export type AuctionWinner = v.InferOutput<typeof WinnerSchema>;

const WinnersSchema = v.object({ winners: v.array(WinnerSchema) });
export type WinnersBody = v.InferOutput<typeof WinnersSchema>;

/** The winners of a GET answer's JSON, or null when it is not the expected shape. */
export function parseWinners(data: unknown): AuctionWinner[] | null {
  const result = v.safeParse(WinnersSchema, data);
  return result.success ? result.output.winners.slice(0, WINNERS_LIMIT) : null;
}

/**
 * The winners' URL from the socket's (config.realtimeUrl): the route sits beside /realtime on the
 * same service, over http(s). ws://host:port/realtime gives http://host:port/auction/winners, wss
 * gives https, and a proxy's path prefix is kept (wss://x/live/realtime: https://x/live/auction/winners).
 * Empty (the socket on the page's own origin): the same-origin path.
 */
export function winnersEndpoint(realtimeUrl: string): string {
  if (!realtimeUrl) return WINNERS_PATH;
  // Relative, so it replaces the socket's last path segment and drops any query.
  const url = new URL(WINNERS_PATH.slice(1), realtimeUrl);
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  return url.href;
}
