/**
 * Secret maximum bids in the database (sql/functions/40_bids.sql, docs/protocol.md#maximum-bids) on
 * both backends: each branch of eBay's rule as the lead fixed it, ties, raises, the round's end and
 * moderation ending a maximum, an automatic bid moving the soft close; then random batches of bids
 * and maximums against the model (harness/auctionModel.ts, MaximumRuleModel), and on PostgreSQL two
 * instances placing at once, whose answers and rows must be those of some order of their batches.
 *
 * Reproducible: the seeds are fixed and printed; FC_SEED=<n> runs another one.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consolePage } from "../../../service/console/page.ts";
import { storeQueries } from "../../../service/storage/queries.ts";
import {
  type BidStore,
  ENDLESS_ROUNDS,
  type MaximumOutcome,
  type PlaceBidOutcome,
  type Placement,
  type RoundSettings,
} from "../../../service/storage/types.ts";
import { BID_INCREMENT_CENTS } from "../../../src/lib/auction/bidRules.ts";
import { seededRuns } from "../../harness/seededRuns.ts";
import {
  MaximumRuleModel,
  type ModelEntry,
  type ModelMaximumAnswer,
  modelNextWinningCents,
} from "../harness/auctionModel.ts";
import {
  BACKENDS,
  type DirectQuery,
  locationForThisTest,
  migratedLocationTestOn,
  storeForThisTest,
  storeTestOn,
  withDirectSql,
} from "../harness/stores.ts";

const INC = BID_INCREMENT_CENTS;
const ownerOf = (secret: string) => createHash("sha256").update(secret).digest("hex");
const ALICE_SECRET = "alice-secret-0123456789abcdef";
const BOB_SECRET = "bob-secret-0123456789abcdef";

const bid = (name: string, cents: number): Placement => ({ bidderName: name, amountCents: cents });
const maximum = (name: string, cents: number, secret: string): Placement => ({
  bidderName: name,
  maximumCents: cents,
  ownerHash: ownerOf(secret),
});

/** An outcome in the model's terms: what each entry was answered and what it stored of its own. */
function answerOf(outcome: PlaceBidOutcome | MaximumOutcome, entry: Placement) {
  if ("ownerHash" in entry) {
    const max = outcome as MaximumOutcome;
    if (!max.accepted) return { outcome: max.code, ownCents: null };
    return { outcome: max.raised ? "maximum_raised" : "maximum_set", ownCents: max.bid?.amountCents ?? null };
  }
  const plain = outcome as PlaceBidOutcome;
  if (!plain.accepted) return { outcome: plain.code, ownCents: null, highestCents: plain.highestCents };
  return {
    outcome: "accepted",
    ownCents: plain.bid.amountCents,
    outbidByMaximum: plain.outbidByMaximumCents !== undefined,
    highestCents: plain.outbidByMaximumCents ?? plain.bid.amountCents,
  };
}

function expectedOf(answer: ModelMaximumAnswer, entry: ModelEntry) {
  if (entry.kind === "maximum") return { outcome: answer.outcome, ownCents: answer.ownCents };
  if (answer.outcome !== "accepted") {
    return { outcome: answer.outcome, ownCents: null, highestCents: answer.highestCents };
  }
  return {
    outcome: "accepted",
    ownCents: answer.ownCents,
    outbidByMaximum: answer.outbidByMaximum,
    highestCents: answer.highestCents,
  };
}

const toPlacement = (entry: ModelEntry): Placement =>
  entry.kind === "bid"
    ? bid(entry.name, entry.cents)
    : { bidderName: entry.name, maximumCents: entry.maximumCents, ownerHash: entry.owner };

async function storedBids(query: DirectQuery) {
  return (await query("SELECT bidder_name, (amount * 100)::bigint AS cents FROM auction_bids ORDER BY id")).map(
    (row) => ({ name: String(row.bidder_name), cents: Number(row.cents) }),
  );
}

async function maximumRows(query: DirectQuery) {
  return (
    await query("SELECT bidder_name, maximum_cents, owner_hash, ended_reason FROM auction_maximums ORDER BY id")
  ).map((row) => ({
    name: String(row.bidder_name),
    maximumCents: Number(row.maximum_cents),
    owner: String(row.owner_hash),
    ended: row.ended_reason === null ? null : String(row.ended_reason),
  }));
}

const visibleBids = async (store: Pick<BidStore, "view">) =>
  (await store.view(50)).bids.map((b) => [b.bidderName, b.amountCents]).reverse();

