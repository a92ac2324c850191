/**
 * The one storage interface of the auction. Two thin adapters implement it: PostgreSQL through
 * `postgres` (postgres.ts) and embedded PGlite (pglite.ts). Money is integer cents here; the
 * database keeps numeric(12,2).
 */
import { RiddenOutError } from "../logger.ts";
import type { AdminStore } from "./admin.ts";
import type { PaymentStore } from "./payments.ts";

export interface StoredBid {
  id: number;
  bidderName: string;
  amountCents: number;
  /** ISO 8601. */
  createdAt: string;
}

/**
 * How long rounds last (docs/design.md#6b), from AUCTION_ROUND_SECONDS and AUCTION_SOFT_CLOSE_SECONDS.
 * roundSeconds 0: one endless round, as before rounds.
 */
export interface RoundSettings {
  roundSeconds: number;
  softCloseSeconds: number;
}

export const ENDLESS_ROUNDS: RoundSettings = { roundSeconds: 0, softCloseSeconds: 0 };

/** Where the current round stands. */
export interface RoundStanding {
  /** 0 before the first bid opens round 1. */
  number: number;
  /** ISO 8601; null while endless (or before round 1). */
  endsAt: string | null;
  /** Its end has been recorded: the next bid opens the next round. */
  closed: boolean;
}

/** One accepted bid as every instance hears it (the NOTIFY payload), with the bidder count after it. */
export interface BidNotice {
  bid: StoredBid;
  bidders: number;
  /** The moderation version the bid was accepted under. */
  moderation: number;
  /** The round it belongs to, and that round's end after it (a soft-close bid moves it). */
  round: number;
  endsAt: string | null;
}

/** A round's end, recorded by whichever instance or bid saw it first; heard by every instance. */
export interface RoundClosedNotice {
  round: number;
  moderation: number;
}

/** A past round's winner: its highest visible bid. */
export interface RoundWinner {
  round: number;
  bid: StoredBid;
  /** When the round ended (its end, not when the end was recorded). */
  endedAt: string;
}

/** What every instance hears of a moderation action: only that the visible bids changed. */
export interface ModerationNotice {
  moderation: number;
}

/** Of every placement: the bid's round, and the bids of the round it closed on the way (for metrics). */
export interface PlacementRound {
  round: number;
  /** The round's end after the placement; null while endless. */
  endsAt: string | null;
  /** Set when this placement recorded the previous round's end: how many bids that round had. */
  closedRoundBids: number | null;
}

export type PlaceBidOutcome = PlacementRound &
  /** outbidByMaximumCents: the bid was stored, then at once passed by a maximum's automatic bid of that amount. */
  (
    | { accepted: true; bid: StoredBid; bidders: number; moderation: number; outbidByMaximumCents?: number }
    /** outbid_by_maximum: it tied the leading maximum, the earlier, whose automatic bid is now the highest. */
    | { accepted: false; code: "too_low" | "outbid_by_maximum"; highestCents: number; moderation: number }
    /** highestCents null: no visible bid yet. */
    | { accepted: false; code: "name_not_allowed"; highestCents: number | null; moderation: number }
  );

/** One bid of a batch: the name trimmed and checked by the rules, the amount in cents. */
export interface BidToPlace {
  bidderName: string;
  amountCents: number;
}

/**
 * A secret maximum (docs/decisions/2026-11-28-maximum-bids.md): the name checked by the rules, the
 * maximum in cents, its owner the hex SHA-256 of the browser's bidder secret (never the secret).
 */
interface MaximumToPlace {
  bidderName: string;
  maximumCents: number;
  ownerHash: string;
}

export type Placement = BidToPlace | MaximumToPlace;

export type MaximumOutcome = PlacementRound &
  /** It leads: set (bid: the bid placed for it, or null when the price did not move) or raised. */
  (
    | { accepted: true; raised: boolean; bid: StoredBid | null; bidders: number; moderation: number }
    | {
        accepted: false;
        code: "too_low" | "maximum_too_low" | "outbid_by_maximum" | "name_leads";
        highestCents: number;
        moderation: number;
      }
    | { accepted: false; code: "name_not_allowed"; highestCents: number | null; moderation: number }
  );

/** The outcome of each kind of placement. */
export type OutcomeOf<T extends Placement> = T extends MaximumToPlace ? MaximumOutcome : PlaceBidOutcome;

/** An owner's maximum in the current round, for that owner alone. */
export interface OwnMaximum {
  /** The current round (0 before round 1). */
  round: number;
  /** Null when this owner set none in the round. */
  maximumCents: number | null;
  leading: boolean;
}

/** What settleRound() found or did. */
export interface RoundSettlement extends RoundStanding {
  /** Set when this call recorded the end: how many bids the round had. */
  closedRoundBids: number | null;
  /** The database's clock at the call. */
  now: string;
}

