/**
 * The payment settings (docs/design.md#8), from the environment. No SOLANA_RPC_URL: payments are
 * off and none of the rest is read. With it, the recipient and the mint must be real addresses.
 */
import { type Address, isAddress } from "@solana/kit";
import { PLACEHOLDER_DEFAULTS } from "../../src/lib/siteConfig.ts";
import { choiceSetting, integerSetting, isBlank } from "../envSettings.ts";

export type PaymentCommitment = "confirmed" | "finalized";

export interface PaymentSettings {
  /** The Solana JSON-RPC endpoint (never logged: providers put keys in it). */
  rpcUrl: string;
  /** The wallet paid (PUBLIC_PAYMENT_ADDRESS); its associated token account for the mint receives. */
  recipient: Address;
  /** The $ZN mint (PUBLIC_CONTRACT_ADDRESS). */
  mint: Address;
  /** What the watcher reads at; `processed` is not offered (getSignaturesForAddress refuses it). */
  commitment: PaymentCommitment;
  /** The watcher's pause between two polls: each looks up the waiting requests by their references. */
  pollMs: number;
  /** The priority fee the store's transactions offer, micro-lamports per compute unit; 0 offers none. */
  priorityFeeMicroLamports: number;
  /** The instance's RPC budget: calls a second, the watcher's first; transaction requests get what it spares. */
  rpcCallsPerSecond: number;
  /** Failing to reach the RPC this long (refused, timeouts, 5xx; never a 429) stops purchases until it answers. */
  unreachableAfterMs: number;
  /** How long a payment request stays open. */
  requestMinutes: number;
  /** An explorer's transaction page, `{signature}` replaced. */
  explorerTxUrl: string;
  /** Payment requests one client (an IPv6 client by its /64) may create per rateWindowMs. */
  rateLimit: number;
  rateWindowMs: number;
  /** Requests waiting at once, all clients together; beyond it POST /payments answers 503 "busy". */
  maxOpenRequests: number;
  /** Unpaid requests are deleted this many days after they end; paid ones are records and stay. */
  retentionDays: number;
}

export class PaymentSettingsError extends Error {
  override name = "PaymentSettingsError";
}

const COMMITMENTS: readonly PaymentCommitment[] = ["confirmed", "finalized"];
const DEFAULT_EXPLORER_TX_URL = "https://solscan.io/tx/{signature}";
const SIGNATURE_PLACEHOLDER = "{signature}";
const DAY_MS = 86_400_000;

type Env = NodeJS.ProcessEnv;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  return integerSetting(env, name, { fallback, min, max }, PaymentSettingsError);
}

function address(env: Env, name: "PUBLIC_PAYMENT_ADDRESS" | "PUBLIC_CONTRACT_ADDRESS"): Address {
  const value = env[name]?.trim() ?? "";
  if (value === "") throw new PaymentSettingsError(`${name} must be set when SOLANA_RPC_URL is set`);
  // The placeholders are valid base58 of the right length: only their spelling gives them away.
  if (value === PLACEHOLDER_DEFAULTS[name]) {
    throw new PaymentSettingsError(`${name} is still the placeholder "${value}": set the real address`);
  }
  if (!isAddress(value)) {
    throw new PaymentSettingsError(`${name} must be a base58 Solana address (32 bytes), got "${value}"`);
  }
  return value;
}

function rpcUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Never echoed: an RPC provider's URL usually carries its API key.
    throw new PaymentSettingsError("SOLANA_RPC_URL must be an http:// or https:// URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new PaymentSettingsError(`SOLANA_RPC_URL must be an http:// or https:// URL, got a ${url.protocol} URL`);
  }
  return url.href;
}

function explorerTxUrl(value: string | undefined): string {
  if (isBlank(value)) return DEFAULT_EXPLORER_TX_URL;
  const template = value.trim();
  let url: URL | null = null;
  try {
    url = new URL(template.replace(SIGNATURE_PLACEHOLDER, "signature"));
  } catch {}
  if (!template.includes(SIGNATURE_PLACEHOLDER) || !url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new PaymentSettingsError(
      `PUBLIC_EXPLORER_TX_URL must be an http(s) URL with {signature} in it (e.g. ${DEFAULT_EXPLORER_TX_URL}), got "${template}"`,
    );
  }
  return template;
}

function commitment(value: string | undefined): PaymentCommitment {
  return choiceSetting(
    "SOLANA_COMMITMENT",
    value,
    { options: COMMITMENTS, fallback: "confirmed" },
    PaymentSettingsError,
  );
}

/** Null when payments are off (no SOLANA_RPC_URL). */
export function readPaymentSettings(env: Env): PaymentSettings | null {
  if (isBlank(env.SOLANA_RPC_URL)) return null;
  return {
    rpcUrl: rpcUrl(env.SOLANA_RPC_URL),
    recipient: address(env, "PUBLIC_PAYMENT_ADDRESS"),
    mint: address(env, "PUBLIC_CONTRACT_ADDRESS"),
    commitment: commitment(env.SOLANA_COMMITMENT),
    pollMs: integer(env, "PAYMENT_POLL_MS", 2_000, 100, 600_000),
    rpcCallsPerSecond: integer(env, "PAYMENT_RPC_CALLS_PER_SECOND", 3, 1, 100_000),
    priorityFeeMicroLamports: integer(env, "PAYMENT_PRIORITY_FEE_MICROLAMPORTS", 50_000, 0, 100_000_000),
    unreachableAfterMs: integer(env, "PAYMENT_RPC_UNREACHABLE_AFTER_MS", 120_000, 1_000, DAY_MS),
    requestMinutes: integer(env, "PAYMENT_REQUEST_MINUTES", 30, 1, 24 * 60),
    explorerTxUrl: explorerTxUrl(env.PUBLIC_EXPLORER_TX_URL),
    rateLimit: integer(env, "PAYMENT_RATE_LIMIT", 10, 1, 1_000_000),
    rateWindowMs: integer(env, "PAYMENT_RATE_WINDOW_MS", 600_000, 1, DAY_MS),
    maxOpenRequests: integer(env, "PAYMENT_MAX_OPEN_REQUESTS", 1_000, 1, 1_000_000),
    retentionDays: integer(env, "PAYMENT_RETENTION_DAYS", 7, 1, 3_650),
  };
}

/** The explorer's page of one transaction. */
export function explorerUrl(template: string, signature: string): string {
  return template.replace(SIGNATURE_PLACEHOLDER, encodeURIComponent(signature));
}