describe.each(BACKENDS)("maximum bids on %s", (backend) => {
  const storeTest = storeTestOn(backend);

  storeTest(
    "the first maximum opens at the floor and leads; a plain bid below it is answered at once",
    async ({ store }) => {
      const [set] = await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
      expect(set).toMatchObject({ accepted: true, raised: false, bid: { bidderName: "Alice", amountCents: 1 } });
      const [below] = await store.placeBids([{ bidderName: "Bob", amountCents: 500 }]);
      expect(below).toMatchObject({ accepted: true, bid: { amountCents: 500 }, outbidByMaximumCents: 500 + INC });
      expect(await visibleBids(store)).toEqual([
        ["Alice", 1],
        ["Bob", 500],
        ["Alice", 500 + INC],
      ]);
      expect((await store.view(50)).bidders).toBe(2);
    },
  );

  storeTest(
    "a plain bid equal to the leading maximum is not stored: the earlier wins at its maximum",
    async ({ store }) => {
      await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
      const [tie] = await store.placeBids([{ bidderName: "Bob", amountCents: 1_000 }]);
      expect(tie).toMatchObject({ accepted: false, code: "outbid_by_maximum", highestCents: 1_000 });
      expect(await visibleBids(store)).toEqual([
        ["Alice", 1],
        ["Alice", 1_000],
      ]);
    },
  );

  storeTest(
    "a plain bid above the leading maximum beats it; the beaten maximum is spent",
    async ({ store, location }) => {
      await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
      const [above] = await store.placeBids([{ bidderName: "Bob", amountCents: 1_001 }]);
      expect(above).toMatchObject({ accepted: true, bid: { amountCents: 1_001 } });
      expect(above).not.toHaveProperty("outbidByMaximumCents");
      // A later plain bid is not answered by the spent maximum.
      const [later] = await store.placeBids([{ bidderName: "Cy", amountCents: 1_002 }]);
      expect(later).not.toHaveProperty("outbidByMaximumCents");
      await store.close();
      expect(await withDirectSql(location, maximumRows)).toEqual([
        { name: "Alice", maximumCents: 1_000, owner: ownerOf(ALICE_SECRET), ended: "beaten" },
      ]);
    },
  );

  storeTest("the second maximum sets the price one increment over the first, capped at its own", async ({ store }) => {
    await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
    const [higher] = await store.placeEntries([maximum("Bob", 2_000, BOB_SECRET)]);
    expect(higher).toMatchObject({ accepted: true, bid: { bidderName: "Bob", amountCents: 1_000 + INC } });
    // Lower than the leader's: the leader answers at that maximum plus the increment.
    const [lower] = await store.placeEntries([maximum("Cy", 1_500, "cy-secret-0123456789abcdef")]);
    expect(lower).toMatchObject({ accepted: false, code: "outbid_by_maximum", highestCents: 1_500 + INC });
    // Equal: the earlier (Bob's) wins at its maximum.
    const [equal] = await store.placeEntries([maximum("Dee", 2_000, "dee-secret-0123456789abcdef")]);
    expect(equal).toMatchObject({ accepted: false, code: "outbid_by_maximum", highestCents: 2_000 });
    expect((await visibleBids(store)).at(-1)).toEqual(["Bob", 2_000]);
  });

  storeTest("raising one's own maximum never moves the price; a lower one is refused", async ({ store }) => {
    await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
    const [raised] = await store.placeEntries([maximum("Alice", 3_000, ALICE_SECRET)]);
    expect(raised).toMatchObject({ accepted: true, raised: true, bid: null });
    const [same] = await store.placeEntries([maximum("Alice", 3_000, ALICE_SECRET)]);
    expect(same).toMatchObject({ accepted: false, code: "maximum_too_low" });
    expect(await visibleBids(store)).toEqual([["Alice", 1]]);
    expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toEqual({ round: 1, maximumCents: 3_000, leading: true });
    expect(await store.ownMaximum(ownerOf(BOB_SECRET))).toEqual({ round: 1, maximumCents: null, leading: false });
  });

  storeTest("a plain leader's maximum stands behind its bid without moving the price", async ({ store }) => {
    await store.placeBids([{ bidderName: "Alice", amountCents: 700 }]);
    const [set] = await store.placeEntries([maximum("alice", 2_000, ALICE_SECRET)]);
    expect(set).toMatchObject({ accepted: true, raised: false, bid: null });
    const [answered] = await store.placeBids([{ bidderName: "Bob", amountCents: 900 }]);
    expect(answered).toMatchObject({ accepted: true, outbidByMaximumCents: 900 + INC });
    // The leader's own plain bid at its maximum spends it.
    await store.placeBids([{ bidderName: "Alice", amountCents: 2_000 }]);
    const [free] = await store.placeBids([{ bidderName: "Bob", amountCents: 2_001 }]);
    expect(free).not.toHaveProperty("outbidByMaximumCents");
    expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toEqual({ round: 1, maximumCents: 2_000, leading: false });
  });

  storeTest("the console's view marks the leader's highest bid as automatic, never its amount", async ({ store }) => {
    const [set] = await store.placeEntries([maximum("Alice", 98_765, ALICE_SECRET)]);
    const first = (set as MaximumOutcome & { accepted: true }).bid?.id;
    expect((await store.moderationView(null, 50)).automaticBidId).toBe(first);
    await store.placeBids([{ bidderName: "Bob", amountCents: 500 }]);
    const view = await store.moderationView(null, 50);
    const answer = view.bids[0];
    expect(answer).toMatchObject({ bidderName: "Alice", amountCents: 500 + INC });
    expect(view.automaticBidId).toBe(answer?.id);
    const page = consolePage({ view, before: null, notice: null });
    expect(page).toContain(`<td>Alice <span class="automatic">bids automatically</span></td>`);
    expect(page.match(/bids automatically/g)).toHaveLength(1);
    expect(page).not.toContain("987.65");
    // Beaten: nothing bids automatically any more.
    await store.placeBids([{ bidderName: "Bob", amountCents: 98_766 }]);
    expect((await store.moderationView(null, 50)).automaticBidId).toBeNull();
  });

  storeTest("a maximum below the smallest winning bid is too low", async ({ store }) => {
    await store.placeBids([{ bidderName: "Alice", amountCents: 700 }]);
    const [low] = await store.placeEntries([maximum("Bob", 700, BOB_SECRET)]);
    expect(low).toMatchObject({ accepted: false, code: "too_low", highestCents: 700 });
  });

  storeTest(
    "the previous release's call gets too_low where a tie with a maximum kept its bid out",
    async ({ store, location }) => {
      await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
      await store.close();
      const rows = await withDirectSql(location, (query) =>
        query("SELECT outcome, highest_cents FROM place_auction_bids($1, 0, 0, $2, 1)", [
          JSON.stringify([{ name: "Bob", key: "bob", cents: 1_000 }]),
          INC,
        ]),
      );
      expect(rows).toEqual([{ outcome: "too_low", highest_cents: expect.anything() }]);
      expect(Number(rows[0]?.highest_cents)).toBe(1_000);
    },
  );

  storeTest("hiding a bid of the leader's name, or blocking it, ends its maximum", async ({ store }) => {
    const [set] = await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
    const aliceBid = (set as MaximumOutcome & { accepted: true }).bid;
    await store.moderate({ action: "hide", bidId: aliceBid?.id ?? 0, reason: null, sessionId: "operator" });
    const [plain] = await store.placeBids([{ bidderName: "Bob", amountCents: 5 }]);
    expect(plain).not.toHaveProperty("outbidByMaximumCents");
    expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toMatchObject({ maximumCents: 1_000, leading: false });

    await store.placeEntries([maximum("Cy", 9_000, "cy-secret-0123456789abcdef")]);
    await store.moderate({ action: "block", bidderName: "cy", reason: null, sessionId: "operator" });
    const [after] = await store.placeBids([{ bidderName: "Bob", amountCents: 100 }]);
    expect(after).not.toHaveProperty("outbidByMaximumCents");
  });
  storeTest(
    "a maximum under the leading maximum's name from another browser is refused, and shows nothing",
    async ({ store }) => {
      await store.placeEntries([bid("Bob", 100), maximum("Alice", 5_000, ALICE_SECRET)]);
      const before = await visibleBids(store);
      // Eve types Alice's name (any spelling of its key) with a secret of her own.
      const [impostor] = await store.placeEntries([maximum("ALICE", 1_000_000, "eve-secret-0123456789abcdef")]);
      expect(impostor).toMatchObject({ accepted: false, code: "name_leads" });
      expect(await visibleBids(store)).toEqual(before);
      expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toMatchObject({ maximumCents: 5_000, leading: true });
      // Alice's maximum still answers for her.
      const [plain] = await store.placeBids([{ bidderName: "Bob", amountCents: 3_000 }]);
      expect(plain).toMatchObject({ accepted: true, outbidByMaximumCents: 3_000 + INC });
    },
  );

  storeTest("a bid shown again that passes the leading maximum ends it", async ({ store }) => {
    const [cleo] = await store.placeBids([{ bidderName: "Cleo", amountCents: 800 }]);
    const cleoId = (cleo as PlaceBidOutcome & { accepted: true }).bid.id;
    await store.moderate({ action: "hide", bidId: cleoId, reason: null, sessionId: "operator" });
    await store.placeEntries([maximum("Ann", 1_000, ALICE_SECRET)]);
    expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toMatchObject({ leading: true });
    await store.moderate({ action: "restore", bidId: cleoId, reason: null, sessionId: "operator" });
    // Cleo leads at 800 with nothing answering: Ann's maximum is over, and says so.
    expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toMatchObject({ maximumCents: 1_000, leading: false });
    const [next] = await store.placeBids([{ bidderName: "Bob", amountCents: 900 }]);
    expect(next).not.toHaveProperty("outbidByMaximumCents");
  });
});

