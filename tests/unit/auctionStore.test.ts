import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type WebSocket as ServerSocket, WebSocketServer } from "ws";
import type { WireBid } from "../../src/lib/auction/protocol.ts";
import { $auction, $typedBidderName, BID_ACK_TIMEOUT_MS, connectAuction, placeBid } from "../../src/stores/auction.ts";
import { $toasts, dismissToast } from "../../src/stores/toasts.ts";

const bid = (id: number, bidderName: string, amountCents: number): WireBid => ({
  id,
  bidderName,
  amountCents,
  createdAt: "2026-11-21T12:00:00.000Z",
});

async function until(condition: () => boolean, what: string) {
  await vi.waitFor(() => expect(condition(), what).toBe(true), { timeout: 5_000, interval: 5 });
}

function clearToasts() {
  for (const toast of $toasts.get()) dismissToast(toast.id);
}

describe("auction store over a real socket", () => {
  let server: WebSocketServer;
  let url: string;
  let serverSocket: ServerSocket | undefined;
  const received: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.once("listening", resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/realtime`;
    server.on("connection", (socket) => {
      serverSocket = socket;
      socket.on("message", (data) => received.push(JSON.parse(String(data))));
    });
  });

  afterAll(async () => {
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (message: unknown) => serverSocket?.send(JSON.stringify(message));

  it("fails a bid at once when there is no connection", async () => {
    await expect(placeBid("Ada", 100)).resolves.toEqual({ ok: false, code: "no_connection" });
  });

  it("shows the snapshot, then adds other bidders' bids once each with a New Bid! toast", async () => {
    connectAuction(url);
    await until(() => $auction.get().status === "live", "live");
    send({
      type: "snapshot",
      bids: [bid(2, "Ada", 1_500), bid(1, "Bo", 1_000)],
      highest: bid(2, "Ada", 1_500),
      bidders: 2,
    });
    await until(() => $auction.get().bids.length === 2, "snapshot");

    clearToasts();
    send({ type: "bid", bid: bid(3, "Grace", 123_450), bidders: 3 });
    send({ type: "bid", bid: bid(3, "Grace", 123_450), bidders: 3 });
    await until(() => $auction.get().highest?.id === 3, "the new bid");
    expect($auction.get().bids.map((listed) => listed.id)).toEqual([3, 2, 1]);
    expect($auction.get().bidders).toBe(3);
    expect($toasts.get().map(({ title, description }) => ({ title, description }))).toEqual([
      { title: "New Bid!", description: "Grace bid $1,234.50" },
    ]);
  });

  it("raises no toast for the name this visitor has typed", async () => {
    clearToasts();
    $typedBidderName.set("  Lin ");
    send({ type: "bid", bid: bid(4, "Lin", 200_000), bidders: 4 });
    await until(() => $auction.get().highest?.id === 4, "own bid");
    expect($toasts.get()).toEqual([]);
  });

  it("resolves a bid with the acknowledgement, or with the typed refusal", async () => {
    const accepted = placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const sent = received.find((message) => message.type === "bid") as { requestId: string; amount: number };
    expect(sent).toMatchObject({ bidderName: "Lin", amount: 2_500 });
    send({ type: "accepted", requestId: sent.requestId, bid: bid(5, "Lin", 250_000) });
    await expect(accepted).resolves.toEqual({ ok: true, bid: bid(5, "Lin", 250_000) });
    expect($auction.get().bids[0]?.id).toBe(5);

    received.length = 0;
    const refused = placeBid("Lin", 250_001);
    await until(() => received.length === 1, "the second bid");
    const second = received[0] as { requestId: string };
    send({ type: "error", requestId: second.requestId, code: "too_low", message: "Too low.", highestCents: 300_000 });
    await expect(refused).resolves.toEqual({ ok: false, code: "too_low", highestCents: 300_000 });
  });

  it("gives up on a bid that gets no acknowledgement within 10 s", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const outcome = placeBid("Lin", 400_000);
      vi.advanceTimersByTime(BID_ACK_TIMEOUT_MS);
      await expect(outcome).resolves.toEqual({ ok: false, code: "timeout" });
    } finally {
      vi.useRealTimers();
    }
  });
});
