/** The payment settings (docs/design.md#8): off without SOLANA_RPC_URL, and every bad value named. */
import { describe, expect, it } from "vitest";
import { readServiceConfig, ServiceConfigError } from "../../service/config.ts";
import { explorerUrl } from "../../service/payments/settings.ts";
import { PLACEHOLDER_DEFAULTS } from "../../src/lib/siteConfig.ts";

const RECIPIENT = "mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN";
const MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const ON = {
  SOLANA_RPC_URL: "https://rpc.example/?api-key=secret",
  PUBLIC_PAYMENT_ADDRESS: RECIPIENT,
  PUBLIC_CONTRACT_ADDRESS: MINT,
};

describe("payment settings", () => {
  it("are off without SOLANA_RPC_URL, whatever else is set", () => {
    expect(readServiceConfig({}).payments).toBeNull();
    expect(readServiceConfig({ SOLANA_RPC_URL: " ", PUBLIC_PAYMENT_ADDRESS: "nonsense" }).payments).toBeNull();
  });

  it("take their defaults once on", () => {
    expect(readServiceConfig(ON).payments).toEqual({
      rpcUrl: "https://rpc.example/?api-key=secret",
      recipient: RECIPIENT,
      mint: MINT,
      commitment: "confirmed",
      pollMs: 2_000,
      rpcCallsPerSecond: 3,
      priorityFeeMicroLamports: 50_000,
      unreachableAfterMs: 120_000,
      requestMinutes: 30,
      explorerTxUrl: "https://solscan.io/tx/{signature}",
      rateLimit: 10,
      rateWindowMs: 600_000,
      maxOpenRequests: 1_000,
      retentionDays: 7,
    });
  });

  it("read every setting", () => {
    const payments = readServiceConfig({
      ...ON,
      SOLANA_COMMITMENT: "Finalized",
      PAYMENT_POLL_MS: "500",
      PAYMENT_RPC_CALLS_PER_SECOND: "40",
      PAYMENT_PRIORITY_FEE_MICROLAMPORTS: "0",
      PAYMENT_RPC_UNREACHABLE_AFTER_MS: "30000",
      PAYMENT_REQUEST_MINUTES: "5",
      PUBLIC_EXPLORER_TX_URL: "https://explorer.solana.com/tx/{signature}?cluster=devnet",
      PAYMENT_RATE_LIMIT: "3",
      PAYMENT_RATE_WINDOW_MS: "1000",
      PAYMENT_MAX_OPEN_REQUESTS: "50",
      PAYMENT_RETENTION_DAYS: "30",
    }).payments;
    expect(payments).toMatchObject({
      commitment: "finalized",
      pollMs: 500,
      rpcCallsPerSecond: 40,
      priorityFeeMicroLamports: 0,
      unreachableAfterMs: 30_000,
      requestMinutes: 5,
      rateLimit: 3,
      rateWindowMs: 1000,
      maxOpenRequests: 50,
      retentionDays: 30,
    });
    expect(explorerUrl(payments?.explorerTxUrl ?? "", "5sig")).toBe(
      "https://explorer.solana.com/tx/5sig?cluster=devnet",
    );
  });

  it("refuse a placeholder, a malformed or a missing address, naming the variable", () => {
    const refused = (env: Record<string, string>) => () => readServiceConfig({ ...ON, ...env });
    expect(refused({ PUBLIC_PAYMENT_ADDRESS: PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS })).toThrow(
      `PUBLIC_PAYMENT_ADDRESS is still the placeholder "${PLACEHOLDER_DEFAULTS.PUBLIC_PAYMENT_ADDRESS}": set the real address`,
    );
    expect(refused({ PUBLIC_CONTRACT_ADDRESS: PLACEHOLDER_DEFAULTS.PUBLIC_CONTRACT_ADDRESS })).toThrow(
      /^PUBLIC_CONTRACT_ADDRESS is still the placeholder/,
    );
    // 0, O, I and l are not base58; a short value is not 32 bytes.
    expect(refused({ PUBLIC_CONTRACT_ADDRESS: "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" })).toThrow(
      'PUBLIC_CONTRACT_ADDRESS must be a base58 Solana address (32 bytes), got "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"',
    );
    expect(refused({ PUBLIC_PAYMENT_ADDRESS: "mvines9ii" })).toThrow(
      /^PUBLIC_PAYMENT_ADDRESS must be a base58 Solana address/,
    );
    expect(refused({ PUBLIC_PAYMENT_ADDRESS: "" })).toThrow(
      "PUBLIC_PAYMENT_ADDRESS must be set when SOLANA_RPC_URL is set",
    );
    expect(refused({ PUBLIC_PAYMENT_ADDRESS: "" })).toThrow(ServiceConfigError);
  });

  it("refuse other bad values by name, never echoing the RPC URL", () => {
    const message = (env: Record<string, string>) => {
      try {
        readServiceConfig({ ...ON, ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ServiceConfigError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(message({ SOLANA_RPC_URL: "wss://rpc.example/key" })).toBe(
      "SOLANA_RPC_URL must be an http:// or https:// URL, got a wss: URL",
    );
    expect(message({ SOLANA_RPC_URL: "not a url secret" })).toBe("SOLANA_RPC_URL must be an http:// or https:// URL");
    expect(message({ SOLANA_COMMITMENT: "processed" })).toBe(
      'SOLANA_COMMITMENT must be one of confirmed, finalized, got "processed"',
    );
    expect(message({ PAYMENT_POLL_MS: "50" })).toBe('PAYMENT_POLL_MS must be an integer from 100 to 600000, got "50"');
    expect(message({ PAYMENT_REQUEST_MINUTES: "0" })).toMatch(
      /^PAYMENT_REQUEST_MINUTES must be an integer from 1 to 1440/,
    );
    expect(message({ PUBLIC_EXPLORER_TX_URL: "https://solscan.io/tx/" })).toMatch(
      /^PUBLIC_EXPLORER_TX_URL must be an http\(s\) URL with \{signature\}/,
    );
  });
});
