/**
 * The name rules over generated spellings (docs/design.md#11): every disguise of a blocked or rude
 * name that issue 20 lists (case, fullwidth, circled and mathematical letters, invisible code points
 * inserted, lookalike letters from Cyrillic and Greek taken from the skeleton's own confusables
 * table) is refused, and ordinary names (letters of several scripts, digits, spaces, emoji) stay
 * allowed. The verdict is the bid desk's: the bid rules, then the filter and the blocks.
 * Reproducible: the seed is fixed and printed; FC_SEED=<n> runs another one.
 */
import fc from "fast-check";
import confusables from "unhomoglyph/data.json" with { type: "json" };
import { beforeAll, describe, expect, it } from "vitest";
import { createNameFilter } from "../../service/names/nameFilter.ts";
import { foldName, nameKey, skeleton } from "../../service/names/nameKey.ts";
import { checkBidderName } from "../../src/lib/auction/bidRules.ts";

const SEED = Number(process.env.FC_SEED ?? 20_261_124);
const RUNS = 2_000;
const options = { seed: SEED, numRuns: RUNS };

const filter = createNameFilter();

type Verdict = "accepted" | "invalid_name" | "name_not_allowed";

/** What the bid desk answers for a name (service/auction/bidDesk.ts), amount aside. */
function verdict(raw: string, blockedKeys: ReadonlySet<string>): Verdict {
  const name = checkBidderName(raw);
  if (!name.ok) return "invalid_name";
  if (!filter(name.value).allowed || blockedKeys.has(nameKey(name.value))) return "name_not_allowed";
  return "accepted";
}

// ---- Disguises ------------------------------------------------------------------------------

/** Default-ignorable code points the bid rules let through (marks and Hangul fillers): they must vanish from the key. */
const IGNORABLES = [
  "\u034f",
  "\ufe0f",
  "\ufe00",
  "\u3164",
  "\uffa0",
  "\u115f",
  "\u1160",
  "\u17b4",
  "\u180b",
  "\u{e0100}",
];
/**
 * Default-ignorable format characters (Cf): the bid rules refuse a name with one as invalid_name,
 * U+200D too, which they allow only between two emoji (no disguised letter is one).
 */
const FORMAT_IGNORABLES = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad"];

const isLetter = (character: string) => /^[A-Za-z]$/.test(character);
const isAsciiPrintable = (character: string) => /^[\x21-\x7e]$/.test(character);
const fullwidth = (character: string) => String.fromCodePoint((character.codePointAt(0) as number) - 0x21 + 0xff01);
const circled = (letter: string) =>
  String.fromCodePoint((/[a-z]/.test(letter) ? 0x24d0 - 0x61 : 0x24b6 - 0x41) + (letter.codePointAt(0) as number));
const bold = (letter: string) =>
  String.fromCodePoint((/[a-z]/.test(letter) ? 0x1d41a - 0x61 : 0x1d400 - 0x41) + (letter.codePointAt(0) as number));

/** Cyrillic and Greek code points whose prototype in confusables.txt is an ASCII letter, by that letter. */
const CYRILLIC_OR_GREEK = /^[\p{Script=Cyrillic}\p{Script=Greek}]$/u;
function lookalikesBy(keep: (lookalike: string, letter: string) => boolean): Map<string, string[]> {
  const byLetter = new Map<string, string[]>();
  for (const [lookalike, prototype] of Object.entries(confusables as Record<string, string>)) {
    if (!CYRILLIC_OR_GREEK.test(lookalike) || !isLetter(prototype) || !keep(lookalike, prototype)) continue;
    byLetter.set(prototype, [...(byLetter.get(prototype) ?? []), lookalike]);
  }
  return byLetter;
}
/** Every Cyrillic and Greek lookalike of an ASCII letter: the filter reads each as the letter. */
const ALL_LOOKALIKES = lookalikesBy(() => true);
/**
 * Those whose capital looks like the capital of the same letter (о and О like o and O): the key
 * follows a letter's capital, so a small letter whose capital imitates another (ν like v, but Ν
 * like N; σ like o, but Σ like Ʃ) is no lookalike to it (nameKey.ts).
 */
const CASELESS_LOOKALIKES = lookalikesBy(
  (lookalike, letter) => skeleton(lookalike.normalize("NFKC").toUpperCase()) === skeleton(letter.toUpperCase()),
);

type Disguise = "keep" | "case" | "fullwidth" | "circled" | "bold" | "lookalike";
interface Step {
  disguise: Disguise;
  /** Inserted after the character: none, an ignorable the rules accept, or a format character. */
  insert: { kind: "ignorable" | "format"; index: number } | null;
  pick: number;
}

const step: fc.Arbitrary<Step> = fc.record({
  disguise: fc.constantFrom<Disguise>("keep", "case", "fullwidth", "circled", "bold", "lookalike"),
  insert: fc.option(fc.record({ kind: fc.constantFrom("ignorable", "format"), index: fc.nat() }), { freq: 3 }),
  pick: fc.nat(),
});

