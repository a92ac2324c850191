/**
 * The Wall of Fame's "Auction Winners" (docs/design.md#6b): where the page asks for them, and the answer's
 * shape. The service (realtime/auctionWinners.ts) answers in it; the page's <auction-winners>
 * element (src/scripts/auctionWinners.ts) validates it, since the service may be on another origin
 * and another version.
 */
import * as v from "valibot";
import { serviceEndpoint } from "./serviceEndpoint.ts";

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

/** The winners' URL beside the socket's (serviceEndpoint.ts). */
export function winnersEndpoint(realtimeUrl: string): string {
  return serviceEndpoint(realtimeUrl, WINNERS_PATH);
}
