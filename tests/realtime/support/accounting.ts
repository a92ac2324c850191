/**
 * Accounting for the fault tests (issue 6): every bid tried is recorded with a name used once and
 * its outcome; at the end the database and every page are checked against that record.
 *
 *   const ledger = createLedger("kill");
 *   const bidding = startSteadyBidding(ledger, pages, { intervalMs: 40, maxBids: 400 });
 *   ... the fault ...
 *   await bidding.stop();
 *   const audit = await auditAuction(ledger, pages, databaseUrl, { crashes: 0 });
 *   console.log(audit.line); expect(audit.problems).toEqual([]);
 *
 * The checks: every acknowledged bid is stored exactly once, as acknowledged; no name is stored
 * twice and nothing is stored that was never sent; a refused bid (other than unavailable) is not
 * stored; an unanswered or unavailable one at most once; and every page received every stored bid
 * above its first opening's newest (its own through their acknowledgement, or otherwise; or passed
 * over by a full conflated frame, docs/design.md#10) and no bid twice, in strictly rising id order.
 */
import postgres from "postgres";
import type { BidOutcome, Page } from "./pageClient.ts";
import { waitFor } from "./stores.ts";

interface BidAttempt {
  name: string;
  amountCents: number;
  page: string;
  sentAt: number;
  settledAt?: number;
  outcome?: BidOutcome;
}

export interface Ledger {
  readonly label: string;
  readonly attempts: BidAttempt[];
  /** Amounts rise by one cent per bid from every page: unique, and mostly above the last accepted. */
  nextAmountCents(): number;
}

export function createLedger(label: string): Ledger {
  let cents = 100;
  return { label, attempts: [], nextAmountCents: () => cents++ };
}

/** Places one bid under `name` (used once) at the ledger's next amount, recording it and its outcome. */
export async function placeRecorded(ledger: Ledger, page: Page, name: string): Promise<BidOutcome> {
  const attempt: BidAttempt = {
    name,
    amountCents: ledger.nextAmountCents(),
    page: page.label,
    sentAt: performance.now(),
  };
  ledger.attempts.push(attempt);
  attempt.outcome = await page.placeBid(attempt.name, attempt.amountCents);
  attempt.settledAt = performance.now();
  return attempt.outcome;
}

export interface SteadyBidding {
  /** Stops sending and waits for every answer (bounded by the page's acknowledgement timeout). */
  stop(): Promise<void>;
}

/**
 * Each page places a bid, waits for its answer, pauses intervalMs and goes again while it is live:
 * a steady flow like visitors bidding, at most maxBids in all.
 */
