/**
 * $ZN amounts and the Solana Pay transfer request (docs/design.md#8): exact base units in bigint,
 * user units without exponent or trailing zeros, and URLs that @solana/pay's own parser reads back.
 */
import { getAddressDecoder } from "@solana/kit";
import { parseURL, type TransferRequestURL } from "@solana/pay";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatUnits, toBaseUnits, transferRequestUrl } from "../../service/payments/amounts.ts";
import { TIERS } from "../../src/data/tiers.ts";

const SEED = 2_026_1124;
const address = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => getAddressDecoder().decode(bytes));

describe("$ZN amounts", () => {
  it("turns every tier's price into base units exactly, at any decimals a mint may have", () => {
    expect(toBaseUnits(25, 6)).toBe(25_000_000n);
    expect(toBaseUnits(1_000_000, 9)).toBe(1_000_000_000_000_000n);
    expect(toBaseUnits(1_000_000, 0)).toBe(1_000_000n);
    expect(toBaseUnits(0.5, 1)).toBe(5n);
    expect(() => toBaseUnits(0.25, 1)).toThrow("0.25 $ZN is not a whole number of base units at 1 decimals");
    expect(() => toBaseUnits(1e21, 6)).toThrow(RangeError);
    for (const tier of TIERS) expect(formatUnits(toBaseUnits(tier.price, 9), 9)).toBe(String(tier.price));
  });

  it("writes base units as user units with no exponent and no trailing zeros", () => {
    expect(formatUnits(25_000_000n, 6)).toBe("25");
    expect(formatUnits(25_500_000n, 6)).toBe("25.5");
    expect(formatUnits(1n, 9)).toBe("0.000000001");
    expect(formatUnits(0n, 6)).toBe("0");
    expect(formatUnits(18_446_744_073_709_551_615n, 9)).toBe("18446744073.709551615");
    expect(formatUnits(-5n, 1)).toBe("-0.5");
  });

  it("round-trips any u64 amount at any decimals (fast-check)", () => {
    console.log(`paymentAmounts property seed: ${SEED}`);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.integer({ min: 0, max: 18 }), (amount, decimals) => {
        const text = formatUnits(amount, decimals);
        expect(text).toMatch(/^\d+(\.\d*[1-9])?$/);
        const [whole = "", fraction = ""] = text.split(".");
        expect(BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0")).toBe(amount);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe("the transfer request", () => {
  it("is a Solana Pay v1.1 URL that @solana/pay's parseURL reads back field for field (fast-check)", () => {
    console.log(`transfer request property seed: ${SEED}`);
    fc.assert(
      fc.property(
        address,
        address,
        address,
        fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }),
        fc.integer({ min: 0, max: 12 }),
        fc.constantFrom(...TIERS.map((tier) => tier.name), "Ünïcode & ?=#% Nothing"),
        (recipient, mint, reference, baseUnits, decimals, message) => {
          const amount = formatUnits(baseUnits, decimals);
          const url = transferRequestUrl({ recipient, amount, mint, reference, message });
          const parsed = parseURL(url) as TransferRequestURL;
          expect(parsed.recipient.toBase58()).toBe(recipient);
          expect(parsed.amount?.toFixed()).toBe(amount);
          expect(parsed.splToken?.toBase58()).toBe(mint);
          expect(parsed.reference?.map((key) => key.toBase58())).toEqual([reference]);
          expect(parsed.label).toBe("The Nothing Store");
          expect(parsed.message).toBe(message);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("spells the label and the tier's name percent-encoded", () => {
    const url = transferRequestUrl({
      recipient: "R",
      amount: "1000000",
      mint: "M",
      reference: "F",
      message: "Millionaire's Nothing",
    });
    expect(url).toBe(
      "solana:R?amount=1000000&spl-token=M&reference=F&label=The%20Nothing%20Store&message=Millionaire's%20Nothing",
    );
  });
});
