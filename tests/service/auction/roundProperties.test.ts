/**
 * Rounds and soft close (docs/design.md#6b, sql/003_rounds.sql) against a model, on both backends:
 * generated sequences of bids and secret maximums (docs/protocol.md#maximum-bids: their automatic
 * bids count for the soft close, a round's end or a hide of its name's bid ends a maximum),
 * group-commit batches of both (each answered as if placed alone),
 * clock steps (across the end, into and around the soft-close window), settlements, hidden and restored bids and restarts with other round lengths run on the
 * real place_auction_bid(), settle_auction_round() and moderate_auction() (the store's own SQL,
 * storeQueries in queries.ts) on one connection whose clock the test steps through
 * `auction.test_now`, to the millisecond. Every answer (accepted or too low, round, end, the bids of
 * a round the call closed, the settlement's standing, the moderation outcome) is the small pure
 * model's below; after each sequence so are the rounds' stored times, each round's bids, the
 * winners and the view.
 *
 * Reproducible: the seed is fixed and printed; FC_SEED=<n> runs another one.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storeQueries } from "../../../service/storage/queries.ts";
import type {
  AuctionView,
  MaximumOutcome,
  ModerationOutcome,
  PlaceBidOutcome,
  Placement,
  RoundSettings,
  RoundSettlement,
  RoundWinner,
  StoredBid,
} from "../../../service/storage/types.ts";
import { seededRuns } from "../../harness/seededRuns.ts";
import {
  type ModelEntry,
  type ModelLeading,
  modelMaximumRule,
  modelNextWinningCents,
} from "../harness/auctionModel.ts";
import {
  BACKENDS,
  type Backend,
  type DirectQuery,
  migratedLocationForThisTest,
  withDirectSql,
} from "../harness/stores.ts";

/** Generated sequences per backend, each of 4 to 40 commands. */
const RUNS: Record<Backend, number> = { postgres: 150, pglite: 100 };
/** Past winners a view carries (queries.ts). */
const PAST_WINNERS_IN_VIEW = 5;
const READ_LIMIT = 100;

// ---- The model --------------------------------------------------------------------------------

interface ModelRound {
  number: number;
  /** Milliseconds since the epoch, as every time in the model. */
  openedAt: number;
  endsAt: number | null;
  closedAt: number | null;
  bids: StoredBid[];
  /** Its leading secret maximum (docs/protocol.md#maximum-bids), or null. */
  leading: ModelLeading | null;
}

/** Names compare by their key (NFKC, case folded): the tests' names differ in case at most. */
const sameKey = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function iso(ms: number): string;
function iso(ms: number | null): string | null;
function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/**
 * docs/design.md#6b as plain code: a round opens with its first accepted bid and ends `roundSeconds`
 * later (0: endless; rounds turned off make a round still open endless, but close one whose end
 * has passed); a bid accepted with less
 * than `softCloseSeconds` left moves the end to its time plus the soft close; the first call at or
 * after the end records it (and counts its bids); a bid then opens the next round and is judged
 * against that round's highest (none). An endless round turned timed ends `roundSeconds` after it
 * opened. Only visible bids count for the highest, the bidders and the winners (docs/design.md#6a, #6b).
 */
class RoundsModel {
  private readonly rounds: ModelRound[] = [];
  private readonly hidden = new Set<number>();
  private lastId = 0;
  private moderation = 0;

  private get current(): ModelRound | undefined {
    return this.rounds.at(-1);
  }

  /** Brings the current round up to `now`; the number of bids of the round it closed, or null. */
  private advance(now: number, roundSeconds: number): number | null {
    const round = this.current;
    if (!round || round.closedAt !== null) return null;
    // Rounds off: a round still open becomes endless; one whose end has passed is still a sale.
    if (roundSeconds === 0 && (round.endsAt === null || now < round.endsAt)) {
      round.endsAt = null;
      return null;
    }
    round.endsAt ??= round.openedAt + roundSeconds * 1000;
    if (now < round.endsAt) return null;
    round.closedAt = now;
    return round.bids.length;
  }

  private visibleBids(round: ModelRound | undefined): StoredBid[] {
    return (round?.bids ?? []).filter((bid) => !this.hidden.has(bid.id));
  }