describe.each(BACKENDS)("maximum bids and rounds on %s", (backend) => {
  const locationTest = migratedLocationTestOn(backend);
  const rounds: RoundSettings = { roundSeconds: 60, softCloseSeconds: 10 };
  const at = (seconds: number) => new Date(Date.UTC(2026, 10, 28, 12, 0, seconds)).toISOString();

  locationTest(
    "a round's end ends its maximum; an automatic bid in the soft close moves the end",
    async ({ location }) => {
      // The database's clock is set per session (auction.test_now): one connection, driven directly.
      await withDirectSql(location, async (query) => {
        const store = storeQueries(query, rounds);
        const setClock = (seconds: number) => query("SELECT set_config('auction.test_now', $1, false)", [at(seconds)]);
        await setClock(0);
        await store.placeEntries([maximum("Alice", 1_000, ALICE_SECRET)]);
        // 55 s in: 5 s left, inside the 10 s soft close. Bob's bid and Alice's automatic answer both count.
        await setClock(55);
        const [answered] = await store.placeBids([{ bidderName: "Bob", amountCents: 100 }]);
        expect(answered).toMatchObject({ accepted: true, outbidByMaximumCents: 100 + INC, endsAt: at(65) });
        // A tie stores only the automatic bid: that alone moves the end.
        await setClock(62);
        const [tie] = await store.placeBids([{ bidderName: "Bob", amountCents: 1_000 }]);
        expect(tie).toMatchObject({ accepted: false, code: "outbid_by_maximum", endsAt: at(72) });
        // A raise stores no bid: the end stays.
        await setClock(70);
        const [raise] = await store.placeEntries([maximum("Alice", 5_000, ALICE_SECRET)]);
        expect(raise).toMatchObject({ accepted: true, raised: true, endsAt: at(72) });
        await setClock(80);
        expect(await store.settleRound()).toMatchObject({ number: 1, closed: true });
        expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toEqual({
          round: 1,
          maximumCents: 5_000,
          leading: false,
        });
        // The next round has no maximum: a plain bid is not answered.
        const [next] = await store.placeBids([{ bidderName: "Bob", amountCents: 5 }]);
        expect(next).toMatchObject({ accepted: true, round: 2 });
        expect(next).not.toHaveProperty("outbidByMaximumCents");
        expect(await store.ownMaximum(ownerOf(ALICE_SECRET))).toEqual({ round: 2, maximumCents: null, leading: false });
        expect(await maximumRows(query)).toEqual([
          { name: "Alice", maximumCents: 5_000, owner: ownerOf(ALICE_SECRET), ended: "round_ended" },
        ]);
      });
    },
  );
});

