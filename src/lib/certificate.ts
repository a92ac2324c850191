/** The certificate of nothing (docs/product.md#3 and docs/product-behaviour.md#4): serial and icon, pure and injectable. */
import { pickByDraw, type RandomSource } from "./random.ts";

const SERIAL_PREFIX = "NO-";
const SERIAL_LENGTH = 9;
const SERIAL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** "NO-" and 9 uppercase letters or digits, each chosen by one call of `random`. */
export function generateSerial(random: RandomSource): string {
  let serial = SERIAL_PREFIX;
  for (let i = 0; i < SERIAL_LENGTH; i += 1) {
    serial += pickByDraw([...SERIAL_ALPHABET], random());
  }
  return serial;
}

export type CertificateIcon = "trophy" | "crown" | "gem" | "star" | "empty";

/** Lowest price (in $ZN) for each icon, highest first; below the last one the box is empty. */
const CERTIFICATE_ICON_THRESHOLDS: readonly (readonly [minPrice: number, icon: CertificateIcon])[] = [
  [10_000, "trophy"],
  [1_000, "crown"],
  [500, "gem"],
  [100, "star"],
];

export function certificateIcon(price: number): CertificateIcon {
  return CERTIFICATE_ICON_THRESHOLDS.find(([minPrice]) => price >= minPrice)?.[1] ?? "empty";
}

/** What the certificate shows of a tier. */
export interface CertificateTier {
  name: string;
  price: number;
  variant: "nothing" | "premium";
}
