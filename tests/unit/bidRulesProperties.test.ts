/**
 * Properties of the bid rules over generated input, compared with the independent model of
 * tests/realtime/support/auctionModel.ts: names of any Unicode, amounts of any double, and the
 * exactness of cents (no float ever turns a 2-decimal amount into the wrong cents).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkAboveHighest,
  checkAmount,
  checkBidderName,
  MAX_BID_CENTS,
  minimumNextBidCents,
  parseAmountInput,
} from "../../src/lib/auction/bidRules.ts";
import { centsToDecimalText, modelAmountCents, modelName } from "../realtime/support/auctionModel.ts";
import { seededRuns } from "../support/seededRuns.ts";

const options = seededRuns(20_261_122, 5_000);

const cents = fc.oneof(
  fc.integer({ min: 1, max: 10_000 }),
  fc.integer({ min: 1, max: MAX_BID_CENTS }),
  fc.integer({ min: MAX_BID_CENTS - 1_000, max: MAX_BID_CENTS }),
);
/** Any code point, lone surrogates included (fast-check's "binary" unit leaves them out). */
const anyUnit = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      " ",
      "\t",
      "\u00a0",
      "\u3000",
      "\ufeff",
      "\u200b",
      "\u202e",
      "\u0301",
      "😀",
      "\u3164",
      "\u2800",
      "\u034f",
      "\ufe0f",
    ),
  },
);

describe("bidder names, generated", () => {
  it("are accepted, and stored as the model says, exactly when the model accepts them", () => {
    fc.assert(
      fc.property(fc.string({ unit: anyUnit, maxLength: 45 }), (raw) => {
        const expected = modelName(raw);
        expect(checkBidderName(raw)).toEqual(
          expected === null ? { ok: false, code: "invalid_name" } : { ok: true, value: expected },
        );
      }),
      options,
    );
  });

  it("once accepted, are accepted again unchanged (the stored form is a fixed point)", () => {
    fc.assert(
      fc.property(fc.string({ unit: anyUnit, maxLength: 45 }), (raw) => {
        const first = checkBidderName(raw);
        if (first.ok) expect(checkBidderName(first.value)).toEqual(first);
      }),
      options,
    );
  });
});

describe("bid amounts, generated", () => {
  it("give the model's cents for any double, or invalid_amount where the model has none", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double(),
          cents.map((value) => value / 100),
          fc.integer(),
        ),
        (dollars) => {
          const expected = modelAmountCents(dollars);
          expect(checkAmount(dollars)).toEqual(
            expected === null ? { ok: false, code: "invalid_amount" } : { ok: true, value: expected },
          );
        },
      ),
      options,
    );
  });

  it("turn any 2-decimal text into its exact cents, through the field and through a JSON number", () => {
    fc.assert(
      fc.property(cents, fc.constantFrom(0, 1, 2), (exact, places) => {
        // "1234.50", "1234.5" or "1234" for whole dollars: the forms a person types.
        let text = centsToDecimalText(BigInt(exact));
        if (places === 1 && text.endsWith("0")) text = text.slice(0, -1);
        if (places === 0 && text.endsWith(".00")) text = text.slice(0, -3);
        expect(parseAmountInput(text)).toEqual({ ok: true, value: exact });
        expect(checkAmount(JSON.parse(text))).toEqual({ ok: true, value: exact });
      }),
      options,
    );
  });

  it("refuse a third decimal that is not zero", () => {
    fc.assert(
      fc.property(cents, fc.integer({ min: 1, max: 9 }), (whole, third) => {
        const text = `${centsToDecimalText(BigInt(whole))}${third}`;
        expect(parseAmountInput(text)).toEqual({ ok: false, code: "invalid_amount" });
        expect(checkAmount(Number(text))).toEqual({ ok: false, code: "invalid_amount" });
      }),
      options,
    );
  });

  it("put the smallest winning bid one cent above the highest, and nothing at or below it wins", () => {
    fc.assert(
      fc.property(fc.option(cents, { nil: null }), cents, (highest, amount) => {
        const next = minimumNextBidCents(highest);
        expect(checkAboveHighest(next, highest).ok).toBe(true);
        expect(checkAboveHighest(amount, highest).ok).toBe(highest === null || amount > highest);
        if (highest !== null) expect(checkAboveHighest(next - 1, highest)).toEqual({ ok: false, code: "too_low" });
      }),
      options,
    );
  });
});