  /** A round's highest visible bid, the earliest of equal ones. */
  private highestOf(round: ModelRound | undefined): StoredBid | null {
    let highest: StoredBid | null = null;
    for (const bid of this.visibleBids(round)) if (!highest || bid.amountCents > highest.amountCents) highest = bid;
    return highest;
  }

  /** The current round's end now, or null (none, endless). */
  endsAt(): number | null {
    return this.current?.endsAt ?? null;
  }

  /** A lone bid by the previous release's call: a tie with a maximum answers too_low there. */
  placeBid(bidderName: string, amountCents: number, now: number, settings: RoundSettings): PlaceBidOutcome {
    return this.place({ kind: "bid", name: bidderName, cents: amountCents }, now, settings, false) as PlaceBidOutcome;
  }

  /** A bid or a maximum; `answersMaximums`: the caller reads outbid_by_maximum (today's call). */
  place(
    entry: ModelEntry,
    now: number,
    settings: RoundSettings,
    answersMaximums = true,
  ): PlaceBidOutcome | MaximumOutcome {
    const closedRoundBids = this.advance(now, settings.roundSeconds);
    let round = this.current;
    if (!round || round.closedAt !== null) {
      round = {
        number: (round?.number ?? 0) + 1,
        openedAt: now,
        endsAt: settings.roundSeconds > 0 ? now + settings.roundSeconds * 1000 : null,
        closedAt: null,
        bids: [],
        leading: null,
      };
      this.rounds.push(round);
    }
    const top = this.highestOf(round);
    const decision = modelMaximumRule(
      top && { name: top.bidderName, cents: top.amountCents },
      round.leading,
      entry,
      sameKey,
    );
    round.leading = decision.leading;
    let own: StoredBid | null = null;
    for (const [index, stored] of decision.stored.entries()) {
      this.lastId += 1;
      const bid: StoredBid = {
        id: this.lastId,
        bidderName: stored.name,
        amountCents: stored.cents,
        createdAt: iso(now),
      };
      round.bids.push(bid);
      if (index === 0 && decision.own) own = bid;
      // An automatic bid is a bid: it moves the end too.
      if (round.endsAt !== null && round.endsAt - now < settings.softCloseSeconds * 1000) {
        round.endsAt = now + settings.softCloseSeconds * 1000;
      }
    }
    const standing = { moderation: this.moderation, round: round.number, endsAt: iso(round.endsAt), closedRoundBids };
    // 0: no visible bid, as the state row says it.
    const highestCents = this.highestOf(round)?.amountCents ?? 0;
    switch (decision.outcome) {
      case "accepted": {
        if (!own) throw new Error("an accepted bid is stored");
        const accepted: PlaceBidOutcome = { accepted: true, bid: own, bidders: this.bidders(), ...standing };
        if (decision.outbidByMaximum) accepted.outbidByMaximumCents = highestCents;
        return accepted;
      }
      case "maximum_set":
      case "maximum_raised":
        return {
          accepted: true,
          raised: decision.outcome === "maximum_raised",
          bid: own,
          bidders: this.bidders(),
          ...standing,
        };
      case "outbid_by_maximum": {
        const code = entry.kind === "bid" && !answersMaximums ? "too_low" : "outbid_by_maximum";
        return { accepted: false, code, highestCents, ...standing };
      }
      case "too_low":
      case "maximum_too_low":
      case "name_leads":
        return { accepted: false, code: decision.outcome, highestCents, ...standing };
      default:
        throw new Error(`no blocked names here: ${decision.outcome}`);
    }
  }

  settle(now: number, settings: RoundSettings): RoundSettlement {
    const closedRoundBids = this.advance(now, settings.roundSeconds);
    const round = this.current;
    return {
      number: round?.number ?? 0,
      endsAt: iso(round?.endsAt ?? null),
      closed: round?.closedAt != null,
      closedRoundBids,
      now: iso(now),
    };
  }

  /** Hides or restores the bid with this id (one there is). */
  moderate(action: "hide" | "restore", bidId: number): ModerationOutcome {
    const bid = this.bid(bidId);
    const changed = action === "hide" ? !this.hidden.has(bidId) : this.hidden.has(bidId);
    if (changed) {
      if (action === "hide") this.hidden.add(bidId);
      else this.hidden.delete(bidId);
      // Hiding a bid of the leading maximum's name ends the maximum.
      const current = this.current;
      if (action === "hide" && current?.leading && sameKey(current.leading.name, bid.bidderName)) {
        current.leading = null;
      }
      this.moderation += 1;
    }
    return { outcome: changed ? "done" : "unchanged", moderation: this.moderation, bidderName: bid.bidderName };
  }