/**
 * Where the auction stands, read in one snapshot: the current round's. Hidden bids and bids of
 * blocked names are left out of every field but lastId.
 */
export interface AuctionView {
  /** Newest first (highest id first), of the current round. */
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
  round: RoundStanding;
  /** The last rounds' winners, newest first (closed rounds with a visible bid; the current one if closed). */
  pastWinners: RoundWinner[];
  /** The database's clock at the read, ISO 8601: pages count down from it. */
  now: string;
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
  /** A bid's or a name's action, or a patron's (docs/design.md#8, bidId null). */
  action: ModerationRequest["action"] | "hide_patron" | "restore_patron";
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
  /** The round's highest visible bid when its name bids automatically (a leading maximum), else null. */
  automaticBidId: number | null;
  blockedNames: BlockedName[];
  audit: AuditEntry[];
  moderation: number;
}

export interface BidStore {
  readonly backend: "postgres" | "pglite";
  /** The round lengths every placement and settlement of this store uses. */
  readonly rounds: RoundSettings;
  /**
   * Inserts the bid only if it is strictly above every accepted bid of its round, in one atomic
   * statement that also NOTIFYs; accepted ids rise in commit order. A bid after the round's end
   * closes it and opens the next. Name and amount are already checked by the rules.
   * Throws StoreUnavailableError when the database cannot be reached.
   */
  placeBid(bidderName: string, amountCents: number): Promise<PlaceBidOutcome>;
  /**
   * Places a batch in one transaction, in order: each bid judged as placeBid would judge it at
   * that point (the batch's earlier bids included), one commit, answers in the same order.
   * Throws (StoreUnavailableError when the database cannot be reached): then none is stored.
   */
  placeBids(bids: readonly BidToPlace[]): Promise<PlaceBidOutcome[]>;
  /** placeBids with maximums among the bids: each entry answered by its kind (OutcomeOf). */
  placeEntries(entries: readonly Placement[]): Promise<(PlaceBidOutcome | MaximumOutcome)[]>;
  /** The owner's (hex SHA-256 of a bidder secret) maximum in the current round. */
  ownMaximum(ownerHash: string): Promise<OwnMaximum>;
  /** Records the current round's end if it has passed (and announces it); says where the round stands. */
  settleRound(): Promise<RoundSettlement>;
  /** The last `limit` winners, newest first. */
  winners(limit: number): Promise<RoundWinner[]>;
  /** The newest `limit` visible bids, the highest and the bidder count, read consistently. */
  view(limit: number): Promise<AuctionView>;
  /**
   * The current round's visible bids with id above `afterId`, oldest first, at most `limit`, with
   * the rest of the view, read consistently: a resume with nothing missed costs this one query.
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
  /** Every round's end, once, in commit order with the bids. Returns unsubscribe. */
  onRoundClosed(listener: (notice: RoundClosedNotice) => void): () => void;
  /** Fires false when the database is lost and true once it is reachable and LISTENing again. */
  onReadyChange(listener: (ready: boolean) => void): () => void;
  /** Database reachable and LISTEN active. */
  isReady(): boolean;
  /** The operator console's sessions and failed sign-ins (docs/design.md#9), on the same database. */
  readonly admin: AdminStore;
  /**
   * PGlite only: an uncompressed tarball of the data directory, taken by the engine between two
   * queries after a CHECKPOINT, without the lock file (pgliteBackup.ts). PostgreSQL has pg_dump.
   */
  dumpDataDir?(): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** The store as the service opens it: the auction's, and the payments' beside it on the same database. */
export interface StoreWithPayments extends BidStore {
  readonly payments: PaymentStore;
}

/** The database cannot be reached or written: the service rides it out (logged without a stack). */
export class StoreUnavailableError extends RiddenOutError {
  override name = "StoreUnavailableError";
}

/** A write failed for lack of space (storageFaults.ts): unavailable, and counted, not logged one by one. */
export class StorageFullError extends StoreUnavailableError {
  override name = "StorageFullError";
}

/** Why a write to storage failed, as the storage_write_failures_total metric counts it. */
export type StorageFaultKind = "disk_full" | "io_error" | "panic";

/** What the service hears of storage faults (storageFaults.ts), for its metrics and its exit. */
export interface StorageFaultHooks {
  /** Every failed write with a storage fault behind it, by kind. */
  onWriteFailure?: (kind: StorageFaultKind) => void;
  /**
   * PGlite's engine aborted (a PANIC or a WebAssembly abort): nothing can be asked of it again.
   * Called at once, from within the engine's own call when it says so on its stderr, so that the
   * service can exit before anything else runs into the wedged engine. Without it the store only
   * refuses every call from then on.
   */
  onFatal?: (reason: string) => void;
}
