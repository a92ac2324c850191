/**
 * The page's half of real purchases (docs/design.md#8), without DOM: where the page asks the
 * service, what it accepts from it (the service may be on another origin and another version), the
 * status texts, and the two records a browser keeps in localStorage: the pending references (so a
 * reload resumes) and the credited ones (so spins are added once per reference per browser).
 * Storage and the clock are passed in.
 */
import * as v from "valibot";
import { formatCount } from "./format.ts";
import type { CreatedPayment, PaymentStatus, PaymentStatusBody } from "./payments.ts";
import { PAYMENTS_UNAVAILABLE_TEXT } from "./payments.ts";
import { PENDING_PAYMENTS_KEY } from "./purchase.ts";

export const CREDITED_PAYMENTS_KEY = "nothingStoreCreditedPayments";
/** The credited references kept: far more than one browser buys, few enough to stay small. */
const CREDITED_KEPT = 200;
/**
 * A pending reference is dropped this long after its expiry: the watcher decides expiry after a poll
 * 60 s past the end, and a payment made before the end may be confirmed later still.
 */
export const PENDING_KEPT_AFTER_EXPIRY_MS = 15 * 60_000;

const WAITING_TEXT = "Waiting for your payment…";
const CONFIRMED_TEXT = "Payment confirmed!";
const EXPIRED_TEXT = "This payment request has expired. Start a new one.";
const CONFIRMED_TOAST_TITLE = "Payment Confirmed!";
/** Said beside a request made while the RPC provider rate limits the service. */
export const SLOW_CONFIRMATION_TEXT =
  "The Solana network is busy for us right now: your payment is safe, but its confirmation may take a few minutes.";

type Storage = Pick<globalThis.Storage, "getItem" | "setItem">;

