import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type WebSocket as ServerSocket, WebSocketServer } from "ws";
import type { WireBid } from "../../src/lib/auction/protocol.ts";
import type { SocketLike } from "../../src/lib/auction/realtimeClient.ts";
import { globalTimers } from "../../src/lib/timers.ts";
import { BID_ACK_TIMEOUT_MS, createAuctionConnection } from "../../src/stores/auctionConnection.ts";
import type { ToastInput } from "../../src/stores/toasts.ts";

const bid = (id: number, bidderName: string, amountCents: number): WireBid => ({
  id,
  bidderName,
  amountCents,
  createdAt: "2026-11-21T12:00:00.000Z",
});

async function until(condition: () => boolean, what: string) {
  await vi.waitFor(() => expect(condition(), what).toBe(true), { timeout: 5_000, interval: 5 });
}

/** A real socket server and one page's connection to it, both closed when the test ends. */
async function openAuction() {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  let serverSocket: ServerSocket | undefined;
  const received: Record<string, unknown>[] = [];
  server.on("connection", (socket) => {
    serverSocket = socket;
    socket.on("message", (data) => received.push(JSON.parse(String(data))));
  });
  const toasts: ToastInput[] = [];
  const connection = createAuctionConnection({
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/realtime`,
    createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    timers: globalTimers,
    log: console,
    notify: (toast) => toasts.push(toast),
  });
  onTestFinished(async () => {
    connection.stop();
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  });
  const send = (message: unknown) => serverSocket?.send(JSON.stringify(message));
  /** Connects and waits until the page is live. */
  const goLive = async () => {
    connection.connect();
    await until(() => connection.$auction.get().status === "live" && serverSocket !== undefined, "live");
  };
  const dropConnections = () => {
    for (const socket of server.clients) socket.terminate();
  };
  return { connection, received, toasts, send, goLive, dropConnections };
}

describe("auction store over a real socket", () => {
  it("fails a bid at once when there is no connection", async () => {
    const { connection } = await openAuction();
    await expect(connection.placeBid("Ada", 100)).resolves.toEqual({ ok: false, code: "no_connection" });
  });

  it("shows the snapshot, then adds other bidders' bids once each with a New Bid! toast", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    const { $auction } = connection;
    await goLive();
    send({
      type: "snapshot",
      bids: [bid(2, "Ada", 1_500), bid(1, "Bo", 1_000)],
      highest: bid(2, "Ada", 1_500),
      bidders: 2,
      moderation: 0,
    });
    await until(() => $auction.get().bids.length === 2, "snapshot");

    send({ type: "bid", bid: bid(3, "Grace", 123_450), bidders: 3 });
    send({ type: "bid", bid: bid(3, "Grace", 123_450), bidders: 3 });
    await until(() => $auction.get().highest?.id === 3, "the new bid");
    expect($auction.get().bids.map((listed) => listed.id)).toEqual([3, 2, 1]);
    expect($auction.get().bidders).toBe(3);
    expect(toasts).toEqual([{ title: "New Bid!", description: "Grace bid $1,234.50" }]);
  });

  it("replaces the list after an operator's action: a hidden top bid goes, the highest and count fall back", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    const { $auction } = connection;
    await goLive();
    send({ type: "bid", bid: bid(1, "Ada", 1_000), bidders: 1 });
    send({ type: "bid", bid: bid(2, "Troll", 100_000_000_000), bidders: 2 });
    await until(() => $auction.get().highest?.id === 2, "the troll's bid");
    send({ type: "moderated", bids: [bid(1, "Ada", 1_000)], highest: bid(1, "Ada", 1_000), bidders: 1, moderation: 1 });
    await until(() => $auction.get().highest?.id === 1, "the list after the hide");
    expect($auction.get()).toMatchObject({ bids: [bid(1, "Ada", 1_000)], bidders: 1 });
    expect(toasts.map((toast) => toast.description)).toEqual(["Ada bid $10.00", "Troll bid $1,000,000,000.00"]);
  });

  it("raises no toast for the name this visitor has typed", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    await goLive();
    connection.$typedBidderName.set("  Lin ");
    send({ type: "bid", bid: bid(4, "Lin", 200_000), bidders: 4 });
    // A barrier: the next bid's toast comes after Lin's would have.
    send({ type: "bid", bid: bid(5, "Mo", 210_000), bidders: 5 });
    await until(() => connection.$auction.get().highest?.id === 5, "both bids");
    expect(toasts).toEqual([{ title: "New Bid!", description: "Mo bid $2,100.00" }]);
  });

  it("resolves a bid with the acknowledgement, or with the typed refusal", async () => {
    const { connection, received, send, goLive } = await openAuction();
    await goLive();
    const accepted = connection.placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const sent = received.find((message) => message.type === "bid") as { requestId: string; amount: number };
    expect(sent).toMatchObject({ bidderName: "Lin", amount: 2_500 });
    send({ type: "accepted", requestId: sent.requestId, bid: bid(5, "Lin", 250_000) });
    await expect(accepted).resolves.toEqual({ ok: true, bid: bid(5, "Lin", 250_000) });
    expect(connection.$auction.get().bids[0]?.id).toBe(5);

    received.length = 0;
    const refused = connection.placeBid("Lin", 250_001);
    await until(() => received.length === 1, "the second bid");
    const second = received[0] as { requestId: string };
    send({ type: "error", requestId: second.requestId, code: "too_low", message: "Too low.", highestCents: 300_000 });
    await expect(refused).resolves.toEqual({ ok: false, code: "too_low", highestCents: 300_000 });
  });

  it("gives up on a bid that gets no acknowledgement within 10 s", async () => {
    const { connection, goLive } = await openAuction();
    await goLive();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const outcome = connection.placeBid("Lin", 400_000);
    vi.advanceTimersByTime(BID_ACK_TIMEOUT_MS - 1);
    expect(await Promise.race([outcome, Promise.resolve("waiting")])).toBe("waiting");
    vi.advanceTimersByTime(1);
    await expect(outcome).resolves.toEqual({ ok: false, code: "timeout" });
  });

  it("answers a bid in flight as lost when its connection ends: no answer can cross to the next one", async () => {
    const { connection, received, goLive, dropConnections } = await openAuction();
    await goLive();
    const outcome = connection.placeBid("Lin", 500_000);
    await until(() => received.length === 1, "the bid message");
    dropConnections();
    await expect(outcome).resolves.toEqual({ ok: false, code: "connection_lost" });
  });
});
