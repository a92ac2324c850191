/**
 * Whether the page offers real purchases, and who has bought (docs/design.md#8):
 *
 *   GET /payments/config       {"enabled","available"}: whether the page offers real purchases
 *   GET /payments/patrons      Verified Patrons, the top 10 names by confirmed $ZN
 *
 * With payments off these two still answer (createPaymentsOffRoute); nothing else does.
 */
import type { ServerResponse } from "node:http";
import { PAYMENTS_CONFIG_PATH, type PaymentErrorBody, type PaymentsConfigBody } from "../../src/lib/payments.ts";
import { PATRONS_LIMIT, PATRONS_PATH, type PatronsBody } from "../../src/lib/verifiedPatrons.ts";
import { answerJson, refuseUnlessRead } from "../http/answers.ts";
import { formatUnits } from "./amounts.ts";
import {
  allowOrigin,
  type PaymentRoute,
  type PaymentRoutesOptions,
  preflight,
  type RouteShared,
  refuse,
} from "./routeShared.ts";
import { explorerUrl } from "./settings.ts";

/** Verified Patrons change only with a confirmation: a few seconds old is fresh enough. */
const PATRONS_CACHE_MS = 5_000;
const PATRONS_CACHE_CONTROL = "public, max-age=5";

/** The patrons' one refusal, as it is sent. */
export const PATRON_REFUSALS = {
  paymentsOff: { error: "payments_off" },
} as const satisfies Record<string, PaymentErrorBody>;

/** Payments off: only /payments/config answers (enabled false); everything else is as before payments. */
export function createPaymentsOffRoute({ allowedOrigins }: Pick<PaymentRoutesOptions, "allowedOrigins">): PaymentRoute {
  return (req, res, target) => {
    if (target.path !== PAYMENTS_CONFIG_PATH && target.path !== PATRONS_PATH) return false;
    const allowed = allowOrigin(req, res, allowedOrigins);
    if (req.method === "OPTIONS") preflight(res, allowed);
    else if (refuseUnlessRead(req, res)) return true;
    else if (target.path === PATRONS_PATH) {
      // The Wall of Fame asks on every visit, maybe from another origin: a 404 it may read (CORS),
      // which hides its Verified Patrons, rather than the site's logged "page not found".
      refuse(res, 404, PATRON_REFUSALS.paymentsOff);
    } else answerJson(res, 200, { enabled: false, available: false } satisfies PaymentsConfigBody);
    return true;
  };
}

export interface PatronRoutes {
  /** GET /payments/config. */
  config(res: ServerResponse): void;
  /** GET /payments/patrons. */
  patrons(res: ServerResponse): void;
}

export function createPatronRoutes(
  options: Pick<PaymentRoutesOptions, "settings" | "store" | "available" | "slow" | "now">,
  { coalesce, failed }: RouteShared,
): PatronRoutes {
  const { settings, store } = options;
  let patronsCache: { body: PatronsBody; at: number } | null = null;

  async function answerPatrons(res: ServerResponse) {
    const at = options.now();
    if (!patronsCache || at - patronsCache.at >= PATRONS_CACHE_MS || at < patronsCache.at) {
      const rows = await coalesce("patrons", () => store.patrons(settings.mint, PATRONS_LIMIT));
      patronsCache = {
        at,
        body: {
          patrons: rows.map((row) => ({
            name: row.name,
            total: formatUnits(row.totalBaseUnits, row.decimals),
            latestSignature: row.latestSignature,
            explorerUrl: explorerUrl(settings.explorerTxUrl, row.latestSignature),
          })),
        },
      };
    }
    answerJson(res, 200, patronsCache.body, { "Cache-Control": PATRONS_CACHE_CONTROL });
  }

  return {
    config(res) {
      answerJson(res, 200, {
        enabled: true,
        available: options.available(),
        ...(options.slow() ? { slow: true } : {}),
        recipient: settings.recipient,
      } satisfies PaymentsConfigBody);
    },
    patrons(res) {
      answerPatrons(res).catch((error: unknown) => failed(res, "reading the patrons", error));
    },
  };
}