/** "1000000.5" → "1,000,000.5 $ZN": the service's exact decimal string, grouped, never rounded. */
export function formatZnAmount(amount: string): string {
  const [whole = "0", fraction] = amount.split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${fraction ? `${grouped}.${fraction}` : grouped} $ZN`;
}

const Amount = v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/));
const Time = v.pipe(v.string(), v.isoTimestamp());
const Reference = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/));
const Spins = v.pipe(v.number(), v.integer(), v.minValue(1));

const CreatedSchema = v.object({
  reference: Reference,
  url: v.pipe(v.string(), v.regex(/^solana:/)),
  transactionUrl: v.optional(v.pipe(v.string(), v.regex(/^solana:https?:\/\//))),
  recipient: v.string(),
  mint: v.string(),
  amount: Amount,
  tierId: v.string(),
  tierName: v.string(),
  spins: Spins,
  expiresAt: Time,
  slow: v.optional(v.boolean()),
});
const StatusSchema = v.object({
  reference: Reference,
  status: v.picklist(["waiting", "confirmed", "underpaid", "expired"]),
  tierId: v.string(),
  tierName: v.string(),
  spins: Spins,
  priceAmount: Amount,
  receivedAmount: v.optional(Amount),
  signature: v.optional(v.string()),
  expiresAt: Time,
});

const parser =
  <T extends v.GenericSchema>(schema: T) =>
  (data: unknown): v.InferOutput<T> | null => {
    const result = v.safeParse(schema, data);
    return result.success ? result.output : null;
  };
export const parseCreatedPayment = parser(CreatedSchema);
export const parsePaymentStatus = parser(StatusSchema);

/** What the dialog's live status says for a request as it stands. */
export function statusText(payment: Pick<PaymentStatusBody, "status" | "priceAmount" | "receivedAmount">): string {
  switch (payment.status) {
    case "waiting":
      return WAITING_TEXT;
    case "confirmed":
      return CONFIRMED_TEXT;
    case "expired":
      return EXPIRED_TEXT;
    case "underpaid":
      return `We received ${formatZnAmount(payment.receivedAmount ?? "0")}, less than ${formatZnAmount(payment.priceAmount)}.`;
  }
}

/** The toast at confirmation, wherever the visitor is on the page. */
export function confirmedToast(spins: number) {
  return {
    title: CONFIRMED_TOAST_TITLE,
    description: `+${formatCount(spins)} lottery spins. Because nothing is worth everything.`,
  };
}

/** Why a request could not be made, in the visitor's words. */
export function requestRefusalText(status: number, error: string | undefined): string {
  if (status === 422 && error === "name_not_allowed") return "Name Not Allowed";
  if (status === 422 && error === "invalid_name") return "That name cannot be used. Try a shorter one.";
  if (status === 429) return "Too many payment requests. Try again in a few minutes.";
  if (status === 503 && error === "busy") return "The shop is busy. Try again in a minute.";
  return PAYMENTS_UNAVAILABLE_TEXT;
}

/** A request this browser made and has not seen settle. */
export interface PendingPayment extends CreatedPayment {
  /** The tier's price as the card shows it (a number of $ZN), for the dialog's first line. */
  price: number;
}

function readList<T>(storage: Storage | undefined, key: string, item: v.GenericSchema<unknown, T>): T[] {
  try {
    const raw = storage?.getItem(key);
    if (!raw) return [];
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((entry: unknown) => {
      const one = v.safeParse(item, entry);
      return one.success ? [one.output] : [];
    });
  } catch {
    return [];
  }
}

function writeList(storage: Storage | undefined, key: string, list: unknown[]): void {
  try {
    storage?.setItem(key, JSON.stringify(list));
  } catch {
    // Blocked or full storage: the record lives for this visit only.
  }
}

const PendingSchema = v.object({ ...CreatedSchema.entries, price: v.pipe(v.number(), v.minValue(0)) });

/** The pending requests, newest last; those long past their expiry are dropped from storage. */
export function readPending(storage: Storage | undefined, now: number): PendingPayment[] {
  const all = readList(storage, PENDING_PAYMENTS_KEY, PendingSchema);
  const kept = all.filter((entry) => Date.parse(entry.expiresAt) + PENDING_KEPT_AFTER_EXPIRY_MS > now);
  if (kept.length !== all.length) writeList(storage, PENDING_PAYMENTS_KEY, kept);
  return kept;
}

export function addPending(storage: Storage | undefined, payment: PendingPayment, now: number): void {
  const others = readPending(storage, now).filter((entry) => entry.reference !== payment.reference);
  writeList(storage, PENDING_PAYMENTS_KEY, [...others, payment]);
}

export function removePending(storage: Storage | undefined, reference: string, now: number): void {
  const all = readPending(storage, now);
  const kept = all.filter((entry) => entry.reference !== reference);
  if (kept.length !== all.length) writeList(storage, PENDING_PAYMENTS_KEY, kept);
}

/** The newest pending request for a tier that may still be paid (not past its expiry). */
export function openPendingFor(storage: Storage | undefined, tierId: string, now: number): PendingPayment | undefined {
  return readPending(storage, now)
    .filter((entry) => entry.tierId === tierId && Date.parse(entry.expiresAt) > now)
    .at(-1);
}

/**
 * Records a confirmed reference as credited; true only the first time on this browser, so the
 * spins are added once whatever replays the confirmation (a reload, a second tab, the socket and
 * the poll both). The caller holds a lock across tabs around it (navigator.locks).
 */
export function claimCredit(storage: Storage | undefined, reference: string, seen: Set<string>): boolean {
  if (seen.has(reference)) return false;
  const credited = readList(storage, CREDITED_PAYMENTS_KEY, v.string());
  seen.add(reference);
  if (credited.includes(reference)) return false;
  writeList(storage, CREDITED_PAYMENTS_KEY, [...credited, reference].slice(-CREDITED_KEPT));
  return true;
}

/** Whether a status is final: nothing more will change it for the page. */
export function isSettled(status: PaymentStatus): boolean {
  // An expired request can still be confirmed: a payment made before the end, seen after the sweep.
  return status === "confirmed" || status === "underpaid";
}
