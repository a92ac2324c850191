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
}

export type PlaceBidOutcome =
  | { accepted: true; bid: StoredBid; bidders: number }
  | { accepted: false; highestCents: number };

export interface AuctionView {
  /** Newest first (highest id first). */
  bids: StoredBid[];
  highest: StoredBid | null;
  bidders: number;
}

/** The bids after an id with where the auction stands, read in one snapshot. */
export interface BidsAfter {
  /** Oldest first. */
  bids: StoredBid[];
  /** The newest (so highest) bid of the whole auction, also when no bid is after the id. */
  highest: StoredBid | null;
  bidders: number;
}

export interface BidStore {
  readonly backend: "postgres" | "pglite";
  /**
   * Inserts the bid only if it is strictly above every accepted bid, in one atomic statement that
   * also NOTIFYs; accepted ids rise in commit order. Name and amount are already checked by the rules.
   * Throws StoreUnavailableError when the database cannot be reached.
   */
  placeBid(bidderName: string, amountCents: number): Promise<PlaceBidOutcome>;
  /** The newest `limit` bids, the highest and the bidder count, read consistently. */
  view(limit: number): Promise<AuctionView>;
  /**
   * Bids with id above `afterId`, oldest first, at most `limit`, with the highest bid and the
   * bidder count, read consistently: a resume with nothing missed costs this one query.
   */
  bidsAfter(afterId: number, limit: number): Promise<BidsAfter>;
  /** Every accepted bid from any instance, in commit order, once per notification. Returns unsubscribe. */
  onBid(listener: (notice: BidNotice) => void): () => void;
  /** Fires false when the database is lost and true once it is reachable and LISTENing again. */
  onReadyChange(listener: (ready: boolean) => void): () => void;
  /** Database reachable and LISTEN active. */
  isReady(): boolean;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}