function disguised(base: string, steps: Step[], lookalikes: Map<string, string[]>): string {
  return [...base]
    .map((character, position) => {
      const { disguise, insert, pick } = steps[position % steps.length] as Step;
      let spelled = character;
      if (disguise === "case")
        spelled = character === character.toLowerCase() ? character.toUpperCase() : character.toLowerCase();
      else if (disguise === "fullwidth" && isAsciiPrintable(character)) spelled = fullwidth(character);
      else if (disguise === "circled" && isLetter(character)) spelled = circled(character);
      else if (disguise === "bold" && isLetter(character)) spelled = bold(character);
      else if (disguise === "lookalike") {
        const choices = lookalikes.get(character);
        if (choices) spelled = choices[pick % choices.length] as string;
      }
      if (insert === null) return spelled;
      const from = insert.kind === "ignorable" ? IGNORABLES : FORMAT_IGNORABLES;
      return spelled + (from[insert.index % from.length] as string);
    })
    .join("");
}

/** Refused: name_not_allowed, or invalid_name when a format character was inserted (the earlier rule). */
function expectRefused(variant: string, blockedKeys: ReadonlySet<string>) {
  const hasFormat = FORMAT_IGNORABLES.some((format) => variant.includes(format));
  expect(verdict(variant, blockedKeys), JSON.stringify(variant)).toBe(hasFormat ? "invalid_name" : "name_not_allowed");
}

// ---- Names ----------------------------------------------------------------------------------

const word = fc.stringMatching(/^[A-Z]?[a-z]{2,6}$/);
/** A name an operator might block: one or two words, maybe a number; short enough to stay within 40 code points disguised. */
const blockedName = fc
  .tuple(word, fc.option(word), fc.option(fc.integer({ min: 0, max: 99 })))
  .map(([first, second, number]) => [first, second, number].filter((part) => part !== null).join(" "));

const RUDE_WORDS = ["fuck", "shit", "bitch", "cunt", "asshole", "dick", "whore", "bastard", "slut", "twat", "pussy"];
const rudeName = fc
  .tuple(fc.constantFrom(...RUDE_WORDS), fc.constantFrom("", "Big ", "Mr "), fc.constantFrom("", " 42", " Energy"))
  .map(([rude, before, after]) => `${before}${rude}${after}`);

const NAME_PARTS = [
  "Nobody",
  "Zero",
  "Note",
  "Agent",
  "Bidder",
  "Mr.Nobody",
  "J.R.",
  "Zoë",
  "Nguyễn",
  "Ольга",
  "Νίκος",
  "山田",
  "太郎",
  "שלום",
  "مزايد",
  "Émile",
  "O'Brien",
];
const EMOJI = ["💸", "🦊", "❤️", "👍🏽", "🇳🇴", "🫥", "1️⃣"];
const ordinaryName = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...NAME_PARTS) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }).map(String) },
      { weight: 1, arbitrary: fc.constantFrom(...EMOJI) },
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((parts) => parts.join(" "))
  .filter((name) => [...name].length <= 40);

beforeAll(() => {
  console.info(`fast-check seed ${SEED} (FC_SEED=${SEED} to replay), ${RUNS} runs a property`);
});

describe("disguised names, generated", () => {
  it("every disguise of a blocked name has the blocked name's key, and is refused", () => {
    fc.assert(
      fc.property(blockedName, fc.array(step, { minLength: 1, maxLength: 12 }), (base, steps) => {
        const variant = disguised(base, steps, CASELESS_LOOKALIKES);
        const blocked = new Set([nameKey(base)]);
        expect(nameKey(variant), JSON.stringify(variant)).toBe(nameKey(base));
        expectRefused(variant, blocked);
      }),
      options,
    );
  });

  it("every disguise of a rude name, any Cyrillic or Greek lookalike included, is refused", () => {
    fc.assert(
      fc.property(rudeName, fc.array(step, { minLength: 1, maxLength: 12 }), (base, steps) => {
        expectRefused(disguised(base, steps, ALL_LOOKALIKES), new Set());
      }),
      options,
    );
  });

  it("ordinary names written in capitals, fullwidth, circled or mathematical letters stay allowed", () => {
    const styling = fc.record({
      disguise: fc.constantFrom<Disguise>("keep", "case", "fullwidth", "circled", "bold"),
      insert: fc.constant(null),
      pick: fc.constant(0),
    });
    fc.assert(
      fc.property(ordinaryName, fc.array(styling, { minLength: 1, maxLength: 12 }), (name, steps) => {
        const styled = disguised(name, steps, new Map());
        expect(verdict(styled, new Set([nameKey("Troll")])), styled).toBe("accepted");
      }),
      options,
    );
  });

  it("ordinary names stay allowed, with a block on another name", () => {
    const blocked = new Set([nameKey("Troll"), nameKey("Spammer 3000")]);
    fc.assert(
      fc.property(ordinaryName, (name) => {
        expect(verdict(name, blocked), name).toBe("accepted");
      }),
      options,
    );
  });
});

describe("the key and the fold, generated", () => {
  const anyText = fc.string({ unit: "binary", maxLength: 20 });

  it("the key ignores case: a name, its capitals and its small letters have one key", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(nameKey(text.toUpperCase())).toBe(nameKey(text));
        expect(nameKey(text.toLowerCase())).toBe(nameKey(text));
      }),
      options,
    );
  });

  it("the key is the folded name's: folding first changes nothing", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(nameKey(foldName(text))).toBe(nameKey(text));
      }),
      options,
    );
  });

  it("folding twice is folding once, and leaves no default-ignorable code point", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const folded = foldName(text);
        expect(foldName(folded)).toBe(folded);
        expect(folded).not.toMatch(/\p{Default_Ignorable_Code_Point}/u);
      }),
      options,
    );
  });
});
