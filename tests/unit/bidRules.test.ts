import { describe, expect, it } from "vitest";
import {
  BID_INCREMENT_CENTS,
  BIDDER_NAME_MAX_CODE_POINTS,
  BIG_JUMP_FACTOR,
  checkAboveHighest,
  checkAmount,
  checkBidderName,
  FIRST_BID_MIN_CENTS,
  isBigJump,
  MAX_BID_CENTS,
  nextWinningCents,
  parseAmountInput,
} from "../../src/lib/auction/bidRules.ts";

const invalidName = { ok: false, code: "invalid_name" };
const invalidAmount = { ok: false, code: "invalid_amount" };

describe("bidder name", () => {
  it("is trimmed before it is checked and stored", () => {
    expect(checkBidderName("  Nobody  ")).toEqual({ ok: true, value: "Nobody" });
    expect(checkBidderName("\t\nNobody\r\n")).toEqual({ ok: true, value: "Nobody" });
  });

  it("must keep at least one character after trimming", () => {
    expect(checkBidderName("")).toEqual(invalidName);
    expect(checkBidderName("   ")).toEqual(invalidName);
    expect(checkBidderName("\u3000\u00a0")).toEqual(invalidName);
  });

  it("counts Unicode code points, not UTF-16 units: 40 pass, 41 do not", () => {
    expect(BIDDER_NAME_MAX_CODE_POINTS).toBe(40);
    expect(checkBidderName("a".repeat(40)).ok).toBe(true);
    expect(checkBidderName("a".repeat(41))).toEqual(invalidName);
    // Each emoji is one code point but two UTF-16 units.
    const emoji40 = "😀".repeat(40);
    expect(emoji40.length).toBe(80);
    expect(checkBidderName(emoji40)).toEqual({ ok: true, value: emoji40 });
    expect(checkBidderName(`${emoji40}😀`)).toEqual(invalidName);
  });

  it("counts a combining mark as a code point of its own", () => {
    const accented20 = "e\u0301".repeat(20);
    expect([...accented20].length).toBe(40);
    expect(checkBidderName(accented20).ok).toBe(true);
    expect(checkBidderName(`${accented20}a`)).toEqual(invalidName);
    expect(checkBidderName(`${"e\u0301".repeat(19)}ee\u0301`)).toEqual(invalidName);
  });

  it("refuses control characters (Cc) anywhere", () => {
    for (const control of ["\u0000", "\u0007", "\t", "\n", "\u001b", "\u007f", "\u0085", "\u009f"]) {
      expect(checkBidderName(`No${control}body`), JSON.stringify(control)).toEqual(invalidName);
    }
  });

  it("refuses format characters (Cf): bidi overrides, zero-width characters", () => {
    for (const format of ["\u202e", "\u202d", "\u2066", "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"]) {
      expect(checkBidderName(`No${format}body`), JSON.stringify(format)).toEqual(invalidName);
    }
    expect(checkBidderName("\u202egnihton")).toEqual(invalidName);
  });

  it("accepts U+200D (a format character) where it joins two emoji, stored as typed (docs/design.md#11)", () => {
    for (const name of [
      "\u{1f469}\u200d\u{1f680}", // woman astronaut
      "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}", // family: man, woman, girl
      "\u{1f3f3}\ufe0f\u200d\u{1f308}", // rainbow flag: the white flag in emoji presentation
      "\u{1f469}\u{1f3fd}\u200d\u{1f4bb}", // woman technologist, medium skin tone
      "\u{1f3f3}\ufe0f\u200d\u26a7\ufe0f", // transgender flag, ending in U+FE0F
      "\u2764\ufe0f\u200d\u{1f525}", // heart on fire: a pictograph from the BMP
      "\u{1f441}\ufe0f\u200d\u{1f5e8}\ufe0f", // eye in speech bubble
      "\u{1f9d1}\u{1f3fb}\u200d\u2764\ufe0f\u200d\u{1f48b}\u200d\u{1f9d1}\u{1f3fc}", // kiss, two skin tones
      "\u{1f469}\u{1f3fd}\ufe0f\u200d\u{1f680}", // a skin tone and U+FE0F, in either order
      "\u{1f469}\ufe0f\u{1f3fd}\u200d\u{1f680}",
      "Ana \u{1f469}\u200d\u{1f680} Nobody",
    ]) {
      expect(checkBidderName(name), JSON.stringify(name)).toEqual({ ok: true, value: name });
    }
    // Trimmed around the emoji, as any name.
    expect(checkBidderName(" \u{1f469}\u200d\u{1f680}\u3000")).toEqual({ ok: true, value: "\u{1f469}\u200d\u{1f680}" });
  });

  it("refuses U+200D anywhere else: alone, first, last, doubled, or beside anything but a pictograph", () => {
    for (const stray of [
      "\u200d",
      "\u200d\u200d",
      "a\u200db",
      "No\u200dbody",
      "\u200d\u{1f680}",
      "\u{1f469}\u200d",
      " \u{1f469}\u200d ", // trimmed, the joiner is last
      "\u{1f469}\u200d\u200d\u{1f680}",
      "\u{1f469}\u200da",
      "a\u200d\u{1f680}",
      "\u{1f3fd}\u200d\u{1f680}", // after a skin tone alone
      "\u{1f469}\u{1f3fd}\u{1f3fd}\u200d\u{1f680}", // two skin tones
      "\u{1f469}\ufe0f\ufe0f\u200d\u{1f680}", // two presentation selectors
      "\u{1f469}\u200d\ufe0f\u{1f680}", // the selector after the joiner
      "\u{1f469}\u200d\u{1f3fd}", // before a skin tone
      "1\ufe0f\u20e3\u200d\u{1f680}", // after a keycap: a digit is no pictograph
      "\u{1f1f3}\u{1f1f4}\u200d\u{1f680}", // after a flag: regional indicators are no pictographs
    ]) {
      expect(checkBidderName(stray), JSON.stringify(stray)).toEqual(invalidName);
    }
  });

  it("refuses the other format characters between emoji, and a joined emoji with one elsewhere", () => {
    for (const format of ["\u200b", "\u200c", "\u2060", "\u00ad", "\u202e"]) {
      expect(checkBidderName(`\u{1f469}${format}\u{1f680}`), JSON.stringify(format)).toEqual(invalidName);
      expect(checkBidderName(`\u{1f469}\u200d\u{1f680}${format}x`), JSON.stringify(format)).toEqual(invalidName);
    }
    // A subdivision flag is spelled with tag characters (Cf): still refused.
    expect(checkBidderName("\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}")).toEqual(invalidName);
  });

  it("counts each code point of a joined emoji toward the 40", () => {
    const astronaut = "\u{1f469}\u200d\u{1f680}";
    const thirteen = astronaut.repeat(13);
    expect([...`${thirteen}x`].length).toBe(40);
    expect(checkBidderName(`${thirteen}x`).ok).toBe(true);
    expect(checkBidderName(`${thirteen}xy`)).toEqual(invalidName);
  });

  it("refuses a lone surrogate, which a JSON \\u escape can carry but no name can store", () => {
    for (const lone of ["\ud800", "\udfff", "a\ud83d", "\ude00b"]) {
      expect(checkBidderName(lone), JSON.stringify(lone)).toEqual(invalidName);
    }
    expect(checkBidderName("\ud83d\ude00")).toEqual({ ok: true, value: "\u{1f600}" });
  });

  it("refuses a name that shows nothing: fillers, blank braille, ignorables and marks alone (docs/design.md#11)", () => {
    // Each was accepted before, and showed as an empty name (or a lone mark, or a box).
    for (const blank of [
      "\u3164",
      "\u3164\u3164\u3164",
      "\uffa0",
      "\u115f\u1160",
      "\u2800",
      "\u2800 \u2800",
      "\u034f",
      "\ufe0f",
      "\u3164\u034f\u2800",
      "\u0301",
      "\u{e0100}",
      "\u{10ffff}",
    ]) {
      expect(checkBidderName(blank), JSON.stringify(blank)).toEqual(invalidName);
    }
  });

  it("keeps a name with something to show beside the blank code points, stored as typed", () => {
    for (const name of ["No\u3164body", "\u2800x", "A\u034fB", "❤\ufe0f", "1", ".", "$", "e\u0301"]) {
      expect(checkBidderName(name), JSON.stringify(name)).toEqual({ ok: true, value: name });
    }
  });

  it("accepts letters, marks, symbols and inner spaces of any script", () => {
    for (const name of ["Zoë", "Nguyễn Văn A", "山田 太郎", "Ω-Bidder #1", "🦊"]) {
      expect(checkBidderName(name)).toEqual({ ok: true, value: name });
    }
  });
});

