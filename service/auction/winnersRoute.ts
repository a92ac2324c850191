/**
 * GET /auction/winners: the last rounds' winners for the Wall of Fame (docs/design.md#6b), as
 * `{"winners":[{"round","bidderName","amountCents","endedAt"}]}`, newest first. The pages may be on
 * another origin (a static host, docs/design.md#6d), so the answer carries CORS for the origins whose
 * pages may open the socket (ALLOWED_ORIGINS), and for no other.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { WINNERS_LIMIT, WINNERS_PATH, type WinnersBody } from "../../src/lib/auctionWinners.ts";
import { createCoalescer } from "../coalescedReads.ts";
import { answerJson, refuseUnlessRead } from "../http/answers.ts";
import { isOriginAllowed } from "../http/originPolicy.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import { type Logger, loggedError } from "../logger.ts";
import { visitorAnswered, visitorUnanswered } from "../repeatedWarnings.ts";
import type { BidStore } from "../storage/types.ts";

export interface WinnersRouteOptions {
  store: Pick<BidStore, "winners">;
  /** As ServiceConfig.allowedOrigins: empty is same origin only, `*` any. */
  allowedOrigins: readonly string[];
  logger: Logger;
}

/** Short: a new winner shows within seconds, while browsers and any CDN in front absorb repeat visits. */
const CACHE_CONTROL = "public, max-age=5";

/**
 * The route's handler: true or the answer's promise when the path is its own, false to leave the
 * request to others.
 */
export function createWinnersRoute({ store, allowedOrigins, logger }: WinnersRouteOptions) {
  // Visitors arriving together share one database read.
  const coalesce = createCoalescer();
  return (req: IncomingMessage, res: ServerResponse, { path }: RequestTarget): boolean | Promise<void> => {
    if (path !== WINNERS_PATH) return false;
    // The answer differs by Origin: a shared cache must not hand one origin's answer to another.
    res.setHeader("Vary", "Origin");
    const origin = req.headers.origin;
    // isOriginAllowed lets a request without Origin through (not a browser page): it needs no CORS header.
    if (origin !== undefined && isOriginAllowed(req, allowedOrigins)) {
      res.setHeader("Access-Control-Allow-Origin", origin);
    }
    if (refuseUnlessRead(req, res)) return true;
    return coalesce("winners", () => store.winners(WINNERS_LIMIT)).then(
      (winners) => {
        const body: WinnersBody = {
          winners: winners.map(({ round, bid, endedAt }) => ({
            round,
            bidderName: bid.bidderName,
            amountCents: bid.amountCents,
            endedAt,
          })),
        };
        visitorAnswered(logger);
        answerJson(res, 200, body, { "Cache-Control": CACHE_CONTROL });
      },
      (error: unknown) => {
        // The database is down or the store closed: the page says so; the service carries on.
        visitorUnanswered(logger, "the auction winners", loggedError(error));
        answerJson(res, 503, { error: "unavailable" });
      },
    );
  };
}
