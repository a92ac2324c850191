/**
 * Properties of the bid rules over generated input, compared with the independent model of
 * tests/service/harness/auctionModel.ts: names of any Unicode, amounts of any double, and the
 * exactness of cents (no float ever turns a 2-decimal amount into the wrong cents).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkAboveHighest,
  checkAmount,
  checkBidderName,
  MAX_BID_CENTS,
  nextWinningCents,
  parseAmountInput,
} from "../../src/lib/auction/bidRules.ts";
import { seededRuns } from "../harness/seededRuns.ts";
import {
  centsToDecimalText,
  modelAmountCents,
  modelName,
  modelNextWinningCents,
  modelTooLow,
} from "../service/harness/auctionModel.ts";

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
  // The parts of emoji joined by U+200D, often enough to meet in every order (docs/design.md#11).
  { weight: 3, arbitrary: fc.constantFrom("\u200d", "\u{1f469}", "\u{1f680}", "\u2764", "\u{1f3fd}", "\ufe0f") },
);

/**
 * An assigned pictograph (Extended_Pictographic) from the BMP or the emoji planes. Unassigned ones
 * are pictographs too, reserved for future emoji, but draw nothing today: a name of them alone is
 * refused for that.
 */
const pictograph = fc
  .oneof(fc.integer({ min: 0x2100, max: 0x2bff }), fc.integer({ min: 0x1f000, max: 0x1fbff }))
  .map((point) => String.fromCodePoint(point))
  .filter((character) => /^\p{Extended_Pictographic}$/u.test(character) && !/^\p{Unassigned}$/u.test(character));
/** One emoji of a joined sequence: a pictograph, maybe in emoji presentation, maybe with a skin tone. */
const joinedElement = fc
  .tuple(
    pictograph,
    fc.constantFrom("", "\ufe0f"),
    fc.constantFrom("", "\u{1f3fb}", "\u{1f3fd}", "\u{1f3ff}"),
    fc.boolean(),
  )
  .map(([base, presentation, skinTone, toneFirst]) =>
    toneFirst ? `${base}${skinTone}${presentation}` : `${base}${presentation}${skinTone}`,
  );
/** 2 to 5 emoji joined by U+200D: at most 3 code points each, so 19 at most. */
const joinedEmoji = fc.array(joinedElement, { minLength: 2, maxLength: 5 }).map((parts) => parts.join("\u200d"));
const letters = fc.string({ unit: fc.constantFrom("a", "Z", "é", " ", "1"), maxLength: 8 });

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

  it("made of emoji parts, joiners and letters, are accepted exactly when the model accepts them", () => {
    // Dense where U+200D is decided: two names in five hold a joiner the rule must judge.
    const part = fc.constantFrom(
      "\u200d",
      "\u{1f469}",
      "\u{1f680}",
      "\u2764",
      "\u{1f3fd}",
      "\ufe0f",
      "a",
      " ",
      "\u200b",
    );
    fc.assert(
      fc.property(fc.string({ unit: part, maxLength: 12 }), (raw) => {
        const expected = modelName(raw);
        expect(checkBidderName(raw), JSON.stringify(raw)).toEqual(
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

describe("emoji joined by U+200D, generated", () => {
  it("are accepted as typed, among letters or alone", () => {
    fc.assert(
      fc.property(letters, joinedEmoji, letters, (before, joined, after) => {
        const name = `${before}${joined}${after}`.trim();
        fc.pre(name.length > 0);
        expect(checkBidderName(name), JSON.stringify(name)).toEqual({ ok: true, value: name });
      }),
      options,
    );
  });

  it("are refused once a joiner strays: first, last, doubled or beside a letter", () => {
    fc.assert(
      fc.property(
        joinedEmoji,
        fc.constantFrom("first", "last", "doubled", "letterBefore", "letterAfter"),
        (joined, stray) => {
          const name = {
            first: `\u200d${joined}`,
            last: `${joined}\u200d`,
            doubled: joined.replace("\u200d", "\u200d\u200d"),
            letterBefore: joined.replace("\u200d", "a\u200d"),
            letterAfter: joined.replace("\u200d", "\u200da"),
          }[stray];
          expect(checkBidderName(name), JSON.stringify(name)).toEqual({ ok: false, code: "invalid_name" });
        },
      ),
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

  it("put the smallest winning bid where the model does, and nothing below it wins", () => {
    fc.assert(
      fc.property(fc.option(cents, { nil: null }), cents, (highest, amount) => {
        const next = nextWinningCents(highest);
        expect(next).toBe(modelNextWinningCents(highest));
        expect(checkAboveHighest(next, highest).ok).toBe(true);
        expect(checkAboveHighest(next - 1, highest)).toEqual({ ok: false, code: "too_low" });
        expect(checkAboveHighest(amount, highest).ok).toBe(!modelTooLow(amount, highest));
      }),
      options,
    );
  });
});
