/**
 * The one storage interface of the auction. Two thin adapters implement it: PostgreSQL through
 * `postgres` (postgres.ts) and embedded PGlite (pglite.ts). Money is integer cents here; the
 * database keeps numeric(12,2).
 */

export interface StoredBid {
  id: number;
  bidderName: string;
  amountCents: number;
  /** ISO 8601. */
  createdAt: string;
}

/** One accepted bid as every instance hears it (the NOTIFY payload), with the bidder count after it. */
export interface BidNotice {
  bid: StoredBid;
  bidders: number;
  /** The moderation version the bid was accepted under. */
  moderation: number;
}

/** What every instance hears of a moderation action: only that the visible bids changed. */
export interface ModerationNotice {
  moderation: number;
}

export type PlaceBidOutcome =
  | { accepted: true; bid: StoredBid; bidders: number; moderation: number }
  | { accepted: false; code: "too_low"; highestCents: number; moderation: number }
  /** highestCents null: no visible bid yet. */
  | { accepted: false; code: "name_not_allowed"; highestCents: number | null; moderation: number };

/**
 * Where the auction stands, read in one snapshot. Hidden bids and bids of blocked names are left
 * out of every field but lastId.
 */
export interface AuctionView {
  /** Newest first (highest id first). */
  bids: StoredBid[];
  /** The highest visible bid (the earliest of equal ones). */
  highest: StoredBid | null;
  bidders: number;
  /** Bumped by every moderation action that changed something. */
  moderation: number;
  /** The newest id of any bid, visible or not (0 before the first). */
  lastId: number;
  /** The blocked names' keys (nameKey.ts), for the instance's quick name check. */
  blockedKeys: string[];
}

export type ModerationRequest = (
  | { action: "hide" | "restore"; bidId: number }
  | { action: "block" | "unblock"; bidderName: string }
) & {
  /** Trimmed, at most 200 characters; null when the operator gave none. */
  reason: string | null;
  sessionId: string;
};

export type ModerationOutcome =
  | { outcome: "done" | "unchanged"; moderation: number; bidderName: string | null }
  | { outcome: "no_such_bid"; moderation: number; bidderName: null };

/** A bid as the console lists it. */
export interface ModeratedBid extends StoredBid {
  /** Hidden by the operator (Restore shows it again). */
  hidden: boolean;
  /** Of a blocked name (Unblock shows it again). */
  nameBlocked: boolean;
}

export interface AuditEntry {
  id: number;
  at: string;
  sessionId: string;
  action: ModerationRequest["action"];
  bidId: number | null;
  bidderName: string;
  reason: string | null;
}

export interface BlockedName {
  bidderName: string;
  blockedAt: string;
}

/** The console's page: bids newest first below `beforeId` (all when null), blocked names, audit. */
export interface ModerationView {
  bids: ModeratedBid[];
  /** Whether bids older than the last listed exist. */
  olderBids: boolean;
  blockedNames: BlockedName[];
  audit: AuditEntry[];
  moderation: number;
}

export interface BidStore {
  readonly backend: "postgres" | "pglite";
  /**
   * Inserts the bid only if it is strictly above every accepted bid, in one atomic statement that
   * also NOTIFYs; accepted ids rise in commit order. Name and amount are already checked by the rules.
   * Throws StoreUnavailableError when the database cannot be reached.
   */
  placeBid(bidderName: string, amountCents: number): Promise<PlaceBidOutcome>;
  /** The newest `limit` visible bids, the highest and the bidder count, read consistently. */
  view(limit: number): Promise<AuctionView>;
  /**
   * Visible bids with id above `afterId`, oldest first, at most `limit`, with the highest bid and
   * the bidder count, read consistently: a resume with nothing missed costs this one query.
   */
  bidsAfter(afterId: number, limit: number): Promise<AuctionView>;
  /**
   * One moderation action, atomically with its audit row and its notification; the highest and
   * the bidder count are recomputed from the visible bids under the bids' lock.
   */
  moderate(request: ModerationRequest): Promise<ModerationOutcome>;
  /** The operator console's lists, read consistently. */
  moderationView(beforeId: number | null, limit: number): Promise<ModerationView>;
  /** Every accepted bid from any instance, in commit order, once per notification. Returns unsubscribe. */
  onBid(listener: (notice: BidNotice) => void): () => void;
  /** Every moderation action from any instance, in commit order with the bids. Returns unsubscribe. */
  onModeration(listener: (notice: ModerationNotice) => void): () => void;
  /** Fires false when the database is lost and true once it is reachable and LISTENing again. */
  onReadyChange(listener: (ready: boolean) => void): () => void;
  /** Database reachable and LISTEN active. */
  isReady(): boolean;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}
