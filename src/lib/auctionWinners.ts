/**
 * The Wall of Fame's "Auction Winners" (docs/design.md#6b): where the page asks for them, the answer's
 * shape, and how a winner fills its row. The service (service/auction/winnersRoute.ts) answers in it; the
 * page's <service-list> element (src/scripts/serviceList.ts) checks it with WINNERS_LIST, since the
 * service may be on another origin and another version.
 */
import * as v from "valibot";
import { formatShortDateTime } from "./dates.ts";
import { formatCents } from "./format.ts";
import { serviceEndpoint } from "./serviceEndpoint.ts";
import type { ServiceListKind } from "./serviceList.ts";

export const WINNERS_PATH = "/auction/winners";
/** The Wall of Fame lists the last ten rounds' winners, newest first. */
export const WINNERS_LIMIT = 10;

const WINNERS_UNAVAILABLE_TEXT = "Auction winners are unavailable right now.";
const NO_WINNERS_TEXT = "No auction winners yet. Nothing is still up for grabs.";

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

export const WINNERS_LIST: ServiceListKind<AuctionWinner> = {
  parse: parseWinners,
  fillRow(winner, field) {
    field("name").textContent = winner.bidderName;
    field("amount").textContent = formatCents(winner.amountCents);
    field("round").textContent = String(winner.round);
    // Date and time, as the auction's "Past winners": with hourly rounds one day has many winners.
    const date = field("date");
    date.textContent = formatShortDateTime(winner.endedAt);
    date.setAttribute("datetime", winner.endedAt);
  },
  emptyText: NO_WINNERS_TEXT,
  unavailableText: WINNERS_UNAVAILABLE_TEXT,
  offWhenNotFound: false,
};
