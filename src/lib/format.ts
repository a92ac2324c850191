/** Number formats of the store (en-US), in one place so every screen agrees. */

const count = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const money = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});
const wholeDollars = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  maximumFractionDigits: 0,
});

/** Counters and plain figures: 7850 -> "7,850". */
export function formatCount(value: number): string {
  return count.format(value);
}

/** Auction money from integer cents: 123450 -> "$1,234.50". Cents keep float error out of money. */
export function formatCents(cents: number): string {
  return money.format(cents / 100);
}

/** Whole-dollar amounts such as the Wall of Fame: 25000 -> "$25,000". */
export function formatDollars(value: number): string {
  return wholeDollars.format(value);
}

/** Tier prices in the token: 1000000 -> "1,000,000 $ZN". */
export function formatZn(value: number): string {
  return `${count.format(value)} $ZN`;
}

/** "+3 Spins", "+1 Spin". */
export function formatSpinBonus(spins: number): string {
  return `+${count.format(spins)} ${spins === 1 ? "Spin" : "Spins"}`;
}
