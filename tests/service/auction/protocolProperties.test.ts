/**
 * Property-based tests of the protocol and the bid rules against a running service, on both
 * backends: thousands of generated frames (valid bids, near-valid bids with one field mutated,
 * arbitrary JSON, arbitrary text, raw number tokens, oversize frames), each answered exactly as an
 * independent model (harness/auctionModel.ts) says; afterwards every stored row within the rules.
 * Then the database's own checks against the JavaScript rules, code point by code point.
 *
 * Reproducible: the seed is fixed and printed; FC_SEED=<n> runs another one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import { PLACE_BID_SQL, placeBidParameters } from "../../../service/storage/queries.ts";
import { ENDLESS_ROUNDS } from "../../../service/storage/types.ts";
import { checkAboveHighest, checkAmount, checkBidderName } from "../../../src/lib/auction/bidRules.ts";
import { SNAPSHOT_SIZE } from "../../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS } from "../../../src/lib/auction/refusalTexts.ts";
import { seededRuns } from "../../harness/seededRuns.ts";
import {
  AuctionModel,
  centsToDecimalText,
  codePointsOf,
  decimalTextToCents,
  type ExpectedAnswer,
  isForbiddenInName,
  MODEL_MAX_CENTS,
  MODEL_MAX_MESSAGE_BYTES,
  MODEL_MAX_NAME_CODE_POINTS,
  modelNextWinningCents,
  modelTooLow,
  modelTooLowMessage,
} from "../harness/auctionModel.ts";
import { serviceForThisTest } from "../harness/auctionService.ts";
import { connectRaw, type Outcome, type RawClient, unheardBids } from "../harness/rawClient.ts";
import {
  BACKENDS,
  type Backend,
  cleanUpAfter,
  type DirectQuery,
  freshStoreForThisTest,
  migratedLocationForThisTest,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

/** Generated runs per backend; each run is a sequence of 1 to 16 frames (8.5 on average). */
const RUNS: Record<Backend, number> = { postgres: 400, pglite: 250 };

// ---- Generated frames ----------------------------------------------------------------------

/** Characters that sit on the rules' edges: white space trimmed or not, Cc, Cf, joined emoji, marks, astral, surrogates. */
const EDGE_CHARACTERS = [
  " ",
  "\t",
  "\n",
  "\u000b",
  "\u00a0",
  "\u1680",
  "\u2007",
  "\u2028",
  "\u3000",
  "\ufeff",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u009f",
  "\u00ad",
  "\u061c",
  "\u180e",
  "\u200b",
  "\u200d",
  "\u202e",
  "\u2066",
  "\u{110bd}",
  "\u{1d173}",
  "\u{e0001}",
  "\u{e007f}",
  "\u0301",
  "\u0489",
  "\u{1f600}",
  "\u{1f468}\u200d\u{1f469}",
  "\u{1f469}\u{1f3fd}\u200d\u{1f4bb}",
  "\u{1f3fd}",
  "\ufe0f",
  "\u{10ffff}",
  "\ufffd",
  "\ud800",
  "\udfff",
  "a",
  "é",
  "<",
  "&",
  '"',
  "\\",
];
const edgeCharacter = fc.constantFrom(...EDGE_CHARACTERS);

const bidderName = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 44 }) },
  {
    weight: 3,
    arbitrary: fc.string({ unit: fc.oneof(edgeCharacter, fc.string({ minLength: 1, maxLength: 1 })), maxLength: 44 }),
  },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 36, maxLength: 42 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 38, max: 42 }), fc.constantFrom("", " ", "\u3000", "\t"))
      .map(([count, pad]) => `${pad}${"\u{1f600}".repeat(count)}${pad}`),
  },
);

/**
 * An amount decided when the frame is sent: relative ones follow the smallest winning amount (the
 * rising high plus the increment), so some win.
 */
type AmountSpec = { overNextCents: number; thousandths?: number } | { value: number };