  bidCount(): number {
    return this.lastId;
  }

  bid(id: number): StoredBid {
    const bid = this.rounds.flatMap((round) => round.bids).find((candidate) => candidate.id === id);
    if (!bid) throw new Error(`the model has no bid ${id}`);
    return bid;
  }

  /** The smallest amount that wins in the current round now. */
  nextWinningCents(): number {
    return modelNextWinningCents(this.highestOf(this.current)?.amountCents ?? null);
  }

  private bidders(): number {
    return new Set(this.visibleBids(this.current).map((bid) => bid.bidderName)).size;
  }

  winners(limit: number): RoundWinner[] {
    const winners: RoundWinner[] = [];
    for (const round of [...this.rounds].reverse()) {
      const bid = this.highestOf(round);
      if (round.closedAt === null || round.endsAt === null || !bid) continue;
      winners.push({ round: round.number, bid, endedAt: iso(round.endsAt) });
    }
    return winners.slice(0, limit);
  }

  view(limit: number, now: number): AuctionView {
    const round = this.current;
    return {
      bids: this.visibleBids(round).reverse().slice(0, limit),
      highest: this.highestOf(round),
      bidders: this.bidders(),
      moderation: this.moderation,
      lastId: this.lastId,
      blockedKeys: [],
      round: { number: round?.number ?? 0, endsAt: iso(round?.endsAt ?? null), closed: round?.closedAt != null },
      pastWinners: this.winners(PAST_WINNERS_IN_VIEW),
      now: iso(now),
    };
  }

  /** The rounds as stored: number, opened, end, recorded end (ISO), and each round's bid ids. */
  storedRounds() {
    return this.rounds.map((round) => ({
      number: round.number,
      openedAt: iso(round.openedAt),
      endsAt: iso(round.endsAt),
      closedAt: iso(round.closedAt),
      bidIds: round.bids.map((bid) => bid.id),
    }));
  }
}

// ---- Generated commands -----------------------------------------------------------------------

interface BidSpec {
  bidderName: string;
  /**
   * Cents, or relative to the smallest winning amount (the visible highest plus the increment), or
   * the amount of the `sameAs`-th newest bid (0: the newest).
   */
  amount: { cents: number } | { overNext: number } | { sameAs: number };
  /** A secret maximum of this amount, from the `maximumOf`-th browser, instead of a bid. */
  maximumOf?: number;
}

type Command =
  | ({ kind: "bid" } & BidSpec)
  /** A secret maximum placed alone (today's call). */
  | ({ kind: "maximum" } & BidSpec)
  /**
   * Bids that arrived together, placed as one group-commit batch (place_auction_bids,
   * docs/design.md#6c) at one instant: each must be answered as the model answers it placed alone, in order.
   */
  | { kind: "batch"; bids: BidSpec[] }
  /** The clock forward by `ms`. */
  | { kind: "step"; ms: number }
  /**
   * The clock to the current round's end (or, `fromSoftClose`, to the start of its soft-close
   * window) plus `offsetMs`; nothing when there is no end or that time has passed.
   */
  | { kind: "stepNearEnd"; fromSoftClose: boolean; offsetMs: number }
  | { kind: "settle" }
  /** The operator hides or restores the `pick`-th newest bid (0: the newest; nothing before the first). */
  | { kind: "moderate"; action: "hide" | "restore"; pick: number }
  /** The service restarted with other round lengths (AUCTION_ROUND_SECONDS, AUCTION_SOFT_CLOSE_SECONDS). */
  | { kind: "restart"; rounds: RoundSettings };

const roundSettings: fc.Arbitrary<RoundSettings> = fc.record({
  roundSeconds: fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 5, arbitrary: fc.integer({ min: 1, max: 10 }) },
  ),
  softCloseSeconds: fc.integer({ min: 0, max: 5 }),
});

// Exact names: "Ann" and "ann" are two bidders.
const bidderName = fc.constantFrom("Ann", "ann", "Bob", "Zoë");

