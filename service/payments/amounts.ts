/**
 * $ZN amounts, exactly: a tier's price in $ZN to the mint's base units (price x 10^decimals) and
 * back, in bigint, and the Solana Pay transfer request that asks for it (docs/design.md#8).
 */
import { PAYMENT_LABEL } from "../../src/lib/payments.ts";

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A price in $ZN (a JS number as the tiers hold it) in base units; throws when it is not exact. */
export function toBaseUnits(price: number, decimals: number): bigint {
  const match = DECIMAL.exec(String(price));
  const [, whole = "", fraction = ""] = match ?? [];
  if (!match || fraction.length > decimals) {
    throw new RangeError(`${price} $ZN is not a whole number of base units at ${decimals} decimals`);
  }
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
}

/** Base units as $ZN in user units: a plain decimal, no exponent, no trailing zeros ("25", "0.5"). */
export function formatUnits(baseUnits: bigint, decimals: number): string {
  const negative = baseUnits < 0n;
  const digits = (negative ? -baseUnits : baseUnits).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

export interface TransferRequest {
  recipient: string;
  /** User units, as formatUnits writes them. */
  amount: string;
  mint: string;
  reference: string;
  /** The wallet shows it: the tier's name. */
  message: string;
}

/** A Solana Pay v1.1 transfer request URL for an SPL token. */
export function transferRequestUrl({ recipient, amount, mint, reference, message }: TransferRequest): string {
  const query = [
    `amount=${amount}`,
    `spl-token=${mint}`,
    `reference=${reference}`,
    `label=${encodeURIComponent(PAYMENT_LABEL)}`,
    `message=${encodeURIComponent(message)}`,
  ];
  return `solana:${recipient}?${query.join("&")}`;
}
