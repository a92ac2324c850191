import type { PrizeRarity } from "../data/prizes.ts";

/**
 * The prize icon and rarity badge, shared by the wheel island and the static prize gallery
 * (Astro renders them there without shipping any JavaScript).
 */

export function PrizeIcon({ path, className }: { path: string; className?: string }) {
  return (
    <svg
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      className={className}
    >
      <path d={path} />
    </svg>
  );
}

const RARITY_STYLE: Record<PrizeRarity, string> = {
  common: "bg-void-600 text-ink",
  rare: "bg-accent/20 text-accent-strong",
  epic: "bg-accent text-void",
  legendary: "bg-gold text-void",
};

export function RarityBadge({ rarity }: { rarity: PrizeRarity }) {
  return <span className={`badge capitalize ${RARITY_STYLE[rarity]}`}>{rarity}</span>;
}

/** Text colour of a prize's icon by rarity, on the dark card. */
export const RARITY_ICON_COLOR: Record<PrizeRarity, string> = {
  common: "text-ink-muted",
  rare: "text-accent",
  epic: "text-accent-strong",
  legendary: "text-gold",
};
