/** The purchase tiers (docs/product.md#3). Fixed in the client, never fetched. */

type TierVariant = "nothing" | "premium";
export type TierIcon = "speck" | "sparkle" | "gem" | "crown" | "bolt" | "vault";

export interface Tier {
  /**
   * The tier's stable id. Stored with every payment request (`payment_requests.tier_id`) and sent
   * on the wire (`POST /payments` `tierId`, the card's `data-plan-id`): never renumber a tier or
   * reuse a retired tier's id; a new tier takes a new id (tests/unit/tierIds.test.ts pins them).
   */
  id: number;
  name: string;
  /** Price in $ZN. */
  price: number;
  /** Bonus lottery spins granted by the purchase. */
  spins: number;
  icon: TierIcon;
  description: string;
  features: string[];
  popular: boolean;
  variant: TierVariant;
}

/**
 * In display order. The ids are stable keys (see `Tier.id`), not positions: a new tier takes the
 * next unused id wherever it sits in this list.
 */
export const TIERS: readonly Tier[] = [
  {
    id: 1,
    name: "A Tiny Bit of Nothing",
    price: 25,
    spins: 3,
    icon: "speck",
    description: "A starter portion of absolutely nothing. Great for the nothing-curious.",
    features: ["One (1) unit of nothing", "Instant non-delivery", "Basic emptiness support"],
    popular: false,
    variant: "nothing",
  },
  {
    id: 2,
    name: "Deluxe Nothing",
    price: 100,
    spins: 7,
    icon: "sparkle",
    description: "Like regular nothing, but you paid more, so it feels fancier. Probably.",
    features: ["Hand-picked nothing", "Gift-wrapped in air", "Priority non-shipping", "Certificate of nothing"],
    popular: true,
    variant: "nothing",
  },
  {
    id: 3,
    name: "Premium Nothing",
    price: 500,
    spins: 15,
    icon: "gem",
    description: "Artisanal, small-batch nothing, aged in the void until it was ready. It never was.",
    features: ["Premium-grade void", "Gold-bordered certificate", "Exclusive bragging rights", "24/7 nothing hotline"],
    popular: false,
    variant: "premium",
  },
  {
    id: 4,
    name: "Ultimate Nothing",
    price: 1000,
    spins: 25,
    icon: "crown",
    description: "The nothing that other nothings look up to. Whoa, if you think about it.",
    features: ["Ultimate emptiness", "Personal void consultant", "Framed certificate of nothing", "Zero-day delivery"],
    popular: false,
    variant: "premium",
  },
  {
    id: 5,
    name: "God-Tier Nothing",
    price: 10000,
    spins: 100,
    icon: "bolt",
    description: "Transcend having things. Become one with the nothing, man.",
    features: [
      "Cosmic-grade nothing",
      "Enlightenment not included",
      "Name on the Wall of Fame (maybe)",
      "A deep sense of having done it",
    ],
    popular: false,
    variant: "premium",
  },
  {
    id: 6,
    name: "Millionaire's Nothing",
    price: 1_000_000,
    spins: 1000,
    icon: "vault",
    description: "A truly staggering amount of nothing, for people with a truly staggering amount of $ZN.",
    features: [
      "The finest nothing money can buy",
      "White-glove non-delivery",
      "A certificate you can actually hold",
      "Eternal nothing, guaranteed",
    ],
    popular: false,
    variant: "premium",
  },
];
