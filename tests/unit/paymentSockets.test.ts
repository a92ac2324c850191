/**
 * The payments' side of the auction socket (service/payments/sockets.ts) over a scripted store:
 * whom each outcome reaches, the bound on references a socket watches, and on new watches a minute.
 */

import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { createLogger } from "../../service/logger.ts";
import { createPaymentSockets } from "../../service/payments/sockets.ts";
import type { PaymentStore, StoredPayment } from "../../service/storage/payments.ts";
import type { ServerMessage } from "../../src/lib/auction/protocol.ts";

function payment(reference: string, status: StoredPayment["status"] = "waiting"): StoredPayment {
  return {
    reference,
    tierId: 2,
    priceBaseUnits: 100_000_000n,
    decimals: 6,
    mint: "M",
    recipient: "R",
    name: "Nobody",
    createdAt: "2026-01-01T12:00:00.000Z",
    expiresAt: "2026-01-01T12:30:00.000Z",
    status,
    signature: status === "waiting" ? null : "S",
    amountReceived: status === "waiting" ? null : 100_000_000n,
    confirmedAt: null,
    hidden: false,
  };
}

function setUp() {
  const stored = new Map<string, StoredPayment>();
  let outcome: (payment: StoredPayment) => void = () => {};
  let ready: (ready: boolean) => void = () => {};
  const reads: string[] = [];
  const store = {
    payments: {
      async find(reference: string) {
        reads.push(reference);
        return stored.get(reference) ?? null;
      },
    } as unknown as PaymentStore,
    onReadyChange(listener: (value: boolean) => void) {
      ready = listener;
      return () => {};
    },
  };
  const sockets = createPaymentSockets({
    store,
    logger: createLogger("silent"),
    onOutcome(listener) {
      outcome = listener;
      return () => {};
    },
  });
  const sent: { socket: string; message: ServerMessage }[] = [];
  const named = new Map<WebSocket, string>();
  sockets.attach((socket, message) => sent.push({ socket: named.get(socket) ?? "?", message }));
  const socket = (name: string) => {
    const fake = {} as WebSocket;
    named.set(fake, name);
    sockets.hooks.opened(fake);
    return fake;
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    stored,
    sockets,
    sent,
    socket,
    reads,
    settle,
    outcome: (p: StoredPayment) => outcome(p),
    ready: (r: boolean) => ready(r),
  };
}

describe("payments on the socket", () => {
  it("sends the status to the watchers, the purchase to every socket, and re-reads after an outage only what changed", async () => {
    const bench = setUp();
    const page = bench.socket("page");
    bench.socket("other"); // open, watching nothing: it hears only purchases
    bench.stored.set("A", payment("A"));
    bench.sockets.hooks.watch(page, "A");
    bench.sockets.hooks.watch(page, "A");
    await bench.settle();
    expect(bench.reads).toEqual(["A"]);
    expect(bench.sent).toEqual([
      { socket: "page", message: expect.objectContaining({ type: "payment", reference: "A", status: "waiting" }) },
    ]);
    bench.sent.length = 0;

    bench.outcome(payment("A", "confirmed"));
    expect(bench.sent).toEqual([
      { socket: "page", message: expect.objectContaining({ type: "payment", status: "confirmed", signature: "S" }) },
      { socket: "page", message: { type: "purchase", name: "Nobody", tierName: "Deluxe Nothing" } },
      { socket: "other", message: { type: "purchase", name: "Nobody", tierName: "Deluxe Nothing" } },
    ]);
    bench.sent.length = 0;

    // Back from an outage: unchanged, nothing is sent; a change missed meanwhile is.
    bench.stored.set("A", payment("A", "confirmed"));
    bench.ready(true);
    await bench.settle();
    expect(bench.sent).toEqual([]);
    bench.stored.set("A", { ...payment("A", "confirmed"), signature: "T" });
    bench.ready(true);
    await bench.settle();
    expect(bench.sent).toEqual([
      { socket: "page", message: expect.objectContaining({ reference: "A", signature: "T" }) },
    ]);

    bench.sockets.hooks.closed(page);
    bench.sent.length = 0;
    bench.outcome(payment("A", "underpaid"));
    expect(bench.sent).toEqual([]);
  });

  it("watches at most 8 references a socket, letting the oldest go, and starts at most 16 a minute", async () => {
    const bench = setUp();
    const page = bench.socket("page");
    for (let index = 0; index < 20; index++) {
      bench.stored.set(`R${index}`, payment(`R${index}`));
      bench.sockets.hooks.watch(page, `R${index}`);
    }
    await bench.settle();
    expect(bench.reads).toEqual(Array.from({ length: 16 }, (_, index) => `R${index}`));
    bench.sent.length = 0;
    for (let index = 0; index < 20; index++) bench.outcome(payment(`R${index}`, "expired"));
    // R8 to R15 are watched: the last 8 of the 16 started.
    expect(bench.sent.map(({ message }) => (message.type === "payment" ? message.reference : message.type))).toEqual(
      Array.from({ length: 8 }, (_, index) => `R${index + 8}`),
    );
  });
});
