/**
 * The Wall of Fame's "Verified Patrons" (docs/design.md#8): where the page asks for them, the
 * answer's shape, and how a patron fills its row. The service (service/payments/patronRoutes.ts) answers
 * in PatronsBody; the page's <service-list> element (src/scripts/serviceList.ts) checks it with
 * PATRONS_LIST, since the service may be on another origin and another version. Apart from
 * src/lib/payments.ts, which the home page loads, so that the Wall of Fame shares no chunk with it.
 */
import * as v from "valibot";
import type { ServiceListKind } from "./serviceList.ts";

export const PATRONS_PATH = "/payments/patrons";
/** Verified Patrons lists the top ten names by confirmed $ZN. */
export const PATRONS_LIMIT = 10;

/** GET /payments/patrons. */
export interface PatronsBody {
  patrons: Patron[];
}

interface Patron {
  name: string;
  /** Confirmed $ZN in total, user units. */
  total: string;
  latestSignature: string;
  explorerUrl: string;
}

const PATRONS_UNAVAILABLE_TEXT = "Verified patrons are unavailable right now.";
const NO_PATRONS_TEXT = "No verified patrons yet. Be the first to pay real $ZN for nothing.";

/** A total in $ZN as the service formats it: an exact decimal, no sign, no exponent ("100", "40.5"). */
const ZN_AMOUNT = /^\d+(\.\d+)?$/;
/** A transaction signature: 64 bytes in base58. */
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{32,100}$/;
/** A link the page opens: absolute http(s) only, never javascript: or data: from a service gone wrong. */
const WEB_LINK = /^https?:\/\/[^\s"<>]+$/i;

// Only the checks the auction's protocol uses already (regex, minLength): valibot is one chunk shared
// with the home page, so another check here would add to the home page's script.
const PatronSchema = v.object({
  name: v.pipe(v.string(), v.minLength(1)),
  total: v.pipe(v.string(), v.regex(ZN_AMOUNT)),
  latestSignature: v.pipe(v.string(), v.regex(SIGNATURE)),
  explorerUrl: v.pipe(v.string(), v.regex(WEB_LINK)),
});

// Typed against the service's answer: a change to PatronsBody that the page does not follow fails to compile.
const PatronsSchema: v.GenericSchema<unknown, PatronsBody> = v.object({ patrons: v.array(PatronSchema) });
export type VerifiedPatron = PatronsBody["patrons"][number];

/** The patrons of a GET answer's JSON, at most PATRONS_LIMIT, or null when it is not the expected shape. */
export function parsePatrons(data: unknown): VerifiedPatron[] | null {
  const result = v.safeParse(PatronsSchema, data);
  return result.success ? result.output.patrons.slice(0, PATRONS_LIMIT) : null;
}

export const PATRONS_LIST: ServiceListKind<VerifiedPatron> = {
  parse: parsePatrons,
  fillRow(patron, field) {
    field("name").textContent = patron.name;
    field("total").textContent = `${patron.total} $ZN`;
    // The link's hidden words name whose transaction it is: ten "Latest transaction" links read alike.
    field("of").textContent = ` of ${patron.name}`;
    const link = field("link");
    link.setAttribute("href", patron.explorerUrl);
    link.title = patron.latestSignature;
  },
  emptyText: NO_PATRONS_TEXT,
  unavailableText: PATRONS_UNAVAILABLE_TEXT,
  // Payments off, the page does not ask (VerifiedPatrons.astro); a service that answers 404 all the
  // same (payments turned off since) keeps the section hidden too.
  offWhenNotFound: true,
};