const bidSpec: fc.Arbitrary<BidSpec> = fc.record({
  bidderName,
  amount: fc.oneof(
    fc.record({ cents: fc.integer({ min: 1, max: 3_000 }) }),
    // The smallest that wins, a cent or two below it (with an increment of a cent: the highest and
    // a cent below), a cent or two above.
    fc.record({ overNext: fc.integer({ min: -2, max: 2 }) }),
    // As much as an earlier bid, maybe a hidden one: equal visible amounts after a restore.
    fc.record({ sameAs: fc.nat({ max: 4 }) }),
  ),
});

/** Three browsers; a maximum reaches from just winning to far above. */
const maximumSpec: fc.Arbitrary<BidSpec> = fc.record({
  bidderName,
  amount: fc.oneof(
    fc.record({ overNext: fc.integer({ min: -1, max: 2 }) }),
    fc.record({ overNext: fc.integer({ min: 10, max: 600 }) }),
    fc.record({ sameAs: fc.nat({ max: 4 }) }),
  ),
  maximumOf: fc.nat({ max: 2 }),
});
const entrySpec = fc.oneof({ weight: 3, arbitrary: bidSpec }, { weight: 1, arbitrary: maximumSpec });

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 8, arbitrary: bidSpec.map((spec) => ({ kind: "bid" as const, ...spec })) },
  { weight: 3, arbitrary: maximumSpec.map((spec) => ({ kind: "maximum" as const, ...spec })) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      bids: fc.array(entrySpec, { minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 12_000 }), fc.constantFrom(1, 1_000)),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("stepNearEnd" as const),
      fromSoftClose: fc.boolean(),
      offsetMs: fc.oneof(fc.integer({ min: -1_500, max: 1_500 }), fc.constantFrom(-1, 0, 1)),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "settle" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("moderate" as const),
      action: fc.constantFrom("hide" as const, "restore" as const),
      pick: fc.nat({ max: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("restart" as const), rounds: roundSettings }) },
);

interface Run {
  /** The clock at the first command, ms since the epoch. */
  start: number;
  rounds: RoundSettings;
  commands: Command[];
}

const runSpec: fc.Arbitrary<Run> = fc.record({
  // Any millisecond of 2030.
  start: fc.integer({ min: Date.UTC(2030, 0, 1), max: Date.UTC(2031, 0, 1) - 1 }),
  rounds: roundSettings,
  commands: fc.array(command, { minLength: 4, maxLength: 40, size: "max" }),
});

// ---- Against the database ---------------------------------------------------------------------

/** An empty auction: no bids, rounds, maximums, blocks or audit, ids from 1, the state row as migrated. */
async function emptyAuction(query: DirectQuery): Promise<void> {
  await query(
    "TRUNCATE auction_moderation_log, auction_bids, auction_blocked_names, auction_rounds, auction_maximums, auction_state RESTART IDENTITY",
  );
  await query("INSERT INTO auction_state DEFAULT VALUES");
}

async function storedRounds(query: DirectQuery) {
  const rounds = await query(
    `SELECT r.number, auction_time_text(r.opened_at) AS opened_at, auction_time_text(r.ends_at) AS ends_at,
      auction_time_text(r.closed_at) AS closed_at,
      coalesce((SELECT json_agg(b.id ORDER BY b.id) FROM auction_bids b WHERE b.round_number = r.number), '[]'::json) AS bid_ids
     FROM auction_rounds r ORDER BY r.number`,
  );
  return rounds.map((row) => ({
    number: Number(row.number),
    openedAt: row.opened_at,
    endsAt: row.ends_at,
    closedAt: row.closed_at,
    bidIds: ((typeof row.bid_ids === "string" ? JSON.parse(row.bid_ids) : row.bid_ids) as unknown[]).map(Number),
  }));
}

/** The id of the `back`-th newest bid (0: the newest), wrapping round to the newest past the first. */
function newestBut(back: number, model: RoundsModel): number {
  return model.bidCount() - (back % model.bidCount());
}

const ownerOf = (browser: number) => createHash("sha256").update(`browser-${browser}`).digest("hex");

