/**
 * Where the auction stands as far as this instance knows, for the quick refusals decided before
 * the database is asked (it decides for real): the highest visible bid of the round (too_low) and
 * the blocked names (name_not_allowed). Each highest comes with the moderation version and round
 * it was true under: bids only raise the highest within both, but a moderation action can lower
 * it and a new round starts it afresh, so a fact from an older stamp is dropped and a newer stamp
 * starts afresh.
 */
interface HighestStamp {
  moderation: number;
  round: number;
}

export interface KnownStanding {
  /** Null: no bid, or not known since the last moderation action or round's end; no quick refusal then. */
  highestCents(): number | null;
  /** Whether a name key (nameKey.ts) is blocked, as of the last list of blocks read. */
  isBlocked(nameKey: string): boolean;
  /** A highest (null: unknown or none) that held under `stamp`. */
  observeHighest(cents: number | null, stamp: HighestStamp): void;
  /** The blocked name keys as read under `moderation`. */
  observeBlocked(nameKeys: readonly string[], moderation: number): void;
}

export function createKnownStanding(): KnownStanding {
  let highest: number | null = null;
  let highestStamp: HighestStamp = { moderation: 0, round: 0 };
  let blocked = new Set<string>();
  let blockedVersion = 0;
  return {
    highestCents: () => highest,
    isBlocked: (nameKey) => blocked.has(nameKey),
    observeHighest(cents, stamp) {
      if (stamp.moderation < highestStamp.moderation || stamp.round < highestStamp.round) return;
      if (stamp.moderation > highestStamp.moderation || stamp.round > highestStamp.round) {
        highestStamp = stamp;
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
