/** The wall of six reviews (docs/product-reference.md#9): all five stars, naturally. */

export interface Review {
  id: number;
  name: string;
  initials: string;
  /** ISO date, shown in long US format. */
  date: string;
  rating: number;
  tier: string;
  review: string;
}

export const REVIEW_SUMMARY = "5.0 out of 5 stars (2,847 reviews)";

export const REVIEWS: readonly Review[] = [
  {
    id: 1,
    name: "Dave Driftwood",
    initials: "DD",
    date: "2026-09-14",
    rating: 5,
    tier: "Ultimate Nothing",
    review:
      "Ordered the Ultimate Nothing and it arrived instantly. By which I mean it didn't. Best purchase of my life.",
  },
  {
    id: 2,
    name: "Sky Lowenthal",
    initials: "SL",
    date: "2026-08-30",
    rating: 5,
    tier: "Deluxe Nothing",
    review: "I was skeptical, but the Deluxe Nothing is noticeably more nothing than the regular nothing. Trust me.",
  },
  {
    id: 3,
    name: "Marigold Haze",
    initials: "MH",
    date: "2026-08-02",
    rating: 5,
    tier: "Premium Nothing",
    review: "Stared at my Premium Nothing for three hours. Still not sure what I saw. Five stars, obviously.",
  },
  {
    id: 4,
    name: "Chad Blockwell",
    initials: "CB",
    date: "2026-07-19",
    rating: 5,
    tier: "God-Tier Nothing",
    review: "God-Tier Nothing changed me. My wallet is lighter and so is my soul. Would buy nothing again.",
  },
  {
    id: 5,
    name: "Penny Pincher",
    initials: "PP",
    date: "2026-07-03",
    rating: 5,
    tier: "A Tiny Bit of Nothing",
    review: "Only got A Tiny Bit of Nothing, but honestly it's plenty. Fits in any room. Goes with everything.",
  },
  {
    id: 6,
    name: "Rowan Reverie",
    initials: "RR",
    date: "2026-06-21",
    rating: 5,
    tier: "Ultimate Nothing",
    review: "Customer support told me there's nothing they can do. Exactly what I paid for. Flawless service.",
  },
];
