/** The Wall of Fame (docs/product-reference.md#9): ten static patrons, ranks 1 to 10. */

export interface LeaderboardEntry {
  id: number;
  rank: number;
  name: string;
  /** Dollars spent on nothing. */
  amount: number;
  tier: string;
}

export const LEADERBOARD: readonly LeaderboardEntry[] = [
  { id: 1, rank: 1, name: "Vincent Void", amount: 25000, tier: "Supreme Patron" },
  { id: 2, rank: 2, name: "Nadia Nullman", amount: 15000, tier: "Diamond Void" },
  { id: 3, rank: 3, name: "Zed Zeroes", amount: 12000, tier: "Platinum Nothing" },
  { id: 4, rank: 4, name: "Ember Empty", amount: 8500, tier: "Gold Patron" },
  { id: 5, rank: 5, name: "Hollis Hollow", amount: 7200, tier: "Gold Patron" },
  { id: 6, rank: 6, name: "Blanca Blank", amount: 5000, tier: "Silver Void" },
  { id: 7, rank: 7, name: "Vacant Vic", amount: 3500, tier: "Silver Void" },
  { id: 8, rank: 8, name: "Naught Nancy", amount: 2800, tier: "Bronze Nothing" },
  { id: 9, rank: 9, name: "Abe Sence", amount: 2100, tier: "Bronze Nothing" },
  { id: 10, rank: 10, name: "Cipher Sue", amount: 1500, tier: "Bronze Nothing" },
];

/**
 * Shown as is. The ten amounts add up to 82,600; the product hard-codes 83,600
 * (docs/product-reference.md#9) and the design keeps it (docs/design.md#3a): in a store that sells nothing, a thousand dollars of nothing is not missed.
 */
export const LEADERBOARD_TOTAL_DOLLARS = 83_600;
