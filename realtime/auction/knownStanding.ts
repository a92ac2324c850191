/**
 * Where the auction stands as far as this instance knows, for the quick refusals decided before
 * the database is asked (it decides for real): the highest visible bid (too_low) and the blocked
 * names (name_not_allowed). Each fact comes with the moderation version it was true under: bids
 * only raise the highest within a version, but a moderation action can lower it, so a fact from
 * an older version is dropped and a newer version starts afresh.
 */
export interface KnownStanding {
  /** Null: no bid, or not known since the last moderation action; no quick refusal then. */
  highestCents(): number | null;
  /** Whether a name key (nameKey.ts) is blocked, as of the last list of blocks read. */
  isBlocked(nameKey: string): boolean;
  /** A highest (null: unknown or none) that held under `moderation`. */
  observeHighest(cents: number | null, moderation: number): void;
  /** The blocked name keys as read under `moderation`. */
  observeBlocked(nameKeys: readonly string[], moderation: number): void;
}

export function createKnownStanding(): KnownStanding {
  let highest: number | null = null;
  let highestVersion = 0;
  let blocked = new Set<string>();
  let blockedVersion = 0;
  return {
    highestCents: () => highest,
    isBlocked: (nameKey) => blocked.has(nameKey),
    observeHighest(cents, moderation) {
      if (moderation < highestVersion) return;
      if (moderation > highestVersion) {
        highestVersion = moderation;
        highest = cents;
      } else if (cents !== null && (highest === null || cents > highest)) {
        highest = cents;
      }
    },
    observeBlocked(nameKeys, moderation) {
      if (moderation < blockedVersion) return;
      blockedVersion = moderation;
      blocked = new Set(nameKeys);
    },
  };
}