function entryOf(spec: BidSpec, model: RoundsModel): ModelEntry {
  const cents = centsOf(spec.amount, model);
  return spec.maximumOf === undefined
    ? { kind: "bid", name: spec.bidderName, cents }
    : { kind: "maximum", name: spec.bidderName, maximumCents: cents, owner: ownerOf(spec.maximumOf) };
}

function placementOf(entry: ModelEntry): Placement {
  return entry.kind === "bid"
    ? { bidderName: entry.name, amountCents: entry.cents }
    : { bidderName: entry.name, maximumCents: entry.maximumCents, ownerHash: entry.owner };
}

function centsOf(amount: BidSpec["amount"], model: RoundsModel): number {
  if ("cents" in amount) return amount.cents;
  if ("overNext" in amount) return Math.max(1, model.nextWinningCents() + amount.overNext);
  return model.bidCount() === 0 ? 1 : model.bid(newestBut(amount.sameAs, model)).amountCents;
}

async function runAgainstModel(query: DirectQuery, run: Run): Promise<void> {
  await emptyAuction(query);
  const model = new RoundsModel();
  let settings = run.rounds;
  let now = run.start;
  let clockSent: number | null = null;
  // The database's clock is the model's, to the millisecond.
  const clockAtNow = async () => {
    if (clockSent === now) return;
    await query("SELECT set_config('auction.test_now', $1, false)", [iso(now)]);
    clockSent = now;
  };

  for (const [index, step] of run.commands.entries()) {
    const where = `command ${index} ${JSON.stringify(step)} at ${iso(now)} with ${JSON.stringify(settings)}`;
    switch (step.kind) {
      case "bid": {
        await clockAtNow();
        const cents = centsOf(step.amount, model);
        const expected = model.placeBid(step.bidderName, cents, now, settings);
        expect(await storeQueries(query, settings).placeBid(step.bidderName, cents), where).toEqual(expected);
        break;
      }
      case "maximum": {
        await clockAtNow();
        const entry = entryOf(step, model);
        const expected = model.place(entry, now, settings);
        expect(await storeQueries(query, settings).placeEntries([placementOf(entry)]), where).toEqual([expected]);
        break;
      }
      case "batch": {
        await clockAtNow();
        // The amounts as the bidders chose them, one after another; the model places each alone.
        const entries: Placement[] = [];
        const expected = [];
        for (const spec of step.bids) {
          const entry = entryOf(spec, model);
          entries.push(placementOf(entry));
          expected.push(model.place(entry, now, settings));
        }
        expect(await storeQueries(query, settings).placeEntries(entries), where).toEqual(expected);
        break;
      }
      case "settle": {
        await clockAtNow();
        const expected = model.settle(now, settings);
        expect(await storeQueries(query, settings).settleRound(), where).toEqual(expected);
        break;
      }
      case "moderate": {
        if (model.bidCount() === 0) break;
        const bidId = newestBut(step.pick, model);
        const expected = model.moderate(step.action, bidId);
        const request = { action: step.action, bidId, reason: null, sessionId: "operator" };
        expect(await storeQueries(query, settings).moderate(request), where).toEqual(expected);
        break;
      }
      case "step":
        now += step.ms;
        break;
      case "stepNearEnd": {
        const endsAt = model.endsAt();
        if (endsAt === null) break;
        const target = endsAt - (step.fromSoftClose ? settings.softCloseSeconds * 1000 : 0) + step.offsetMs;
        now = Math.max(now, target);
        break;
      }
      case "restart":
        settings = step.rounds;
        break;
    }
  }

  await clockAtNow();
  const reads = storeQueries(query, settings);
  expect(await reads.view(READ_LIMIT), "view").toEqual(model.view(READ_LIMIT, now));
  expect(await reads.winners(READ_LIMIT), "winners").toEqual(model.winners(READ_LIMIT));
  expect(await storedRounds(query), "stored rounds").toEqual(model.storedRounds());
}

describe.each(BACKENDS)("rounds against a model on %s", (backend) => {
  it("answers every bid, settlement and moderation as the model does, and ends with its rounds, bids and winners", async () => {
    // Driven on one connection of its own.
    const location = await migratedLocationForThisTest(backend);
    await withDirectSql(location, (query) =>
      fc.assert(
        fc.asyncProperty(runSpec, (run) => runAgainstModel(query, run)),
        seededRuns(20_261_123, RUNS[backend], backend),
      ),
    );
  });
});
