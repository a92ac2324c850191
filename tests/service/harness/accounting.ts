/**
 * Accounting for the fault tests (issue 6, issue 23): every bid tried is recorded with its own
 * amount (one cent above the previous attempt's, so the amount names the attempt) and its outcome;
 * at the end the database, every page and the operator's console actions are checked against
 * that record.
 *
 *   const ledger = createLedger("kill");
 *   const bidding = startSteadyBidding(ledger, pages, { intervalMs: 40, maxBids: 400 });
 *   ... the fault, the operator at the console ...
 *   await bidding.stop();
 *   const audit = await auditAuction(ledger, pages, databaseUrl, { crashes: 0, operator });
 *   console.log(audit.line); expect(audit.problems).toEqual([]);
 *
 * The checks:
 * - The database against the ledger: every acknowledged bid is stored exactly once, as
 *   acknowledged; no attempt is stored twice and nothing is stored that was never sent; a refused
 *   bid is not stored; an unanswered or unavailable one at most once. A bid is refused only as
 *   too low, unavailable, or name_not_allowed for a name the operator had blocked; none is
 *   accepted while its name was blocked from the console's answer to the unblock being asked.
 * - Every page's messages (docs/design.md#7): the bids that reached it one by one (broadcasts,
 *   resumes) come once each, in strictly rising id order, above every id it had already seen; none
 *   skips a stored bid of its round that the operator never touched (a hidden bid, or a blocked
 *   name's, may rightly be left out of a list or a resume; a full conflated "bids" frame passes
 *   over what lies below its oldest, docs/design.md#10); each list that replaced its state (an
 *   operator's action, a round's end, a snapshot) holds every such bid of its round between its
 *   oldest and newest; and a reconnect got a snapshot instead of a resume only when an action or a
 *   round's end came since its list.
 * - Every page's final state equals the database's (shownState.ts): once every page has the last
 *   bid, and again once the round ended, when rounds are on.
 * - The operator's console actions against the audit log: each confirmed action is there exactly
 *   once (a try that failed and was retried did not land twice), and nothing else is.
 */
import postgres from "postgres";
import { nameKey } from "../../../service/names/nameKey.ts";
import { SNAPSHOT_SIZE } from "../../../src/lib/auction/protocol.ts";
import { modelRisingAmounts } from "./auctionModel.ts";
import type { BidOutcome, Page, Standing } from "./pageClient.ts";
import type { ConsoleAction, OperatorConsole } from "./retryingOperator.ts";
import { compareShownState, pageShows, readShownState } from "./shownState.ts";
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
  /** Amounts rise by the increment per bid from every page: unique, and mostly above the last accepted. */
  nextAmountCents(): number;
}

export function createLedger(label: string): Ledger {
  return { label, attempts: [], nextAmountCents: modelRisingAmounts(100) };
}

/** Places one bid under `name` at the ledger's next amount, recording it and its outcome. */
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

/** The bids the ledger saw acknowledged, in the order their answers came. */
export function acknowledged(ledger: Ledger): { id: number; name: string }[] {
  return ledger.attempts.flatMap((attempt) =>
    attempt.outcome?.kind === "accepted" ? [{ id: attempt.outcome.bid.id, name: attempt.name }] : [],
  );
}

export interface SteadyBidding {
  /** Stops sending and waits for every answer (bounded by the page's acknowledgement timeout). */
  stop(): Promise<void>;
}

/**
 * Each page places a bid, waits for its answer, pauses intervalMs and goes again while it is live:
 * a steady flow like visitors bidding, at most maxBids in all. Each bid has a name of its own
 * unless `bidderName` gives the page one (a bidder who bids again and again under one name).
 */