describe("bid amount", () => {
  it("converts dollars to integer cents", () => {
    expect(checkAmount(0.01)).toEqual({ ok: true, value: 1 });
    expect(checkAmount(1)).toEqual({ ok: true, value: 100 });
    expect(checkAmount(1.1)).toEqual({ ok: true, value: 110 });
    expect(checkAmount(19.99)).toEqual({ ok: true, value: 1999 });
    expect(checkAmount(1234.5)).toEqual({ ok: true, value: 123450 });
  });

  it("must be a finite number", () => {
    expect(checkAmount(Number.NaN)).toEqual(invalidAmount);
    expect(checkAmount(Number.POSITIVE_INFINITY)).toEqual(invalidAmount);
    expect(checkAmount(Number.NEGATIVE_INFINITY)).toEqual(invalidAmount);
  });

  it("must be more than 0", () => {
    expect(checkAmount(0)).toEqual(invalidAmount);
    expect(checkAmount(-0)).toEqual(invalidAmount);
    expect(checkAmount(-0.01)).toEqual(invalidAmount);
    expect(checkAmount(-5)).toEqual(invalidAmount);
  });

  it("has at most 2 decimals, also when tiny or written with an exponent", () => {
    expect(checkAmount(1.005)).toEqual(invalidAmount);
    expect(checkAmount(0.001)).toEqual(invalidAmount);
    expect(checkAmount(1e-7)).toEqual(invalidAmount);
    expect(checkAmount(0.1 + 0.2)).toEqual(invalidAmount);
  });

  it("is at most $1,000,000,000.00", () => {
    expect(MAX_BID_CENTS).toBe(100_000_000_000);
    expect(checkAmount(1_000_000_000)).toEqual({ ok: true, value: MAX_BID_CENTS });
    expect(checkAmount(999_999_999.99)).toEqual({ ok: true, value: MAX_BID_CENTS - 1 });
    expect(checkAmount(1_000_000_000.01)).toEqual(invalidAmount);
    expect(checkAmount(1e21)).toEqual(invalidAmount);
    expect(checkAmount(Number.MAX_VALUE)).toEqual(invalidAmount);
  });

  it("reads the amount field's text with the same rule", () => {
    expect(parseAmountInput(" 12.50 ")).toEqual({ ok: true, value: 1250 });
    expect(parseAmountInput("")).toEqual(invalidAmount);
    expect(parseAmountInput("   ")).toEqual(invalidAmount);
    expect(parseAmountInput("twelve")).toEqual(invalidAmount);
    expect(parseAmountInput("1.005")).toEqual(invalidAmount);
  });

  it("takes only plain decimals, not the other number forms Number() reads", () => {
    expect(parseAmountInput(".5")).toEqual({ ok: true, value: 50 });
    expect(parseAmountInput("7.")).toEqual({ ok: true, value: 700 });
    for (const text of ["0x10", "1e2", "-3", "+3", "Infinity", "1,000", "1_000", "12.50.1"]) {
      expect(parseAmountInput(text), text).toEqual(invalidAmount);
    }
  });
});

