import { describe, expect, it } from "vitest";
import { createNameFilter } from "../../realtime/names/nameFilter.ts";

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
});