export function startSteadyBidding(
  ledger: Ledger,
  pages: Page[],
  options: { intervalMs: number; maxBids: number; bidderName?: string },
): SteadyBidding {
  let stopping = false;
  let sequence = 0;
  const loops = pages.map(async (page) => {
    while (!stopping && ledger.attempts.length < options.maxBids) {
      if (page.isLive()) {
        sequence += 1;
        await placeRecorded(ledger, page, options.bidderName ?? `${ledger.label} ${page.label} ${sequence}`);
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
  round: number;
  /** The key blocking compares (bidder_key). */
  key: string;
}

export async function readStoredBids(databaseUrl: string): Promise<StoredRow[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`
      SELECT id, bidder_name, bidder_key, (amount * 100)::bigint AS amount_cents, round_number
      FROM auction_bids ORDER BY id`;
    return rows.map((row) => ({
      id: Number(row.id),
      name: String(row.bidder_name),
      amountCents: Number(row.amount_cents),
      round: Number(row.round_number),
      key: String(row.bidder_key),
    }));
  } finally {
    await sql.end();
  }
}

interface LoggedAction {
  action: string;
  bidId: number | null;
  name: string;
}

async function readModerationLog(sql: postgres.Sql): Promise<LoggedAction[]> {
  const rows = await sql`
    SELECT action, bid_id, bidder_name FROM auction_moderation_log
    WHERE action IN ('hide', 'restore', 'block', 'unblock') ORDER BY id`;
  return rows.map((row) => ({
    action: String(row.action),
    bidId: row.bid_id === null ? null : Number(row.bid_id),
    name: String(row.bidder_name),
  }));
}

export interface Audit {
  problems: string[];
  counts: {
    tried: number;
    acked: number;
    /** Refused in all: too low, unavailable, or a blocked name. */
    refused: number;
    unavailable: number;
    tooLow: number;
    nameNotAllowed: number;
    unanswered: number;
    storedUnacked: number;
    lost: number;
    duplicated: number;
    pages: number;
    reconnects: number;
    /** Reconnects that resumed after the page's last bid, and those that got a whole snapshot. */
    resumes: number;
    snapshots: number;
    /** Lists that replaced a live page's state after an action or a round's end, over all pages. */
    lists: number;
    /** Console actions confirmed, and tries refused on the way (5xx, 502, no connection). */
    consoleActions: number;
    consoleRefused: number;
    roundsEnded: number;
    crashes: number;
  };
  /** One line for the test log and docs/testing.md's Reliability table. */
  line: string;
}

export interface AuditOptions {
  crashes: number;
  timeoutMs?: number;
  /** The operator who acted at the console during the test: its actions are checked against the log. */
  operator?: OperatorConsole;
}

/** The stored ids, ascending, of the bids the operator never touched: in all, and by round. */
interface Untouched {
  all: number[];
  byRound: Map<number, number[]>;
}

function untouchedBids(rows: StoredRow[], touched: (row: StoredRow) => boolean): Untouched {
  const untouched: Untouched = { all: [], byRound: new Map() };
  for (const row of rows) {
    if (touched(row)) continue;
    untouched.all.push(row.id);
    const ids = untouched.byRound.get(row.round) ?? [];
    ids.push(row.id);
    untouched.byRound.set(row.round, ids);
  }
  return untouched;
}

/** The ids in `sorted` (ascending) strictly between `low` and `high`. */
function idsBetween(sorted: number[], low: number, high: number): number[] {
  let start = 0;
  let end = sorted.length;
  while (start < end) {
    const middle = (start + end) >> 1;
    if ((sorted[middle] as number) <= low) start = middle + 1;
    else end = middle;
  }
  const found: number[] = [];
  for (let i = start; i < sorted.length && (sorted[i] as number) < high; i++) found.push(sorted[i] as number);
  return found;
}

/**
 * Walks one page's messages: ids rising and once each, no untouched bid skipped between two bids
 * that reached the page one by one (of any round; after a list, of the next bid's round: a list
 * of a new round rightly leaves the old round's last bids out), every list whole between its
 * ends. Returns the bids missed and the bids received twice.
 */
function auditPageMessages(
  page: Page,
  rows: Map<number, StoredRow>,
  untouched: Untouched,
  problems: string[],
): { missed: number; twice: number } {
  const seen = new Set<number>();
  let newest = 0;
  let missed = 0;
  let twice = 0;
  let afterList = true;
  const report = (what: string) => problems.push(`page ${page.label} ${what}`);
  for (const [index, message] of page.messages.entries()) {
    const roundIds = untouched.byRound.get(message.round) ?? [];
    for (const id of message.ids) {
      const row = rows.get(id);
      if (!row) report(`received id ${id}, which is not stored`);
      else if (row.round !== message.round)
        report(`received id ${id} as round ${message.round}'s; it is ${row.round}'s`);
    }
    const incremental = index > 0 && (message.type === "bid" || message.type === "bids" || message.type === "resume");
    if (incremental) {
      // A full "bids" frame carries only the newest SNAPSHOT_SIZE (docs/design.md#10): the page
      // rightly passes over the bids between its last one and the frame's oldest.
      const passesOver = message.type === "bids" && message.ids.length === SNAPSHOT_SIZE;
      for (const [position, id] of message.ids.entries()) {
        if (seen.has(id)) {
          twice += 1;
          report(`received id ${id} again (${message.type})`);
        } else if (id <= newest) {
          report(`received id ${id} after ${newest}`);
        } else {
          const skipped =
            passesOver && position === 0 ? [] : idsBetween(afterList ? roundIds : untouched.all, newest, id);
          if (skipped.length > 0) {
            missed += skipped.length;
            report(`missed ${skipped.length} bid(s) before ${id}: ${skipped.slice(0, 10).join(", ")}`);
          }
        }
        seen.add(id);
        newest = Math.max(newest, id);
        afterList = false;
      }
      continue;
    }
    afterList = true;
    // A list (the first opening, a snapshot, an action's or a round's end): newest first, whole.
    const ids = message.ids;
    if (ids.some((id, i) => i > 0 && id >= (ids[i - 1] as number))) report(`got a ${message.type} list out of order`);
    if (ids.length > 0) {
      const listed = new Set(ids);
      // Below a full list's oldest the page rightly has nothing: it shows SNAPSHOT_SIZE bids.
      const oldest = ids.length >= SNAPSHOT_SIZE ? Math.min(...ids) : 0;
      const left = [...idsBetween(roundIds, oldest - 1, Math.max(...ids) + 1)].filter((id) => !listed.has(id));
      if (left.length > 0) {
        missed += left.length;
        report(
          `got a ${message.type} list of round ${message.round} without ${left.length} bid(s): ${left.slice(0, 10).join(", ")}`,
        );
      }
    }
    for (const id of ids) seen.add(id);
    newest = Math.max(newest, ...ids);
  }
  return { missed, twice };
}

const sameStanding = (a: Standing, b: Standing) =>
  a.moderation === b.moderation && a.round === b.round && a.ended === b.ended;

/**
 * Compares each page with the database once the page stands where the database does (it has the
 * lists of every action and round's end so far): from then on, what it shows must be the
 * database's, at once, with no second chance. Waits (bounded) for pages still behind, reading the
 * database again each time (a round may end meanwhile). The differences found, and the pages
 * that never caught up.
 */
async function compareEveryPageWithTheDatabase(pages: Page[], sql: postgres.Sql, timeoutMs: number): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  const behind = new Set(pages);
  const differences: string[] = [];
  for (;;) {
    const { standing, shown } = await readShownState(sql);
    for (const page of behind) {
      if (!sameStanding(page.standing(), standing)) continue;
      behind.delete(page);
      for (const difference of compareShownState(pageShows(page.state()), shown)) {
        differences.push(`page ${page.label} shows ${difference}`);
      }
    }
    if (behind.size === 0) return differences;
    if (performance.now() >= deadline) {
      for (const page of behind) {
        differences.push(
          `page ${page.label} stayed at ${JSON.stringify(page.standing())}, the database at ${JSON.stringify(standing)}`,
        );
      }
      return differences;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The operator's confirmed actions against the database's audit log, and the bids of the names it
 * blocked against the times the console confirmed the block and was asked to lift it.
 */
function auditOperator(operator: OperatorConsole, logged: LoggedAction[], ledger: Ledger, problems: string[]) {
  const keyOf = (action: { action: string; bidId: number | null; name: string }) =>
    `${action.action} ${action.bidId ?? nameKey(action.name)}`;
  const confirmed = operator.actions.filter((action) => action.doneAt !== undefined);
  for (const action of operator.actions) {
    if (action.doneAt === undefined) problems.push(`the console never confirmed ${action.kind} ${action.target}`);
  }
  const count = (keys: string[]) => keys.reduce((map, key) => map.set(key, (map.get(key) ?? 0) + 1), new Map());
  const asLogged = (action: ConsoleAction) =>
    keyOf({
      action: action.kind,
      bidId: typeof action.target === "number" ? action.target : null,
      name: String(action.target),
    });
  const want = count(confirmed.map(asLogged));
  const have = count(logged.map(keyOf));
  for (const key of new Set([...want.keys(), ...have.keys()])) {
    if (want.get(key) !== have.get(key)) {
      problems.push(
        `the audit log has "${key}" ${have.get(key) ?? 0} time(s); the console confirmed it ${want.get(key) ?? 0}`,
      );
    }
  }

  // Each name's blocked spans: from the console's confirmation of the block to the unblock's first try.
  const spans = new Map<string, { from: number; to: number }[]>();
  const blockedNames = new Map<string, number>();
  for (const action of operator.actions) {
    if (typeof action.target !== "string") continue;
    const key = nameKey(action.target);
    if (action.kind === "block") {
      blockedNames.set(key, Math.min(blockedNames.get(key) ?? Number.POSITIVE_INFINITY, action.startedAt));
      spans.set(key, [
        ...(spans.get(key) ?? []),
        { from: action.doneAt ?? Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY },
      ]);
    } else {
      const open = spans.get(key)?.at(-1);
      if (open && open.to === Number.POSITIVE_INFINITY) open.to = action.startedAt;
    }
  }
  for (const attempt of ledger.attempts) {
    const key = nameKey(attempt.name);
    if (attempt.outcome?.kind === "refused" && attempt.outcome.code === "name_not_allowed") {
      const firstBlock = blockedNames.get(key);
      if (firstBlock === undefined || firstBlock > (attempt.settledAt ?? 0)) {
        problems.push(`"${attempt.name}" was refused name_not_allowed, but the operator had not blocked it`);
      }
    }
    if (attempt.outcome?.kind === "accepted") {
      const within = spans.get(key)?.find(({ from, to }) => attempt.sentAt > from && (attempt.settledAt ?? 0) < to);
      if (within) problems.push(`"${attempt.name}" (${attempt.amountCents} cents) was accepted while blocked`);
    }
  }
}

/**
 * Places one more bid as a barrier and waits until every page has it (bounded), then checks
 * everything. Each socket gets bids and lists in id order, so once a page has the barrier, every
 * earlier bid, list, and any late duplicate of one, has reached it too: no pause to guess at.
 */
export async function auditAuction(
  ledger: Ledger,
  pages: Page[],
  databaseUrl: string,
  options: AuditOptions,
): Promise<Audit> {
  const problems: string[] = [];
  const timeoutMs = options.timeoutMs ?? 20_000;
  const barrier = await placeBarrierBid(ledger, pages, timeoutMs);
  // The broadcast, not the acknowledgement: the bidder's own page lists its bid from the answer at
  // once, but the standing after it (the bidder count) comes with the broadcast, which the frame
  // budget may hold back for an interval (docs/design.md#10).
  const hasSeen = (page: Page, id: number) => page.messages.some((message) => message.ids.includes(id));
  if (barrier === null) {
    problems.push("no page got its barrier bid accepted: the pages' view is unchecked");
  } else {
    await waitFor(
      `every page to receive the barrier bid ${barrier}`,
      () => pages.every((page) => hasSeen(page, barrier)),
      timeoutMs,
    ).catch(() => {
      // The audit below says which page is missing what.
    });
  }

  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  let roundsEnded = 0;
  let logged: LoggedAction[];
  const differences: string[] = [];
  try {
    // Every page equal to the database: as the bids left them, then as the round's end leaves them.
    differences.push(...(await compareEveryPageWithTheDatabase(pages, sql, timeoutMs)));
    const { round } = (await readShownState(sql)).shown;
    // A round that ends within the audit's time (the fault tests' short rounds): wait for its end.
    const endsInMs = round.endsAt === null ? Number.POSITIVE_INFINITY : Date.parse(round.endsAt) - Date.now();
    if (!round.ended && endsInMs < timeoutMs) {
      await waitFor(
        `round ${round.number} to end`,
        async () => (await readShownState(sql)).standing.ended,
        Math.max(0, endsInMs) + timeoutMs,
      ).catch(() => problems.push(`round ${round.number} did not end by ${round.endsAt}`));
      differences.push(...(await compareEveryPageWithTheDatabase(pages, sql, timeoutMs)));
    }
    problems.push(...differences);
    const [closed] = await sql`SELECT count(*)::int AS n FROM auction_rounds WHERE closed_at IS NOT NULL`;
    roundsEnded = Number(closed?.n);
    logged = await readModerationLog(sql);
  } finally {
    await sql.end();
  }

  const rows = await readStoredBids(databaseUrl);
  const counts: Audit["counts"] = {
    tried: 0,
    acked: 0,
    refused: 0,
    unavailable: 0,
    tooLow: 0,
    nameNotAllowed: 0,
    unanswered: 0,
    storedUnacked: 0,
    lost: 0,
    duplicated: 0,
    pages: pages.length,
    reconnects: 0,
    resumes: 0,
    snapshots: 0,
    lists: 0,
    consoleActions: options.operator?.actions.filter((action) => action.doneAt !== undefined).length ?? 0,
    consoleRefused: options.operator?.actions.reduce((sum, action) => sum + action.refusals.length, 0) ?? 0,
    roundsEnded,
    crashes: options.crashes,
  };

  // The ledger's amounts are unique: a stored amount names the attempt it came from.
  const rowsByAmount = new Map<number, StoredRow[]>();
  for (const row of rows) rowsByAmount.set(row.amountCents, [...(rowsByAmount.get(row.amountCents) ?? []), row]);
  const attemptsByAmount = new Map(ledger.attempts.map((attempt) => [attempt.amountCents, attempt]));
  for (const [amount, stored] of rowsByAmount) {
    const attempt = attemptsByAmount.get(amount);
    if (stored.length > 1) {
      counts.duplicated += stored.length - 1;
      problems.push(`the bid of ${amount} cents is stored ${stored.length} times`);
    }
    if (!attempt) problems.push(`"${stored[0]?.name}" (${amount} cents) is stored but was never sent`);
    else if (stored.some((row) => row.name !== attempt.name)) {
      problems.push(`the bid of ${amount} cents is stored under "${stored[0]?.name}", sent as "${attempt.name}"`);
    }
  }

  for (const attempt of ledger.attempts) {
    const stored = rowsByAmount.get(attempt.amountCents) ?? [];
    const outcome = attempt.outcome;
    if (outcome?.kind !== "not_sent") counts.tried += 1;
    if (outcome?.kind === "accepted") {
      counts.acked += 1;
      const row = stored[0];
      if (!row) {
        counts.lost += 1;
        problems.push(`acknowledged "${attempt.name}" (id ${outcome.bid.id}) is not stored`);
      } else if (row.id !== outcome.bid.id) {
        problems.push(`acknowledged "${attempt.name}" is stored as id ${row.id}, acknowledged as ${outcome.bid.id}`);
      }
    } else if (outcome?.kind === "not_sent") {
      if (stored.length > 0) problems.push(`"${attempt.name}" was never sent but is stored`);
    } else if (outcome?.kind === "refused" && outcome.code !== "unavailable") {
      counts.refused += 1;
      if (outcome.code === "too_low") counts.tooLow += 1;
      // Whether the name was blocked then is the operator's audit's to say.
      else if (outcome.code === "name_not_allowed" && options.operator) counts.nameNotAllowed += 1;
      else problems.push(`"${attempt.name}" was refused with ${outcome.code}`);
      if (stored.length > 0) problems.push(`"${attempt.name}" was refused ${outcome.code} but is stored`);
    } else {
      // Unavailable or unanswered: the database may or may not have it, but at most once.
      if (outcome?.kind === "refused") {
        counts.refused += 1;
        counts.unavailable += 1;
      } else if (outcome?.kind === "no_answer" || outcome === undefined) counts.unanswered += 1;
      if (stored.length > 0) counts.storedUnacked += 1;
    }
  }

  // Bids the operator touched, by id or by name: a list or a resume may rightly leave them out.
  const touchedIds = new Set(logged.flatMap((entry) => (entry.bidId === null ? [] : [entry.bidId])));
  const touchedKeys = new Set(logged.flatMap((entry) => (entry.bidId === null ? [nameKey(entry.name)] : [])));
  const untouched = untouchedBids(rows, (row) => touchedIds.has(row.id) || touchedKeys.has(row.key));
  const rowsById = new Map(rows.map((row) => [row.id, row]));
  for (const page of pages) {
    counts.reconnects += page.reopenings;
    counts.resumes += page.reopenedWith.resume;
    counts.snapshots += page.reopenedWith.snapshot;
    counts.lists += page.messages.filter(
      (message) => message.type === "moderated" || message.type === "roundEnded",
    ).length;
    if (page.firstTop === null) {
      problems.push(`page ${page.label} never got its opening`);
      continue;
    }
    if (page.unexpectedSnapshots > 0) {
      problems.push(`page ${page.label} got ${page.unexpectedSnapshots} snapshot(s) instead of a resume`);
    }
    const { missed, twice } = auditPageMessages(page, rowsById, untouched, problems);
    counts.lost += missed;
    counts.duplicated += twice;
  }

  if (options.operator) auditOperator(options.operator, logged, ledger, problems);

  const line =
    `[accounting] ${ledger.label}: tried=${counts.tried} acked=${counts.acked} refused=${counts.refused} ` +
    `(unavailable=${counts.unavailable} too_low=${counts.tooLow} name_not_allowed=${counts.nameNotAllowed}) ` +
    `unanswered=${counts.unanswered} stored_unacked=${counts.storedUnacked} lost=${counts.lost} ` +
    `duplicated=${counts.duplicated} pages=${counts.pages} reconnects=${counts.reconnects} ` +
    `(resumed=${counts.resumes} snapshot=${counts.snapshots}) lists=${counts.lists} ` +
    `console_actions=${counts.consoleActions} console_refused=${counts.consoleRefused} ` +
    `rounds_ended=${counts.roundsEnded} final_state=${differences.length === 0 ? "equal" : "different"} ` +
    `crashes=${counts.crashes}`;
  return { problems, counts, line };
}
