/** Tooltip timing (docs/product-reference.md#9): 700 ms to open, instant again within 300 ms of the last one closing. */
const TOOLTIP_DELAY_MS = 700;
const TOOLTIP_SKIP_DELAY_MS = 300;

export function tooltipOpenDelay(now: number, lastClosedAt: number | undefined): number {
  if (lastClosedAt !== undefined && now - lastClosedAt < TOOLTIP_SKIP_DELAY_MS) return 0;
  return TOOLTIP_DELAY_MS;
}
