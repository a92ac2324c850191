/**
 * The name key and the folded name (service/names/nameKey.ts, docs/design.md#11): the attacks of
 * issue 20 as named regressions (each passed the old key, NFKC and case only), what must still
 * stay apart, and the keys of a fixed list of names, pinned to NAME_KEY_VERSION.
 */
import { describe, expect, it } from "vitest";
import { foldName, NAME_KEY_VERSION, nameKey, skeleton } from "../../service/names/nameKey.ts";
import { expectEach } from "../harness/expectEach.ts";

/** The key before issue 20 (sql/002's version 1), to show that each attack got past it. */
const versionOneKey = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");

describe("the name key: one key for every spelling of a blocked name", () => {
  // Issue 20, item 8: with "Nobody" blocked, each of these bid freely.
  it.each([
    ["a Cyrillic о (U+043E)", "N\u043ebody"],
    ["a combining grapheme joiner (U+034F)", "No\u034fbody"],
    ["an emoji variation selector (U+FE0F)", "Nobody\ufe0f"],
    ["a Hangul filler (U+3164)", "No\u3164body"],
  ])("meets Nobody with %s", (_label, attack) => {
    expect(versionOneKey(attack)).not.toBe(versionOneKey("Nobody"));
    expect(nameKey(attack)).toBe(nameKey("Nobody"));
  });

  it.each([
    ["capitals", "NOBODY"],
    ["fullwidth letters", "\uff2e\uff4f\uff42\uff4f\uff44\uff59"],
    ["circled letters", "\u24c3\u24de\u24d1\u24de\u24d3\u24e8"],
    ["a zero for the o", "N0body"],
    ["a Greek capital Nu and Omicron", "\u039d\u039fBODY"],
    ["Cyrillic capitals О, В", "N\u041e\u0412ODY"],
    ["more ignorables: U+180B, U+17B4, U+FFA0, U+115F, U+E0100", "N\u180bo\u17b4b\uffa0o\u115fd\u{e0100}y"],
  ])("meets Nobody with %s", (_label, spelling) => {
    expect(nameKey(spelling)).toBe(nameKey("Nobody"));
  });

  it("ignores case in every script, as the old key did", () => {
    for (const [a, b] of [
      ["ΝΙΚΟΣ", "νικος"],
      ["ИВАН", "иван"],
      ["STRASSE", "Straße"],
      ["ÉMILE", "émile"],
      ["Mr.Nobody", "MR.NOBODY"],
      ["Ivan", "IVAN"],
    ]) {
      expect(nameKey(a as string), `${a} ${b}`).toBe(nameKey(b as string));
    }
  });

  it("meets the skeleton's lookalikes: I, l and 1; O and 0; m and rn", () => {
    expect(nameKey("Ivan")).toBe(nameKey("lvan"));
    expect(nameKey("Ivan")).toBe(nameKey("1van"));
    expect(nameKey("Agent 007")).toBe(nameKey("AGENT OO7"));
    expect(nameKey("Mr.Nobody")).toBe(nameKey("rnr.Nobody"));
  });

  it("keeps names apart that only resemble each other loosely", () => {
    for (const [a, b] of [
      ["Nobody", "Somebody"],
      ["Nobody", "Hobody"],
      ["Dan", "Dav"],
      ["Anna", "Arma"],
      ["Nobody", "No body"],
      ["Zoë", "Zoe"],
      ["山田", "山口"],
    ]) {
      expect(nameKey(a as string), `${a} ${b}`).not.toBe(nameKey(b as string));
    }
  });

  it("pins the key of a fixed list of names: a change to any needs NAME_KEY_VERSION raised", () => {
    // Raising the version re-keys a database's bids and blocks when the service opens it
    // (service/storage/nameKeyVersion.ts); without it, old blocks stop matching.
    expect(NAME_KEY_VERSION).toBe(2);
    expect(
      [
        "Nobody",
        "Mr.Nobody",
        "Agent 007",
        "Straße",
        "Zoë",
        "ΝΙΚΟΣ",
        "Иван",
        "山田 太郎",
        "💸💸",
        "N\u043ebody",
        "No\u3164body",
        "nothing\u3002store",
      ].map(nameKey),
    ).toEqual([
      "nobody",
      "rnr.nobody",
      "agent oo7",
      "strasse",
      "zoe\u0308",
      "nlko\u0283",
      "\u1d0ebah",
      "山田 太郎",
      "💸💸",
      "nobody",
      "nobody",
      "nothlng.store",
    ]);
  });
});

describe("the folded name: what the name filter reads", () => {
  it("turns compatibility forms into what they look like", () => {
    expectEach(foldName, [
      ["\u24d5\u24e4\u24d2\u24da", "fuck"],
      ["http\uff1a//evil", "http://evil"],
      ["nothing\u2024store", "nothing.store"],
      ["nothing\uff0estore", "nothing.store"],
    ]);
  });

  it("reads the ideographic full stop as a dot, as a host name does", () => {
    expect(foldName("nothing\u3002store")).toBe("nothing.store");
    expect(foldName("nothing\uff61store")).toBe("nothing.store");
  });

  it("drops what draws nothing, and composes what the removal brings together", () => {
    expect(foldName("f\u034fuck")).toBe("fuck");
    expect(foldName("No\u3164body\ufe0f")).toBe("nobody");
    // e, a joiner, then an acute accent: without the joiner they are one é.
    expect(foldName("e\u034f\u0301")).toBe("\u00e9");
  });

  it("keeps letters beyond ASCII as they are (no skeleton): the filter reads lookalikes separately", () => {
    expect(foldName("N\u043ebody")).toBe("n\u043ebody");
    expect(foldName("Mr.Nobody")).toBe("mr.nobody");
  });
});

describe("the skeleton", () => {
  it("is UTS #39's: NFD, each code point to its prototype in confusables.txt, NFD", () => {
    expect(skeleton("\u{1d52d}\u{1d4b6}\u1eff\u{1d561}\u{1d552}\u2113")).toBe("paypal");
    expect(skeleton("m")).toBe("rn");
    expect(skeleton("0")).toBe("O");
  });

  it("maps again what a mapping and NFD bring out, until it holds still", () => {
    // ǆ → dž, whose NFD is d, z and a caron, which is mapped in turn (to a breve).
    expect(skeleton("\u01c6")).toBe("dz\u0306");
    expect(skeleton(skeleton("\u01c6"))).toBe(skeleton("\u01c6"));
  });
});