// ---- Random batches against the model ---------------------------------------------------------

const NAMES = ["Ann", "Bob", "Cy"] as const;
const OWNERS = ["owner-a", "owner-b", "owner-c"] as const;

/** An amount near what matters: the smallest winning bid, the leading maximum, or anywhere. */
type AmountSpec = { nearNext: number } | { nearLeading: number } | { cents: number };
type EntrySpec = { kind: "bid" | "maximum"; name: number; owner: number; amount: AmountSpec };

const amountSpec: fc.Arbitrary<AmountSpec> = fc.oneof(
  fc.record({ nearNext: fc.integer({ min: -1, max: 3 }) }),
  fc.record({ nearLeading: fc.integer({ min: -2, max: 2 }) }),
  fc.record({ cents: fc.integer({ min: 1, max: 400 }) }),
);
const entrySpec: fc.Arbitrary<EntrySpec> = fc.record({
  kind: fc.constantFrom("bid" as const, "maximum" as const),
  name: fc.nat({ max: NAMES.length - 1 }),
  owner: fc.nat({ max: OWNERS.length - 1 }),
  amount: amountSpec,
});
const batches = fc.array(fc.array(entrySpec, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 });

function entryOf(spec: EntrySpec, model: MaximumRuleModel): ModelEntry {
  const next = modelNextWinningCents(model.highest?.cents ?? null);
  const leading = model.leading?.maximumCents ?? next;
  const raw =
    "nearNext" in spec.amount
      ? next + spec.amount.nearNext * INC
      : "nearLeading" in spec.amount
        ? leading + spec.amount.nearLeading * INC
        : spec.amount.cents;
  const cents = Math.max(1, raw);
  const name = NAMES[spec.name] as string;
  // An owner is one browser: it bids under one name here, as a page keeps its name.
  return spec.kind === "bid"
    ? { kind: "bid", name, cents }
    : { kind: "maximum", name, maximumCents: cents, owner: ownerOf(OWNERS[spec.owner] as string) };
}