export function startSteadyBidding(
  ledger: Ledger,
  pages: Page[],
  options: { intervalMs: number; maxBids: number },
): SteadyBidding {
  let stopping = false;
  let sequence = 0;
  const loops = pages.map(async (page) => {
    while (!stopping && ledger.attempts.length < options.maxBids) {
      if (page.isLive()) {
        sequence += 1;
        await placeRecorded(ledger, page, `${ledger.label} ${page.label} ${sequence}`);
      }
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/**
 * Places bids through the first live page, each recorded in the ledger like any other, until one
 * is accepted (a page may still be reconnecting after its fault): its id, or null at the deadline.
 */
async function placeBarrierBid(ledger: Ledger, pages: Page[], timeoutMs: number): Promise<number | null> {
  const deadline = performance.now() + timeoutMs;
  for (let tries = 1; performance.now() < deadline; tries++) {
    const page = pages.find((candidate) => candidate.isLive());
    if (page) {
      const outcome = await placeRecorded(ledger, page, `${ledger.label} barrier ${tries}`);
      if (outcome.kind === "accepted") return outcome.bid.id;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

interface StoredRow {
  id: number;
  name: string;
  amountCents: number;
}

export async function readStoredBids(databaseUrl: string): Promise<StoredRow[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`
      SELECT id, bidder_name, (amount * 100)::bigint AS amount_cents FROM auction_bids ORDER BY id`;
    return rows.map((row) => ({
      id: Number(row.id),
      name: String(row.bidder_name),
      amountCents: Number(row.amount_cents),
    }));
  } finally {
    await sql.end();
  }
}

export interface Audit {
  problems: string[];
  counts: {
    tried: number;
    acked: number;
    unavailable: number;
    tooLow: number;
    unanswered: number;
    storedUnacked: number;
    lost: number;
    duplicated: number;
    pages: number;
    reconnects: number;
    crashes: number;
  };
  /** One line for the test log and the README's Reliability table. */
  line: string;
}

/**
 * Places one more bid as a barrier and waits until every page has its broadcast (bounded), then
 * checks everything. Each socket gets bids in id order, so once a page has the barrier's broadcast,
 * every earlier bid, and any late duplicate of one, has reached it too: no pause to guess at.
 */
export async function auditAuction(
  ledger: Ledger,
  pages: Page[],
  databaseUrl: string,
  options: { crashes: number; timeoutMs?: number },
): Promise<Audit> {
  const problems: string[] = [];
  const timeoutMs = options.timeoutMs ?? 20_000;
  const barrier = await placeBarrierBid(ledger, pages, timeoutMs);
  if (barrier === null) {
    problems.push("no page got its barrier bid accepted: the pages' view is unchecked");
  } else {
    await waitFor(
      `every page to receive the barrier bid ${barrier}`,
      () => pages.every((page) => page.received.some((bid) => bid.id === barrier)),
      timeoutMs,
    ).catch(() => {
      // The audit below says which page is missing what.
    });
  }
  const rows = await readStoredBids(databaseUrl);
  const counts: Audit["counts"] = {
    tried: 0,
    acked: 0,
    unavailable: 0,
    tooLow: 0,
    unanswered: 0,
    storedUnacked: 0,
    lost: 0,
    duplicated: 0,
    pages: pages.length,
    reconnects: 0,
    crashes: options.crashes,
  };

  const rowsByName = new Map<string, StoredRow[]>();
  for (const row of rows) rowsByName.set(row.name, [...(rowsByName.get(row.name) ?? []), row]);
  const attemptsByName = new Map(ledger.attempts.map((attempt) => [attempt.name, attempt]));
  for (const [name, stored] of rowsByName) {
    if (stored.length > 1) {
      counts.duplicated += stored.length - 1;
      problems.push(`"${name}" is stored ${stored.length} times`);
    }
    if (!attemptsByName.has(name)) problems.push(`"${name}" is stored but was never sent`);
  }

  for (const attempt of ledger.attempts) {
    const stored = rowsByName.get(attempt.name) ?? [];
    const outcome = attempt.outcome;
    if (outcome?.kind !== "not_sent") counts.tried += 1;
    if (outcome?.kind === "accepted") {
      counts.acked += 1;
      const row = stored[0];
      if (!row) {
        counts.lost += 1;
        problems.push(`acknowledged "${attempt.name}" (id ${outcome.bid.id}) is not stored`);
      } else if (row.id !== outcome.bid.id || row.amountCents !== attempt.amountCents) {
        problems.push(`acknowledged "${attempt.name}" is stored as id ${row.id}, ${row.amountCents} cents`);
      }
    } else if (outcome?.kind === "not_sent") {
      if (stored.length > 0) problems.push(`"${attempt.name}" was never sent but is stored`);
    } else if (outcome?.kind === "refused" && outcome.code !== "unavailable") {
      if (outcome.code === "too_low") counts.tooLow += 1;
      else problems.push(`"${attempt.name}" was refused with ${outcome.code}`);
      if (stored.length > 0) problems.push(`"${attempt.name}" was refused ${outcome.code} but is stored`);
    } else {
      // Unavailable or unanswered: the database may or may not have it, but at most once.
      if (outcome?.kind === "refused") counts.unavailable += 1;
      else if (outcome?.kind === "no_answer" || outcome === undefined) counts.unanswered += 1;
      if (stored.length > 0) counts.storedUnacked += 1;
    }
  }

  for (const page of pages) {
    counts.reconnects += page.reopenings;
    const top = page.firstTop;
    if (top === null) {
      problems.push(`page ${page.label} never got its opening`);
      continue;
    }
    if (page.unexpectedSnapshots > 0) {
      problems.push(`page ${page.label} got ${page.unexpectedSnapshots} snapshot(s) instead of a resume`);
    }
    const expected = rows.filter((row) => row.id > top).map((row) => row.id);
    const got = page.received.map((bid) => bid.id);
    for (let i = 1; i < got.length; i++) {
      if ((got[i] as number) <= (got[i - 1] as number)) {
        problems.push(`page ${page.label} received id ${got[i]} after ${got[i - 1]}`);
        break;
      }
    }
    const gotSet = new Set(got);
    // The page lists its own acknowledged bids at once, so an acknowledgement counts as the bid
    // reaching it (the broadcast, when it also comes, is not listed twice).
    const listed = new Set([...got, ...page.acknowledged.map((bid) => bid.id)]);
    const passedOver = (id: number) => page.passedOver.some(([after, before]) => id > after && id < before);
    const missing = expected.filter((id) => !listed.has(id) && !passedOver(id));
    const extra = got.length - gotSet.size;
    if (missing.length > 0) {
      counts.lost += missing.length;
      problems.push(`page ${page.label} missed ${missing.length} bid(s): ${missing.slice(0, 10).join(", ")}`);
    }
    if (extra > 0) {
      counts.duplicated += extra;
      problems.push(`page ${page.label} received ${extra} bid(s) twice`);
    }
    const unknown = got.filter((id) => !rows.some((row) => row.id === id));
    if (unknown.length > 0) problems.push(`page ${page.label} received ids not stored: ${unknown.slice(0, 10)}`);
  }

  const line =
    `[accounting] ${ledger.label}: tried=${counts.tried} acked=${counts.acked} unavailable=${counts.unavailable} ` +
    `too_low=${counts.tooLow} unanswered=${counts.unanswered} stored_unacked=${counts.storedUnacked} ` +
    `lost=${counts.lost} duplicated=${counts.duplicated} pages=${counts.pages} reconnects=${counts.reconnects} ` +
    `crashes=${counts.crashes}`;
  return { problems, counts, line };
}
