import { describe, expect, it } from "vitest";
import { createNameFilter } from "../../service/names/nameFilter.ts";

const allowed = createNameFilter();
const verdict = (name: string) => allowed(name);

describe("the name filter", () => {
  it("refuses profanity with its obvious variants: case, stretching, leetspeak, inside a phrase", () => {
    for (const name of [
      "fuck",
      "FUCK",
      "fuuuuck",
      "sh1t",
      "5h1t",
      "Big Sh1t Energy",
      "n1gg3r",
      "a55hole",
      "💸 B1tch",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: false, reason: "profanity" });
    }
  });

  it("lets through words that merely contain a rude one, and ordinary names", () => {
    for (const name of ["Scunthorpe", "Cocktail", "Assassin", "Grass", "Nobody", "Zero Note", "Zoë Nguyễn", "💸💸"]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });

  it("reads digits as letters only beside letters: a number alone is never a rude word", () => {
    for (const name of ["Agent 455", "sigterm term-4 455", "5318008", "Bidder 007"]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });

  it("refuses a link: a URL scheme, www., a host name with a real top-level domain, an e-mail address", () => {
    for (const name of [
      "https://nothing.example",
      "ftp://x",
      "see http:// here",
      "www.nothing",
      "WWW.NOTHING",
      "nothing.store",
      "buy at NOTHING.COM now",
      "café.fr",
      "me@nothing.io",
      "127.0.0.1",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: false, reason: "link" });
    }
  });

  it("lets through dots that make no host name: initials, a word that is no top-level domain", () => {
    for (const name of ["J.R. Nobody", "Mr.Nobody", "Dr. Nothing", "v1.0", "...", "nothing .com"]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });

  // Issue 20, item 8: each of these was allowed when the filter read the name as sent.
  it.each([
    ["circled letters", "\u24d5\u24e4\u24d2\u24da", "profanity"],
    ["a combining grapheme joiner inside the word", "f\u034fuck", "profanity"],
    ["an ideographic full stop for the dot", "nothing\u3002store", "link"],
    ["a one dot leader for the dot", "nothing\u2024store", "link"],
    ["a fullwidth colon in the scheme", "http\uff1a//evil", "link"],
  ])("refuses a name written with %s", (_label, name, reason) => {
    expect(verdict(name)).toEqual({ allowed: false, reason });
  });

  it("refuses other compatibility forms and invisible insertions", () => {
    for (const name of [
      "\uff46\uff55\uff43\uff4b",
      "\u{1d41f}\u{1d42e}\u{1d41c}\u{1d424}",
      "sh\u3164it",
      "f\ufe0fuck\u{e0100}",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: false, reason: "profanity" });
    }
    for (const name of ["nothing\uff0estore", "nothing\uff61store", "www\u3002nothing", "\u24e6\u24e6\u24e6.nothing"]) {
      expect(verdict(name), name).toEqual({ allowed: false, reason: "link" });
    }
  });

  it("reads letters from other scripts as the ASCII letters they imitate, as capitals and as written", () => {
    // Cyrillic с and а, Greek υ (small, like u) and Ν (capital, like N; folded to ν, which looks like v).
    for (const name of ["fu\u0441k", "\u0430sshole", "f\u03c5ck", "\u039dIGGER", "sh\u0456t"]) {
      expect(verdict(name), name).toEqual({ allowed: false, reason: "profanity" });
    }
    for (const name of ["nothing.st\u043ere", "\u0445\u0435.com", "h\u0442tps://x"]) {
      expect(verdict(name).allowed, name).toBe(false);
    }
  });

  it("never reads an ASCII letter as a lookalike: the skeleton's m → rn would make Pom rude", () => {
    // Nor a letter that NFKC makes ASCII: mathematical and fullwidth "Pom" stay "Pom".
    for (const name of [
      "Pom",
      "Mr.Nobody",
      "Agent 455",
      "Agent 007",
      "Ilona",
      "Mama Mia",
      "\u{1d40f}\u{1d428}\u{1d426}",
      "\uff30\uff4f\uff4d",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });

  it("lets emoji through, joined ones too (the bid rules let U+200D join two emoji, docs/design.md#11)", () => {
    for (const name of [
      "\u{1f469}\u200d\u{1f680}",
      "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}",
      "\u{1f44d}\u{1f3fd}",
      "\u{1f1f3}\u{1f1f4}",
      "1\ufe0f\u20e3",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });

  it("lets through names in other scripts that imitate nothing rude", () => {
    for (const name of [
      "\u0418\u0432\u0430\u043d",
      "\u039d\u03af\u03ba\u03bf\u03c2",
      "\u5c71\u7530 \u592a\u90ce",
      "Zo\u00eb \u2764\ufe0f",
    ]) {
      expect(verdict(name), name).toEqual({ allowed: true });
    }
  });
});
