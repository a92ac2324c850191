/**
 * The names the service refuses at bid time with `name_not_allowed` (DESIGN.md 6a), beyond the
 * bid rules: profanity, caught with its obvious variants (case, repeats, leetspeak) by
 * obscenity's English dataset, except matches made of digits alone (its leetspeak reads "455" as a
 * rude word, which would refuse "Agent 455"); and names that carry a link: a URL scheme, `www.`, or a host name
 * with a dot and a real top-level domain (linkify-it with IANA's list from `tlds`), so "Mr.Nobody"
 * passes and "nothing.store" does not. The operator's blocked names join this check with
 * moderation.
 */
import { LinkifyIt } from "linkify-it";
import { englishDataset, englishRecommendedTransformers, RegExpMatcher } from "obscenity";
import topLevelDomains from "tlds" with { type: "json" };

type NameVerdict = { allowed: true } | { allowed: false; reason: "profanity" | "link" };

const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\//i;
const LETTER = /\p{L}/u;
const WWW = /\bwww\./i;

export type NameFilter = (name: string) => NameVerdict;

export function createNameFilter(): NameFilter {
  const profanity = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });
  const links = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true }).tlds(topLevelDomains);
  return (name) => {
    const rude = profanity
      .getAllMatches(name)
      .some((match) => LETTER.test(name.slice(match.startIndex, match.endIndex + 1)));
    if (rude) return { allowed: false, reason: "profanity" };
    if (SCHEME.test(name) || WWW.test(name) || links.test(name)) return { allowed: false, reason: "link" };
    return { allowed: true };
  };
}
