/**
 * A bidder name as the name rules read it (docs/design.md#11). Two forms:
 *
 * - foldName(): what the name filter reads. NFKC (fullwidth, circled and other compatibility
 *   forms become plain letters: "ⓕⓤⓒⓚ" is "fuck", "http：//" is "http://", "․" is "."), without
 *   default-ignorable code points (U+034F, U+200B, U+FE0F, U+3164…: invisible, so "f͏uck" is
 *   "fuck"), the ideographic full stop read as "." as IDNA reads it in a host name
 *   ("nothing。store"), case folded (upper then lower case, which folds what lower case alone
 *   leaves apart: "STRASSE" and "straße" are both "strasse"), then NFKC again since case mapping
 *   and the removals can undo it.
 * - nameKey(): what blocking compares, stored with every bid (bidder_key) and block (name_key):
 *   the folded name's confusable skeleton (UTS #39), so a lookalike letter from another script
 *   ("Nоbody" with a Cyrillic о) or a digit ("N0body") meets the name it imitates.
 *
 * The skeleton maps to Unicode's prototypes, which are case-sensitive (capital I is l, small i is
 * i; Greek Ν is N, its small ν is v), while blocking must ignore case (docs/design.md#6a). So the
 * key is a skeleton of the upper-case form, then case folded and skeletonised again: every case
 * of a name has one key, capitals from any script meet their Latin lookalikes ("ΝOBODY"), and so
 * do small letters whose capitals look like the same letter's capital (о and О, а and А, ο and Ο).
 * A small letter whose capital looks like something else follows its capital (ν looks like v but
 * Ν like N; σ like o but Σ like Ʃ; г like r but Г like Γ): a key cannot read ν as both v and n
 * without making v and n one letter for every name. The name filter reads each code point as
 * typed instead (nameFilter.ts), so such letters still cannot spell a rude word or a link.
 *
 * Computed here, not in SQL: PostgreSQL's lower() under the C locale folds ASCII only, and has no
 * confusables table. Changing what nameKey() returns for any name needs NAME_KEY_VERSION raised,
 * so that a database keyed the old way is re-keyed when the service opens it
 * (storage/nameKeyVersion.ts); nameKey.test.ts pins the keys of a fixed list of names.
 */
import unhomoglyph from "unhomoglyph";

/** 1: NFKC and case (sql/002). 2: ignorables removed, ideographic full stop, skeleton. */
export const NAME_KEY_VERSION = 2;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
// NFKC leaves U+3002 as it is (and makes U+FF61 into it); UTS #46 maps both, like U+FF0E, to ".".
const IDEOGRAPHIC_FULL_STOP = /\u3002/g;
// A mapping followed by NFD can yield a code point that is mapped in turn (ǆ → dž → dz + caron…);
// two rounds settle every entry of the table, the bound only guards against a table that never would.
const MAX_SKELETON_ROUNDS = 4;

function foldCase(text: string): string {
  return text.toUpperCase().toLowerCase();
}

/** The form the name filter reads (see above). */
export function foldName(name: string): string {
  // Most names: ASCII is its own NFKC, has no ignorable code point, and folds by lower case alone.
  if (PRINTABLE_ASCII.test(name)) return name.toLowerCase();
  const plain = name.normalize("NFKC").replace(DEFAULT_IGNORABLE, "").replace(IDEOGRAPHIC_FULL_STOP, ".");
  return foldCase(plain).normalize("NFKC");
}

/**
 * UTS #39's skeleton: NFD, every code point replaced by its prototype from Unicode's
 * confusables.txt (unhomoglyph's table, Unicode 13), NFD; repeated until it holds still. Not for
 * display: "m" becomes "rn", "0" becomes "O".
 */
export function skeleton(text: string): string {
  let current = text.normalize("NFD");
  for (let round = 0; round < MAX_SKELETON_ROUNDS; round++) {
    const next = unhomoglyph(current).normalize("NFD");
    if (next === current) break;
    current = next;
  }
  return current;
}

/** The skeleton that ignores case: of the capitals, then of their case folding (see above). */
function caselessSkeleton(text: string): string {
  return skeleton(foldCase(skeleton(text.toUpperCase())));
}

/** What blocking compares: one key for every case, compatibility form, invisible insertion and lookalike of a name. */
export function nameKey(name: string): string {
  return caselessSkeleton(foldName(name));
}