const amountSpec: fc.Arbitrary<AmountSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ overNextCents: fc.integer({ min: -4, max: 1_999 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      overNextCents: fc.integer({ min: 0, max: 499 }),
      thousandths: fc.integer({ min: 1, max: 9 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ value: fc.double() }) },
  { weight: 1, arbitrary: fc.record({ value: fc.integer({ min: -1_000_000, max: 2 * MODEL_MAX_CENTS }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      value: fc.constantFrom(0, -0, -0.01, 1e-7, 5e-324, 0.1 + 0.2, 1_000_000_000.01, 1e21, Number.MAX_VALUE),
    }),
  },
);

type Mutation =
  | { kind: "none" }
  | { kind: "drop"; field: string }
  | { kind: "extra"; field: string; value: fc.JsonValue }
  | { kind: "replace"; field: string; value: fc.JsonValue };

const bidField = fc.constantFrom("type", "requestId", "bidderName", "amount");
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), field: bidField }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      field: fc.oneof(fc.constantFrom("amout", "__proto__", "constructor", "id", "Type"), fc.string()),
      value: fc.jsonValue({ maxDepth: 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("replace" as const),
      field: bidField,
      value: fc.jsonValue({ maxDepth: 1 }),
    }),
  },
);

const requestId = fc.oneof(
  { weight: 9, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 64 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 70 }) },
);

/** Number tokens JSON may or may not allow, written into the frame's text as they are. */
const RAW_AMOUNTS = [
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "-1e309",
  "-0",
  "0x10",
  "01",
  ".5",
  "5.",
  "+5",
  "1e2",
  "1E-2",
  "1.005",
  "1_000",
];

type FrameSpec =
  | { kind: "bid"; requestId: string; bidderName: string; amount: AmountSpec; mutation: Mutation }
  | { kind: "rawAmount"; requestId: string; bidderName: string; token: string }
  | { kind: "ping"; extra: boolean }
  | { kind: "json"; value: fc.JsonValue }
  | { kind: "text"; text: string }
  | { kind: "oversize"; bytes: number };

const frameSpec: fc.Arbitrary<FrameSpec> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record({ kind: fc.constant("bid" as const), requestId, bidderName, amount: amountSpec, mutation }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("rawAmount" as const),
      requestId,
      bidderName,
      token: fc.constantFrom(...RAW_AMOUNTS),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("ping" as const), extra: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("json" as const), value: fc.jsonValue() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("text" as const), text: fc.string({ unit: "binary" }) }) },
  // Around the limit: frames of exactly 4096 bytes pass, one byte more closes the socket.
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("oversize" as const),
      bytes: fc.integer({ min: MODEL_MAX_MESSAGE_BYTES - 6, max: MODEL_MAX_MESSAGE_BYTES + 100 }),
    }),
  },
);

/** The amount as the JSON number a client would send, exact to the cent where the spec says cents. */
function amountValue(spec: AmountSpec, highestCents: number | null): number {
  if ("value" in spec) return spec.value;
  const cents = BigInt(modelNextWinningCents(highestCents) + spec.overNextCents);
  const text = centsToDecimalText(cents);
  return Number(spec.thousandths === undefined ? text : `${text}${spec.thousandths}`);
}