describe.each(BACKENDS)("maximum bids against the model on %s", (backend) => {
  const locationTest = migratedLocationTestOn(backend);

  locationTest("answers random batches of bids and maximums as the rule does, entry by entry", async ({ location }) => {
    let placedSoFar = 0;
    let maximumsSoFar = 0;
    await withDirectSql(location, async (query) => {
      const store = storeQueries(query, ENDLESS_ROUNDS);
      await fc.assert(
        fc.asyncProperty(batches, async (run) => {
          await emptyAuction(query);
          const model = new MaximumRuleModel();
          for (const [index, specs] of run.entries()) {
            // The entries as the bidders chose them, each after the one before in the model.
            const entries: ModelEntry[] = [];
            const expected = [];
            for (const spec of specs) {
              const entry = entryOf(spec, model);
              entries.push(entry);
              expected.push(expectedOf(model.place(entry), entry));
            }
            const placements = entries.map(toPlacement);
            const outcomes = await store.placeEntries(placements);
            expect(
              outcomes.map((outcome, at) => answerOf(outcome, placements[at] as Placement)),
              `batch ${index} ${JSON.stringify(entries)}`,
            ).toEqual(expected);
          }
          const view = await store.view(50);
          expect(await storedBids(query)).toEqual(model.bids);
          expect(view.bids.map((b) => ({ name: b.bidderName, cents: b.amountCents })).reverse()).toEqual(
            model.bids.slice(-50),
          );
          // The one open maximum is the model's leader, amount and owner.
          const open = (await maximumRows(query)).filter((row) => row.ended === null);
          expect(open.map(({ name, maximumCents, owner }) => ({ name, maximumCents, owner }))).toEqual(
            model.leading ? [model.leading] : [],
          );
          placedSoFar += model.bids.length;
          maximumsSoFar += model.leading ? 1 : 0;
        }),
        seededRuns(20_261_128, 60, backend),
      );
    });
    // The runs reached the branches: bids were stored and maximums led at the end of some runs.
    expect(placedSoFar).toBeGreaterThan(100);
    expect(maximumsSoFar).toBeGreaterThan(5);
  });
});

/** An empty auction: no bids, rounds or maximums, ids from 1, the state row as migrated. */
async function emptyAuction(query: DirectQuery): Promise<void> {
  await query(
    "TRUNCATE auction_moderation_log, auction_bids, auction_rounds, auction_maximums, auction_state RESTART IDENTITY",
  );
  await query("INSERT INTO auction_state DEFAULT VALUES");
}

// ---- Two instances at once ---------------------------------------------------------------------

/** A caller's batches, amounts fixed in advance and rising, so that they meet near the price. */
const NAMES_AT_ONCE = ["Ann", "Bob", "Cy", "Dee"] as const;
const concurrentEntry = (step: number) =>
  fc.record({
    kind: fc.constantFrom("bid" as const, "maximum" as const),
    name: fc.nat({ max: NAMES_AT_ONCE.length - 1 }),
    // A second browser under the same name now and then.
    otherBrowser: fc.boolean(),
    cents: fc.integer({ min: step * 20 + 1, max: step * 20 + 80 }),
  });
