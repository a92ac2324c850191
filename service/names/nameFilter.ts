/**
 * The names the service refuses at bid time with `name_not_allowed` (docs/design.md#6a), beyond the
 * bid rules: profanity, caught with its obvious variants (case, repeats, leetspeak) by
 * obscenity's English dataset, except matches made of digits alone (its leetspeak reads "455" as a
 * rude word, which would refuse "Agent 455"); and names that carry a link: a URL scheme, `www.`, or a host name
 * with a dot and a real top-level domain (linkify-it with IANA's list from `tlds`), so "Mr.Nobody"
 * passes and "nothing.store" does not. The operator's blocked names join this check with
 * moderation.
 *
 * Both matchers read the folded name (nameKey.ts: NFKC, no invisible code points, case folded,
 * docs/design.md#11), so "ⓕⓤⓒⓚ", "f͏uck", "nothing。store" and "http：//evil" are what they
 * look like. A name with code points beyond ASCII is read a second time with each of them, as
 * typed, replaced by the ASCII it imitates, if any (its prototype in the confusables table of the
 * key's skeleton), then folded: "fυϲk" reads "fuck" (Greek υ and lunate ϲ, which NFKC would turn
 * into σ). As typed, since a capital and its small letter may imitate different letters (Greek Ν
 * is N, ν is v). ASCII is never replaced: the skeleton's "m" → "rn" would read "Pom" as rude.
 */
import { LinkifyIt } from "linkify-it";
import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from "obscenity";
import topLevelDomains from "tlds" with { type: "json" };
import { foldName, skeleton } from "./nameKey.ts";

type NameVerdict = { allowed: true } | { allowed: false; reason: "profanity" | "link" };

const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\//i;
const LETTER = /\p{L}/u;
const WWW = /\bwww\./i;
const ASCII_ONLY = /^[\x20-\x7e]*$/;

export type NameFilter = (name: string) => NameVerdict;

/**
 * The name with each code point beyond ASCII replaced by the ASCII it imitates, if any. One that
 * NFKC makes ASCII (fullwidth, circled, mathematical letters) is left to NFKC, which the fold
 * applies: the skeleton would read a mathematical "𝐦" as "rn", as it reads "m".
 */
function asLookalikes(name: string): string {
  let reading = "";
  for (const character of name) {
    const compatible = character.normalize("NFKC");
    const prototype = ASCII_ONLY.test(compatible) ? compatible : skeleton(character);
    reading += ASCII_ONLY.test(prototype) ? prototype : character;
  }
  return reading;
}

/** The texts the matchers read: the folded name, and its lookalike reading when that differs. */
function readings(name: string): string[] {
  const folded = foldName(name);
  if (ASCII_ONLY.test(name)) return [folded];
  const lookalike = foldName(asLookalikes(name));
  return lookalike === folded ? [folded] : [folded, lookalike];
}

export function createNameFilter(): NameFilter {
  const profanity = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });
  const links = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true }).tlds(topLevelDomains);
  const isRude = (text: string) =>
    profanity.getAllMatches(text).some((match) => LETTER.test(text.slice(match.startIndex, match.endIndex + 1)));
  const hasLink = (text: string) => SCHEME.test(text) || WWW.test(text) || links.test(text);
  return (name) => {
    const texts = readings(name);
    if (texts.some(isRude)) return { allowed: false, reason: "profanity" };
    if (texts.some(hasLink)) return { allowed: false, reason: "link" };
    return { allowed: true };
  };
}
