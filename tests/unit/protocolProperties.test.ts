/**
 * Properties of the wire protocol's parsers over generated messages: what a client or the service
 * serialises is read back as the same message, and no text at all makes a parser throw or accept
 * what the protocol does not allow.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, parseClientMessage, parseServerMessage, SNAPSHOT_SIZE } from "../../src/lib/auction/protocol.ts";
import { seededRuns } from "../harness/seededRuns.ts";
import { AuctionModel } from "../service/harness/auctionModel.ts";

const options = seededRuns(20_261_122, 3_000);

const requestId = fc.string({ minLength: 1, maxLength: 64 });
/** What JSON can carry of a double: JSON.stringify writes -0 as 0, and NaN and Infinity are not numbers in JSON. */
const jsonNumber = fc
  .double({ noNaN: true, noDefaultInfinity: true })
  .map((value) => (Object.is(value, -0) ? 0 : value));
const placeBid = fc.record({
  type: fc.constant("bid" as const),
  requestId,
  bidderName: fc.string({ unit: "binary", maxLength: 50 }),
  amount: jsonNumber,
});

const positive = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const wireBid = fc.record({
  id: positive,
  bidderName: fc.string({ unit: "binary", maxLength: 40 }),
  amountCents: positive,
  createdAt: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
});
const bidders = fc.integer({ min: 0, max: 1_000_000 });
const isoTime = fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
const serverMessage = fc.oneof(
  fc.record({
    type: fc.constantFrom("snapshot" as const, "resume" as const, "moderated" as const, "roundEnded" as const),
    bids: fc.array(wireBid, { maxLength: 5 }),
    highest: fc.option(wireBid, { nil: null }),
    bidders,
    moderation: fc.nat(),
    round: fc.record({
      number: fc.nat(),
      endsAt: fc.option(isoTime, { nil: null }),
      ended: fc.boolean(),
      seconds: fc.nat(),
      softCloseSeconds: fc.nat(),
    }),
    pastWinners: fc.array(fc.record({ round: positive, bid: wireBid, endedAt: isoTime }), { maxLength: 5 }),
    now: isoTime,
  }),
  fc.record({
    type: fc.constant("bid" as const),
    bid: wireBid,
    bidders: bidders.map((count) => count + 1),
    round: positive,
    endsAt: fc.option(isoTime, { nil: null }),
  }),
  // Several bids in one frame (docs/design.md#10): rising ids, lastId the newest's.
  fc
    .record({
      bidders: bidders.map((count) => count + 1),
      round: positive,
      endsAt: fc.option(isoTime, { nil: null }),
      bids: fc.uniqueArray(wireBid, { minLength: 1, maxLength: SNAPSHOT_SIZE, selector: (bid) => bid.id }),
    })
    .map(({ bids, ...standing }) => {
      const rising = bids.toSorted((a, b) => a.id - b.id);
      return { type: "bids" as const, lastId: (rising.at(-1) as { id: number }).id, ...standing, bids: rising };
    }),
  fc.record({ type: fc.constant("accepted" as const), requestId, bid: wireBid, round: positive }),
  fc.record(
    {
      type: fc.constant("error" as const),
      requestId,
      code: fc.constantFrom(...ERROR_CODES),
      message: fc.string(),
      highestCents: fc.option(positive, { nil: null }),
    },
    { requiredKeys: ["type", "code", "message"] },
  ),
  fc.constant({ type: "pong" as const }),
);

describe("client messages, generated", () => {
  it("read back every bid and ping a client serialises, unchanged", () => {
    fc.assert(
      fc.property(fc.oneof(placeBid, fc.constant({ type: "ping" as const })), (message) => {
        expect(parseClientMessage(JSON.stringify(message))).toEqual({ ok: true, message });
      }),
      options,
    );
  });

  it("never throw, and accept any text exactly when the model finds a ping or a well-formed bid in it", () => {
    const model = new AuctionModel();
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc
        .record({ type: fc.constantFrom("bid", "ping", "sell"), requestId: fc.anything() })
        .map((v) => JSON.stringify(v)),
      placeBid.chain((bid) =>
        fc.constantFrom("type", "requestId", "bidderName", "amount", "extra").map((field) => {
          const mutated: Record<string, unknown> = { ...bid };
          if (field === "extra") mutated.extra = 1;
          else delete mutated[field];
          return JSON.stringify(mutated);
        }),
      ),
    );
    fc.assert(
      fc.property(text, (frame) => {
        const parsed = parseClientMessage(frame);
        const expected = model.expect(frame);
        // Frame size is the socket's business, not the parser's.
        if (expected.type === "closed") return;
        // Past the shape the model goes on to judge the bid rules; the parser reads only the shape.
        const wellFormed = !(expected.type === "error" && expected.code === "bad_message");
        expect(parsed.ok).toBe(wellFormed);
        if (!parsed.ok && expected.type === "error") expect(parsed.requestId).toBe(expected.requestId);
      }),
      options,
    );
  });
});

describe("service messages, generated", () => {
  it("read back every message the service can send, unchanged", () => {
    fc.assert(
      fc.property(serverMessage, (message) => {
        expect(parseServerMessage(JSON.stringify(message))).toEqual({ ok: true, message });
      }),
      options,
    );
  });

  it("never throw on any text", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.jsonValue().map((value) => JSON.stringify(value)),
        ),
        (text) => {
          expect(typeof parseServerMessage(text).ok).toBe("boolean");
        },
      ),
      options,
    );
  });
});