const callerBatches = fc
  .array(fc.nat({ max: 4 }), { minLength: 12, maxLength: 12 })
  .chain((sizes) =>
    fc.tuple(
      ...sizes.map((size, step) => fc.array(concurrentEntry(step), { minLength: size + 1, maxLength: size + 1 })),
    ),
  );

function fixedEntries(batch: { kind: "bid" | "maximum"; name: number; otherBrowser: boolean; cents: number }[]) {
  return batch.map((spec): ModelEntry => {
    const name = NAMES_AT_ONCE[spec.name] as string;
    return spec.kind === "bid"
      ? { kind: "bid", name, cents: spec.cents }
      : {
          kind: "maximum",
          name,
          maximumCents: spec.cents * 3,
          owner: ownerOf(`${name}-${spec.otherBrowser ? "phone" : "laptop"}`),
        };
  });
}

/** Most orders of the two callers' batches tried before giving up: every search is bounded. */
const MAX_ORDERS_TRIED = 200_000;

/**
 * Whether some order of the two callers' batches (each caller's in its own order) gives exactly
 * the answers each got and the bids stored, by the model.
 */
function someOrderExplains(
  callers: { entries: ModelEntry[][]; answers: unknown[][] }[],
  stored: { name: string; cents: number }[],
): boolean {
  let tried = 0;
  const search = (at: number[], model: MaximumRuleModel): boolean => {
    if (++tried > MAX_ORDERS_TRIED) throw new Error(`no order found within ${MAX_ORDERS_TRIED} tries`);
    if (callers.every((caller, index) => at[index] === caller.entries.length)) {
      return isDeepStrictEqual(model.bids, stored);
    }
    return callers.some((caller, index) => {
      const batch = caller.entries[at[index] as number];
      if (!batch) return false;
      const next = model.clone();
      const expected = batch.map((entry) => expectedOf(next.place(entry), entry));
      if (!isDeepStrictEqual(expected, caller.answers[at[index] as number])) return false;
      return search(
        at.map((value, other) => (other === index ? value + 1 : value)),
        next,
      );
    });
  };
  return search(
    callers.map(() => 0),
    new MaximumRuleModel(),
  );
}

describe.each(BACKENDS)("maximum bids from two instances at once on %s", (backend) => {
  it("answers and stores each entry once, as some order of the batches would", async () => {
    const location = await locationForThisTest(backend);
    // PostgreSQL: two instances, each its own pool. PGlite is one process: two callers of one store.
    const first = await storeForThisTest(location);
    const second = backend === "postgres" ? await storeForThisTest(location) : first;
    const [batchesA, batchesB] = fc.sample(
      fc.tuple(callerBatches, callerBatches),
      seededRuns(20_261_129, 1, backend),
    )[0] as [Parameters<typeof fixedEntries>[0][], Parameters<typeof fixedEntries>[0][]];
    const callers = [batchesA, batchesB].map((batches) => ({
      entries: batches.map(fixedEntries),
      answers: [] as unknown[][],
    }));
    await Promise.all(
      [first, second].map(async (store, index) => {
        const caller = callers[index] as (typeof callers)[number];
        for (const entries of caller.entries) {
          const placements = entries.map(toPlacement);
          const outcomes: (PlaceBidOutcome | MaximumOutcome)[] = await store.placeEntries(placements);
          caller.answers.push(outcomes.map((outcome, at) => answerOf(outcome, placements[at] as Placement)));
        }
      }),
    );
    await first.close();
    if (second !== first) await second.close();
    const stored = await withDirectSql(location, storedBids);
    expect(stored.length).toBeGreaterThan(10);
    // The run met the rule's branches, not only plain bids.
    const outcomes = new Set(
      callers.flatMap((caller) => caller.answers.flat().map((answer) => (answer as { outcome: string }).outcome)),
    );
    expect([...outcomes].sort()).toEqual(
      expect.arrayContaining(["accepted", "maximum_set", "outbid_by_maximum", "too_low"]),
    );
    expect(someOrderExplains(callers, stored)).toBe(true);
    // At most one maximum open, and it is the leader's: the model's at the end of that order.
    const open = (await withDirectSql(location, maximumRows)).filter((row) => row.ended === null);
    expect(open.length).toBeLessThanOrEqual(1);
  });
});