/** The text of one frame; JSON.stringify writes NaN and Infinity as null and lone surrogates as \u escapes. */
function renderFrame(spec: FrameSpec, highestCents: number | null): string {
  switch (spec.kind) {
    case "bid": {
      const bid: Record<string, unknown> = {
        type: "bid",
        requestId: spec.requestId,
        bidderName: spec.bidderName,
        amount: amountValue(spec.amount, highestCents),
      };
      const { mutation: change } = spec;
      if (change.kind === "drop") delete bid[change.field];
      // defineProperty: a plain assignment to "__proto__" would set the prototype, not a field.
      if (change.kind === "extra" || change.kind === "replace") {
        Object.defineProperty(bid, change.field, { value: change.value, enumerable: true, writable: true });
      }
      return JSON.stringify(bid);
    }
    case "rawAmount":
      return `{"type":"bid","requestId":${JSON.stringify(spec.requestId)},"bidderName":${JSON.stringify(spec.bidderName)},"amount":${spec.token}}`;
    case "ping":
      return JSON.stringify(spec.extra ? { type: "ping", requestId: "ping-1" } : { type: "ping" });
    case "json":
      return JSON.stringify(spec.value);
    case "text":
      return spec.text;
    case "oversize": {
      const frame = JSON.stringify({ type: "ping", padding: "" });
      return JSON.stringify({ type: "ping", padding: "x".repeat(spec.bytes - frame.length) });
    }
  }
}

// ---- The service's answer, in the model's terms ---------------------------------------------

function observed(outcome: Outcome): ExpectedAnswer | Outcome {
  switch (outcome.type) {
    case "closed":
      return outcome.code === 1009 ? { type: "closed", code: 1009 } : outcome;
    case "pong":
    case "payment":
    case "purchase":
      return outcome;
    case "accepted":
      return {
        type: "accepted",
        requestId: outcome.requestId,
        bidderName: outcome.bid.bidderName,
        amountCents: outcome.bid.amountCents,
      };
    case "error":
      if (outcome.code === "bad_message") {
        if (!outcome.message.startsWith(REFUSAL_TEXTS.bad_message) || outcome.highestCents !== undefined)
          return outcome;
        return { type: "error", code: "bad_message", requestId: outcome.requestId };
      }
      if (
        outcome.code === "invalid_name" ||
        outcome.code === "name_not_allowed" ||
        outcome.code === "invalid_amount" ||
        outcome.code === "too_low"
      ) {
        const docMessage =
          outcome.code === "too_low" ? modelTooLowMessage(outcome.highestCents ?? 0) : REFUSAL_TEXTS[outcome.code];
        if (outcome.message !== docMessage || outcome.requestId === undefined || outcome.highestCents === undefined) {
          return outcome;
        }
        return { type: "error", code: outcome.code, requestId: outcome.requestId, highestCents: outcome.highestCents };
      }
      return outcome;
    default:
      return outcome;
  }
}

// ---- The rows, checked against the rules independently of the service ------------------------

interface Row {
  id: number;
  bidderName: string;
  amountCents: number;
}

async function readRows(query: DirectQuery): Promise<Row[]> {
  const rows = await query(
    "SELECT id::text AS id, bidder_name, amount::text AS amount FROM auction_bids ORDER BY auction_bids.id",
  );
  return rows.map((row) => {
    const cents = decimalTextToCents(String(row.amount));
    if (cents === null) throw new Error(`amount ${row.amount} of bid ${row.id} is not a 2-decimal number`);
    return { id: Number(row.id), bidderName: String(row.bidder_name), amountCents: Number(cents) };
  });
}

function ruleBreaks(rows: Row[]): string[] {
  const problems: string[] = [];
  rows.forEach((row, index) => {
    const points = codePointsOf(row.bidderName);
    if (points.length < 1 || points.length > MODEL_MAX_NAME_CODE_POINTS) problems.push(`bid ${row.id}: name length`);
    if (points.some(isForbiddenInName)) problems.push(`bid ${row.id}: control or format character in the name`);
    if (row.bidderName !== row.bidderName.trim()) problems.push(`bid ${row.id}: name not trimmed`);
    if (row.amountCents < 1 || row.amountCents > MODEL_MAX_CENTS) problems.push(`bid ${row.id}: amount out of range`);
    const previous = rows[index - 1];
    if (previous && !(row.id > previous.id && !modelTooLow(row.amountCents, previous.amountCents))) {
      problems.push(`bid ${row.id}: not above bid ${previous.id}`);
    }
  });
  return problems;
}

// ---- The properties ---------------------------------------------------------------------------