describe("above the highest bid by the increment", () => {
  it("accepts any amount from the first bid's floor when there are no bids yet", () => {
    expect(checkAboveHighest(FIRST_BID_MIN_CENTS, null)).toEqual({ ok: true, value: FIRST_BID_MIN_CENTS });
    expect(checkAboveHighest(FIRST_BID_MIN_CENTS - 1, null)).toEqual({ ok: false, code: "too_low" });
  });

  it("refuses an equal or lower amount, or one less than the increment above, as too_low; accepts the increment more", () => {
    expect(checkAboveHighest(5000, 5000)).toEqual({ ok: false, code: "too_low" });
    expect(checkAboveHighest(4999, 5000)).toEqual({ ok: false, code: "too_low" });
    expect(checkAboveHighest(5000 + BID_INCREMENT_CENTS - 1, 5000)).toEqual({ ok: false, code: "too_low" });
    expect(checkAboveHighest(5000 + BID_INCREMENT_CENTS, 5000)).toEqual({
      ok: true,
      value: 5000 + BID_INCREMENT_CENTS,
    });
  });

  it("puts the smallest winning bid the increment above the highest, or at the floor", () => {
    expect(nextWinningCents(null)).toBe(FIRST_BID_MIN_CENTS);
    expect(nextWinningCents(5000)).toBe(5000 + BID_INCREMENT_CENTS);
  });

  it("is today a bid strictly above the highest, and any valid amount first (docs/product-behaviour.md#5)", () => {
    expect([BID_INCREMENT_CENTS, FIRST_BID_MIN_CENTS]).toEqual([1, 1]);
  });
});

describe("the big-jump guard", () => {
  it("asks above 10 times the smallest winning bid and more than $100 above it", () => {
    // $12.50 leads: the smallest winning bid is $12.51, ten times that $125.10.
    expect(isBigJump(12_510, 1_250)).toBe(false);
    expect(isBigJump(12_511, 1_250)).toBe(true);
    expect(isBigJump(100_000_000, 1_250)).toBe(true);
    // The first bid: anything over $100.01.
    expect(isBigJump(10_001, null)).toBe(false);
    expect(isBigJump(10_002, null)).toBe(true);
    // $5,000 leads: up to ten times ($50,000.10) needs no confirmation.
    expect(isBigJump(5_000_010, 500_000)).toBe(false);
    expect(isBigJump(5_000_011, 500_000)).toBe(true);
    expect(BIG_JUMP_FACTOR).toBe(10);
  });
});
