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

/**
 * A base58 address in groups of 3 or 4 characters, for display only (the copy buttons copy it whole):
 * a line may break between groups and nowhere else, so no line ever holds one or two characters.
 * The groups are as even as they can be: 33 characters are 6 groups of 4 and 3 of 3, not 8 of 4 and 1.
 */
export function addressGroups(address: string): string[] {
  const total = Math.ceil(address.length / 4);
  const groups: string[] = [];
  let start = 0;
  for (let index = 0; index < total; index++) {
    const end = start + Math.ceil((address.length - start) / (total - index));
    groups.push(address.slice(start, end));
    start = end;
  }
  return groups;
}