describe.each(BACKENDS)("generated frames against the service on %s", (backend) => {
  it("answers every frame as the model says, stores only rule-abiding rows and broadcasts each accepted bid once", async () => {
    const { location, store } = await freshStoreForThisTest(backend);
    const service = await serviceForThisTest(store, LIFTED_LIMITS);

    const watcher = await connectRaw(service.socketUrl);
    cleanUpAfter(() => watcher.close());
    await watcher.opening();
    let client: RawClient = await connectRaw(service.socketUrl);
    cleanUpAfter(() => client.close());
    await client.opening();

    const model = new AuctionModel();
    const accepted: Row[] = [];
    const tally = { frames: 0, accepted: 0, refused: {} as Record<string, number>, pongs: 0, closed: 0 };
    const started = performance.now();

    await fc.assert(
      fc.asyncProperty(fc.array(frameSpec, { minLength: 1, maxLength: 16 }), async (frames) => {
        for (const spec of frames) {
          const text = renderFrame(spec, model.highestCents);
          const expected = model.expect(text);
          const outcome = await client.exchange(text);
          tally.frames++;
          if (outcome.type === "accepted") {
            // The model follows what the service did, so a shrunk replay is judged from the same state.
            expect(outcome.bid.id, "ids rise").toBeGreaterThan(model.lastId);
            model.record(outcome.bid);
            accepted.push({
              id: outcome.bid.id,
              bidderName: outcome.bid.bidderName,
              amountCents: outcome.bid.amountCents,
            });
            tally.accepted++;
          } else if (outcome.type === "error") tally.refused[outcome.code] = (tally.refused[outcome.code] ?? 0) + 1;
          else if (outcome.type === "pong") tally.pongs++;
          else {
            tally.closed++;
            client = await connectRaw(service.socketUrl);
            await client.opening();
          }
          expect(observed(outcome), `answer to ${JSON.stringify(text).slice(0, 300)}`).toEqual(expected);
        }
      }),
      seededRuns(20_261_122, RUNS[backend], backend),
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.info(`${backend}: ${tally.frames} frames in ${seconds} s; ${JSON.stringify(tally)}`);
    expect(tally.frames).toBeGreaterThan(RUNS[backend]);
    expect(tally.accepted).toBeGreaterThan(0);

    // Still alive, and a fresh socket sees what the database holds.
    const health = await fetch(`${service.httpUrl}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: "ok" }]);
    const fresh = await connectRaw(service.socketUrl);
    cleanUpAfter(() => fresh.close());
    const snapshot = await fresh.opening();
    await waitFor(
      "the watcher to hear the last accepted bid",
      () => watcher.broadcasts.at(-1)?.id === accepted.at(-1)?.id,
    );
    expect(unheardBids(watcher.bidFrames, accepted), "every accepted bid broadcast once, in id order").toEqual([]);

    await service.stop();
    await store.close();
    const rows = await withDirectSql(location, readRows);
    expect(ruleBreaks(rows)).toEqual([]);
    expect(rows).toHaveLength(model.acceptances);
    expect(rows).toEqual(accepted);
    const newest = rows.slice(-SNAPSHOT_SIZE).reverse();
    expect(snapshot.type).toBe("snapshot");
    expect(snapshot.bids.map(({ id, bidderName, amountCents }) => ({ id, bidderName, amountCents }))).toEqual(newest);
    expect(snapshot.highest?.id ?? null).toBe(rows.at(-1)?.id ?? null);
    expect(snapshot.bidders).toBe(new Set(rows.map((row) => row.bidderName)).size);
  });
});

/**
 * The table's name checks as one SQL condition on `bidder_name`: its CHECK expressions (the length,
 * the trimmed ends) and the tests of new rows' trigger (sql/functions/45_bidder_names.sql: no
 * control character, joiners between emoji only, something visible).
 */
async function tableNameChecks(query: DirectQuery): Promise<string> {
  const checks = await query(
    `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
     WHERE conrelid = 'auction_bids'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%bidder_name%'`,
  );
  expect(checks.length).toBeGreaterThanOrEqual(2);
  const triggerTests = [
    "auction_bidder_name_free_of_controls",
    "auction_bidder_name_joins_emoji",
    "auction_bidder_name_visible",
  ];
  // The trigger's function calls each test, so these are the tests new rows meet.
  const [trigger] = await query(
    `SELECT p.prosrc FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
     WHERE t.tgrelid = 'auction_bids'::regclass AND t.tgname = 'auction_bids_name_characters'`,
  );
  for (const test of triggerTests) expect(String(trigger?.prosrc)).toContain(`${test}(NEW.bidder_name)`);
  return [
    ...checks.map((check) => String(check.def).replace(/^CHECK /, "")),
    ...triggerTests.map((test) => `${test}(bidder_name)`),
  ].join(" AND ");
}

/**
 * A name made around one code point: every one from U+0001 (no text holds NUL) but the
 * surrogates, in SQL (`cp` the code point) and in JavaScript.
 */
interface NameShape {
  label: string;
  sql: string;
  text: (character: string) => string;
}

/** The code points whose name the table refuses, evaluated in SQL over every code point. */
async function refusedByTable(query: DirectQuery, checks: string, shape: NameShape): Promise<number[]> {
  const rows = await query(
    `SELECT cp FROM (SELECT cp, ${shape.sql} AS bidder_name FROM generate_series(1, 1114111) AS cp
       WHERE cp NOT BETWEEN 55296 AND 57343) AS names
     WHERE NOT (${checks}) ORDER BY cp`,
  );
  return rows.map((row) => Number(row.cp));
}

/** The code points whose name the rules refuse or would store otherwise (trimmed: the table refuses it too). */
function refusedByRules(shape: NameShape): number[] {
  const refused: number[] = [];
  for (let point = 1; point <= 0x10ffff; point++) {
    if (point >= 0xd800 && point <= 0xdfff) continue;
    const name = shape.text(String.fromCodePoint(point));
    const rule = checkBidderName(name);
    if (!(rule.ok && rule.value === name)) refused.push(point);
  }
  return refused;
}

/** Where the table and the rules disagree, in hex: a short answer when they do, of a million code points. */
function disagreements(byTable: number[], byRules: number[]) {
  const table = new Set(byTable);
  const rules = new Set(byRules);
  const hex = (points: number[]) => points.map((point) => point.toString(16));
  return {
    refusedOnlyByTable: hex(byTable.filter((point) => !rules.has(point))),
    refusedOnlyByRules: hex(byRules.filter((point) => !table.has(point))),
  };
}
const AGREE = { refusedOnlyByTable: [], refusedOnlyByRules: [] };

describe("the database's name checks against the bid rules", () => {
  // Once, on PostgreSQL: the checks are the same migrations' code point ranges on either backend,
  // and a million regular expression tests take PGlite (WebAssembly) three times as long.
  it("refuse exactly the one-character names the rules refuse, over every code point", async () => {
    const location = await migratedLocationForThisTest("postgres");
    const alone: NameShape = { label: "alone", sql: "chr(cp)", text: (character) => character };
    const refused = await withDirectSql(location, async (query) =>
      refusedByTable(query, await tableNameChecks(query), alone),
    );
    expect(disagreements(refused, refusedByRules(alone))).toEqual(AGREE);
  });

  it("judge a zero width joiner beside every code point as the rules do (docs/design.md#11)", async () => {
    const location = await migratedLocationForThisTest("postgres");
    // 👩 U+1F469, 🚀 U+1F680, a skin tone U+1F3FD, the emoji presentation selector U+FE0F.
    const shapes: NameShape[] = [
      { label: "before a joiner", sql: "chr(cp) || chr(8205) || chr(128640)", text: (c) => `${c}\u200d\u{1f680}` },
      { label: "after a joiner", sql: "chr(128105) || chr(8205) || chr(cp)", text: (c) => `\u{1f469}\u200d${c}` },
      {
        label: "before U+FE0F, a skin tone and a joiner",
        sql: "chr(cp) || chr(65039) || chr(127997) || chr(8205) || chr(128640)",
        text: (c) => `${c}\ufe0f\u{1f3fd}\u200d\u{1f680}`,
      },
      {
        label: "before a skin tone, U+FE0F and a joiner",
        sql: "chr(cp) || chr(127997) || chr(65039) || chr(8205) || chr(128640)",
        text: (c) => `${c}\u{1f3fd}\ufe0f\u200d\u{1f680}`,
      },
    ];
    await withDirectSql(location, async (query) => {
      const checks = await tableNameChecks(query);
      for (const shape of shapes) {
        const byRules = refusedByRules(shape);
        // Both ways are taken: a pictograph joins (🚀, ©), a letter or a skin tone does not.
        const refused = new Set(byRules);
        expect(
          [0x1f680, 0xa9, 0x61, 0x1f3fd].map((point) => refused.has(point)),
          shape.label,
        ).toEqual([false, false, true, true]);
        expect(disagreements(await refusedByTable(query, checks, shape), byRules), shape.label).toEqual(AGREE);
      }
    });
  });
});

describe.each(BACKENDS)("the database's checks on %s against the bid rules", (backend) => {
  it("place_auction_bid accepts a generated name and amount exactly when the rules do, never with a check violation", async () => {
    const location = await migratedLocationForThisTest(backend);
    const name = fc.oneof(
      fc.string({ unit: "binary", maxLength: 42 }),
      fc.string({ unit: fc.constantFrom(...EDGE_CHARACTERS.filter((text) => text.isWellFormed())), maxLength: 42 }),
      fc.string({ unit: "grapheme", minLength: 35, maxLength: 42 }),
    );
    const cents = fc.oneof(
      fc.integer({ min: -2, max: 100_000 }),
      fc.integer({ min: MODEL_MAX_CENTS - 2, max: MODEL_MAX_CENTS + 2 }),
      fc.integer({ min: 1, max: MODEL_MAX_CENTS }),
    );
    let tried = 0;
    await withDirectSql(location, async (query) => {
      await fc.assert(
        fc.asyncProperty(name, cents, async (bidderName, amountCents) => {
          tried++;
          const rule = checkBidderName(bidderName);
          // The first bid of an empty auction.
          const ruleAccepts =
            rule.ok &&
            rule.value === bidderName &&
            checkAmount(amountCents / 100).ok &&
            checkAboveHighest(amountCents, null).ok;
          await query("BEGIN");
          try {
            const outcome = await query(
              PLACE_BID_SQL,
              placeBidParameters(bidderName, amountCents, ENDLESS_ROUNDS),
            ).then(
              (rows) => ({ accepted: rows[0]?.outcome === "accepted", sqlState: null }),
              (error: { code?: string }) => ({ accepted: false, sqlState: error.code ?? "no code" }),
            );
            // NUL cannot be sent as text at all (22021). An amount below the first bid's floor (an
            // empty auction) is refused before any row is written. Any other refusal must be a
            // check violation.
            const expected = bidderName.includes("\u0000")
              ? { accepted: false, sqlState: "22021" }
              : !checkAboveHighest(amountCents, null).ok
                ? { accepted: false, sqlState: null }
                : ruleAccepts
                  ? { accepted: true, sqlState: null }
                  : { accepted: false, sqlState: "23514" };
            expect(outcome, JSON.stringify(bidderName)).toEqual(expected);
          } finally {
            await query("ROLLBACK");
          }
        }),
        seededRuns(20_261_122, backend === "postgres" ? 400 : 200, backend),
      );
    });
    expect(tried).toBeGreaterThan(0);
  });
});
