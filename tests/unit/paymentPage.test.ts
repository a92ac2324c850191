/** The page's pure half of real purchases (docs/design.md#8): texts, amounts, the two localStorage records. */
import { describe, expect, it } from "vitest";
import {
  addPending,
  CREDITED_PAYMENTS_KEY,
  claimCredit,
  confirmedToast,
  formatZnAmount,
  openPendingFor,
  PENDING_KEPT_AFTER_EXPIRY_MS,
  type PendingPayment,
  parseCreatedPayment,
  readPending,
  removePending,
  requestRefusalText,
  statusText,
} from "../../src/lib/paymentPage.ts";
import { PAYMENTS_UNAVAILABLE_TEXT } from "../../src/lib/payments.ts";
import { PENDING_PAYMENTS_KEY } from "../../src/lib/purchase.ts";
import { serviceEndpoint } from "../../src/lib/serviceEndpoint.ts";
import { purchaseToastTitle } from "../../src/stores/auctionConnection.ts";
import { expectEach } from "../harness/expectEach.ts";

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
}

const NOW = Date.UTC(2026, 10, 21, 12);
const REFERENCE = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

function pending(overrides: Partial<PendingPayment> = {}): PendingPayment {
  return {
    reference: REFERENCE,
    url: `solana:${REFERENCE}?amount=100`,
    recipient: REFERENCE,
    mint: REFERENCE,
    amount: "100",
    tierId: "2",
    tierName: "Deluxe Nothing",
    spins: 7,
    expiresAt: new Date(NOW + 30 * 60_000).toISOString(),
    price: 100,
    ...overrides,
  };
}

describe("texts", () => {
  it("says each status in the product's words", () => {
    expect(statusText({ status: "waiting", priceAmount: "100" })).toBe("Waiting for your payment…");
    expect(statusText({ status: "confirmed", priceAmount: "100" })).toBe("Payment confirmed!");
    expect(statusText({ status: "expired", priceAmount: "100" })).toBe(
      "This payment request has expired. Start a new one.",
    );
    expect(statusText({ status: "underpaid", priceAmount: "1000000", receivedAmount: "999999.5" })).toBe(
      "We received 999,999.5 $ZN, less than 1,000,000 $ZN.",
    );
  });

  it("groups amounts without rounding them", () => {
    expectEach(formatZnAmount, [
      ["25", "25 $ZN"],
      ["1000", "1,000 $ZN"],
      ["1234567.000001", "1,234,567.000001 $ZN"],
      ["0.5", "0.5 $ZN"],
    ]);
  });

  it("toasts a confirmation and every visitor's purchase", () => {
    expect(confirmedToast(1000)).toEqual({
      title: "Payment Confirmed!",
      description: "+1,000 lottery spins. Because nothing is worth everything.",
    });
    expect(purchaseToastTitle("Ada", "Deluxe Nothing")).toBe("Ada just bought Deluxe Nothing!");
    expect(purchaseToastTitle(null, "Deluxe Nothing")).toBe("Someone just bought Deluxe Nothing!");
    expect(purchaseToastTitle("  ", "Premium Nothing")).toBe("Someone just bought Premium Nothing!");
  });

  it("words each refusal of a request", () => {
    expect(requestRefusalText(422, "name_not_allowed")).toBe("Name Not Allowed");
    expect(requestRefusalText(503, "unavailable")).toBe(PAYMENTS_UNAVAILABLE_TEXT);
    expect(requestRefusalText(500, undefined)).toBe(PAYMENTS_UNAVAILABLE_TEXT);
    expect(requestRefusalText(429, "rate_limited")).toMatch(/Too many payment requests/);
    expect(requestRefusalText(503, "busy")).toBe("The shop is busy. Try again in a minute.");
  });
});

describe("service URLs", () => {
  it("sits beside the socket, over http(s), or on the page's origin", () => {
    expect(serviceEndpoint("", "/payments/config")).toBe("/payments/config");
    expect(serviceEndpoint("wss://x.example/live/realtime", "/payments/config")).toBe(
      "https://x.example/live/payments/config",
    );
    expect(serviceEndpoint("ws://127.0.0.1:9/realtime?a=1", "/payments")).toBe("http://127.0.0.1:9/payments");
  });
});

describe("answers from the service", () => {
  it("accepts a created request and refuses one that is not a solana: URL", () => {
    const { price: _price, ...created } = pending();
    expect(parseCreatedPayment(created)).toEqual(created);
    expect(parseCreatedPayment({ ...created, url: "https://evil.example" })).toBeNull();
    expect(parseCreatedPayment({ ...created, amount: "1e3" })).toBeNull();
    // A slow chain is said with the request; an older service says nothing of it.
    expect(parseCreatedPayment({ ...created, slow: true })).toEqual({ ...created, slow: true });
    expect(parseCreatedPayment({ ...created, slow: "yes" })).toBeNull();
  });
});

describe("pending requests", () => {
  it("are kept, replaced by reference, removed, and found for their tier while open", () => {
    const storage = memoryStorage();
    addPending(storage, pending(), NOW);
    addPending(storage, pending({ amount: "100" }), NOW);
    expect(readPending(storage, NOW)).toHaveLength(1);
    expect(openPendingFor(storage, "2", NOW)?.reference).toBe(REFERENCE);
    expect(openPendingFor(storage, "3", NOW)).toBeUndefined();
    expect(openPendingFor(storage, "2", NOW + 31 * 60_000)).toBeUndefined();
    removePending(storage, REFERENCE, NOW);
    expect(readPending(storage, NOW)).toEqual([]);
  });

  it("are dropped some time after their expiry, and garbage in storage is ignored", () => {
    const storage = memoryStorage();
    addPending(storage, pending(), NOW);
    const expiry = NOW + 30 * 60_000;
    expect(readPending(storage, expiry + PENDING_KEPT_AFTER_EXPIRY_MS - 1)).toHaveLength(1);
    expect(readPending(storage, expiry + PENDING_KEPT_AFTER_EXPIRY_MS)).toEqual([]);
    expect(storage.items.get(PENDING_PAYMENTS_KEY)).toBe("[]");
    for (const junk of ["{", '{"a":1}', '[1,"x",{"reference":"bad"}]']) {
      storage.items.set(PENDING_PAYMENTS_KEY, junk);
      expect(readPending(storage, NOW)).toEqual([]);
    }
  });

  it("survive storage that throws (blocked or full)", () => {
    const broken = {
      getItem: () => {
        throw new Error("blocked");
      },
      setItem: () => {
        throw new Error("full");
      },
    };
    expect(() => addPending(broken, pending(), NOW)).not.toThrow();
    expect(readPending(broken, NOW)).toEqual([]);
  });
});

describe("credits", () => {
  it("are claimed once per reference per browser: a replay, a reload or a second tab gets false", () => {
    const storage = memoryStorage();
    const firstTab = new Set<string>();
    expect(claimCredit(storage, REFERENCE, firstTab)).toBe(true);
    expect(claimCredit(storage, REFERENCE, firstTab)).toBe(false);
    expect(claimCredit(storage, REFERENCE, new Set())).toBe(false);
    expect(claimCredit(storage, "other", new Set())).toBe(true);
    expect(JSON.parse(storage.items.get(CREDITED_PAYMENTS_KEY) ?? "")).toEqual([REFERENCE, "other"]);
  });

  it("are claimed once in the page even when storage keeps nothing", () => {
    const seen = new Set<string>();
    expect(claimCredit(undefined, REFERENCE, seen)).toBe(true);
    expect(claimCredit(undefined, REFERENCE, seen)).toBe(false);
  });
});
