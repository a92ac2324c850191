/**
 * The line drawings of the tier cards (TierIcon.astro) and the certificate (CertificateDialog.astro),
 * each written once: SVG path data on a 24 × 24 grid, stroked with round caps and joins. The gem and
 * the crown appear in both, the star on the certificate and as a prize's icon (prizes.ts); each
 * place keeps its own size and stroke width. The tier card's speck is a dot, drawn in TierIcon.astro.
 */
export const DRAWINGS = {
  sparkle: "M12 3l2.2 6.8L21 12l-6.8 2.2L12 21l-2.2-6.8L3 12l6.8-2.2z",
  gem: "M6 3h12l3 6-9 12L3 9zM3 9h18M9 3l3 18M15 3l-3 18",
  crown: "M3 8l4.5 4L12 5l4.5 7L21 8l-2 11H5z",
  bolt: "M13 2L4 14h7l-1 8 9-12h-7z",
  vault: "M3 4h18v16H3zM12 8a4 4 0 1 0 0 8a4 4 0 1 0 0-8M12 12h.01M6 20v2M18 20v2",
  trophy: "M8 4h8v6a4 4 0 0 1-8 0zM8 6H4v1a4 4 0 0 0 4 4M16 6h4v1a4 4 0 0 1-4 4M12 14v4M8 21h8M9 18h6",
  star: "M12 3l2.6 5.6 6.1.7-4.5 4.2 1.2 6L12 16.5l-5.4 3 1.2-6-4.5-4.2 6.1-.7z",
} as const;
