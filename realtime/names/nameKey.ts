/**
 * A name as blocking compares it (DESIGN.md 6a: case-insensitive after NFKC): NFKC, then upper
 * and lower case in turn, which folds what lower case alone leaves apart ("STRASSE" and "straße"
 * both become "strasse"), then NFKC again since case mapping can undo it. Computed here, not in
 * SQL: PostgreSQL's lower() under the C locale folds ASCII only.
 */
export function nameKey(name: string): string {
  return name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");
}
