import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type WebSocket as ServerSocket, WebSocketServer } from "ws";
import type { ServerMessage, WireBid, WireRound, WireWinner } from "../../src/lib/auction/protocol.ts";
import type { SocketLike } from "../../src/lib/auction/realtimeClient.ts";
import { globalTimers } from "../../src/lib/timers.ts";
import { BID_ACK_TIMEOUT_MS, createAuctionConnection, outbidToast } from "../../src/stores/auctionConnection.ts";
import type { ToastInput } from "../../src/stores/toasts.ts";

const bid = (id: number, bidderName: string, amountCents: number): WireBid => ({
  id,
  bidderName,
  amountCents,
  createdAt: "2026-11-21T12:00:00.000Z",
});

const NOW = "2026-11-21T12:00:00.000Z";
const IN_AN_HOUR = "2026-11-21T13:00:00.000Z";

/** A round as the service describes it: round 1, open for an hour, unless told otherwise. */
const round = (overrides: Partial<WireRound> = {}): WireRound => ({
  number: 1,
  endsAt: IN_AN_HOUR,
  ended: false,
  seconds: 3_600,
  softCloseSeconds: 30,
  ...overrides,
});

/** A state message (snapshot, moderated, roundEnded) or a resume, with the given fields. */
function state<Type extends "snapshot" | "moderated" | "roundEnded" | "resume">(
  type: Type,
  fields: Partial<Omit<Extract<ServerMessage, { type: Type }>, "type">> = {},
) {
  return {
    type,
    bids: [],
    highest: null,
    bidders: 0,
    moderation: 0,
    round: round(),
    pastWinners: [],
    now: NOW,
    ...fields,
  };
}

/** The broadcast of an accepted bid, of round 1 unless told otherwise. */
const broadcast = (placed: WireBid, bidders: number, roundNumber = 1, endsAt: string | null = IN_AN_HOUR) =>
  ({ type: "bid", bid: placed, bidders, round: roundNumber, endsAt }) satisfies ServerMessage;

async function until(condition: () => boolean, what: string) {
  await vi.waitFor(() => expect(condition(), what).toBe(true), { timeout: 5_000, interval: 5 });
}

/** A real socket server and one page's connection to it, both closed when the test ends. */
async function openAuction(monotonicNow?: () => number) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  let serverSocket: ServerSocket | undefined;
  const received: Record<string, unknown>[] = [];
  /** Each connection's path and query, in order. */
  const connections: string[] = [];
  server.on("connection", (socket, request) => {
    serverSocket = socket;
    connections.push(request.url ?? "");
    socket.on("message", (data) => received.push(JSON.parse(String(data))));
  });
  const toasts: ToastInput[] = [];
  const connection = createAuctionConnection({
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/realtime`,
    createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    timers: globalTimers,
    log: console,
    notify: (toast) => toasts.push(toast),
    monotonicNow,
  });
  onTestFinished(async () => {
    connection.stop();
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  });
  const send = (message: ServerMessage) => serverSocket?.send(JSON.stringify(message));
  /** Connects and waits until the page is live. */
  const goLive = async () => {
    connection.connect();
    await until(() => connection.$auction.get().status === "live" && serverSocket !== undefined, "live");
  };
  const dropConnections = () => {
    for (const socket of server.clients) socket.terminate();
  };
  return { connection, received, connections, toasts, send, goLive, dropConnections };
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
    send(
      state("snapshot", {
        bids: [bid(2, "Ada", 1_500), bid(1, "Bo", 1_000)],
        highest: bid(2, "Ada", 1_500),
        bidders: 2,
      }),
    );
    await until(() => $auction.get().bids.length === 2, "snapshot");

    send(broadcast(bid(3, "Grace", 123_450), 3));
    send(broadcast(bid(3, "Grace", 123_450), 3));
    await until(() => $auction.get().highest?.id === 3, "the new bid");
    expect($auction.get().bids.map((listed) => listed.id)).toEqual([3, 2, 1]);
    expect($auction.get().bidders).toBe(3);
    expect(toasts).toEqual([{ title: "New Bid!", description: "Grace bid $1,234.50" }]);
  });

  it("adds every bid of a conflated frame and raises one New Bid!, for the newest from someone else", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    const { $auction } = connection;
    await goLive();
    connection.$typedBidderName.set(" Me ");
    send(state("snapshot", { bids: [bid(1, "Bo", 1_000)], highest: bid(1, "Bo", 1_000), bidders: 1 }));
    await until(() => $auction.get().bids.length === 1, "snapshot");
    // docs/design.md#10: the bids since the socket's last frame, oldest first; the newest is this visitor's own.
    send({
      type: "bids",
      lastId: 4,
      bidders: 3,
      round: 1,
      endsAt: "2026-11-21T13:00:30.000Z",
      bids: [bid(2, "Ada", 2_000), bid(3, "Grace", 3_000), bid(4, "Me", 4_000)],
    });
    await until(() => $auction.get().highest?.id === 4, "the frame's bids");
    expect($auction.get()).toMatchObject({
      bids: [bid(4, "Me", 4_000), bid(3, "Grace", 3_000), bid(2, "Ada", 2_000), bid(1, "Bo", 1_000)],
      bidders: 3,
      round: round({ endsAt: "2026-11-21T13:00:30.000Z" }),
    });
    expect(toasts).toEqual([{ title: "New Bid!", description: "Grace bid $30.00" }]);
  });

  it("replaces the list after an operator's action: a hidden top bid goes, the highest and count fall back", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    const { $auction } = connection;
    await goLive();
    send(broadcast(bid(1, "Ada", 1_000), 1));
    send(broadcast(bid(2, "Troll", 100_000_000_000), 2));
    await until(() => $auction.get().highest?.id === 2, "the troll's bid");
    send(
      state("moderated", { bids: [bid(1, "Ada", 1_000)], highest: bid(1, "Ada", 1_000), bidders: 1, moderation: 1 }),
    );
    await until(() => $auction.get().highest?.id === 1, "the list after the hide");
    expect($auction.get()).toMatchObject({ bids: [bid(1, "Ada", 1_000)], bidders: 1, leaderNote: "removed" });
    expect(toasts.map((toast) => toast.description)).toEqual(["Ada bid $10.00", "Troll bid $1,000,000,000.00"]);
    // The next bid that leads is news enough: the note goes.
    send(broadcast(bid(3, "Bo", 2_000), 2));
    await until(() => $auction.get().highest?.id === 3, "the next bid");
    expect($auction.get().leaderNote).toBeNull();
  });

  it("says nothing about a moderator when the hidden bid was not the leading one", async () => {
    const { connection, send, goLive } = await openAuction();
    const { $auction } = connection;
    await goLive();
    send(broadcast(bid(1, "Troll", 1_000), 1));
    send(broadcast(bid(2, "Ada", 2_000), 2));
    await until(() => $auction.get().highest?.id === 2, "both bids");
    send(
      state("moderated", { bids: [bid(2, "Ada", 2_000)], highest: bid(2, "Ada", 2_000), bidders: 1, moderation: 1 }),
    );
    await until(() => $auction.get().bids.length === 1, "the list after the hide");
    expect($auction.get().leaderNote).toBeNull();
  });

  it("tells the page whose bid led, and only it, that it was outbid: personally, with a way back to the form", async () => {
    const { connection, toasts, received, send, goLive } = await openAuction();
    await goLive();
    send(state("snapshot", { bids: [bid(4, "Mo", 100_000)], highest: bid(4, "Mo", 100_000), bidders: 1 }));
    await until(() => connection.$auction.get().bids.length === 1, "snapshot");
    const placed = connection.placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const { requestId } = received.find((message) => message.type === "bid") as { requestId: string };
    send({ type: "accepted", requestId, bid: bid(5, "Lin", 250_000), round: 1 });
    await placed;
    send(broadcast(bid(6, "Grace", 300_000), 3));
    await until(() => connection.$auction.get().highest?.id === 6, "Grace's bid");
    expect(toasts).toEqual([
      {
        title: "You've been outbid by Grace — $3,000.00",
        variant: "personal",
        action: { label: "Bid again", href: "#place-bid" },
      },
    ]);
    expect(outbidToast(bid(6, "Grace", 300_000))).toEqual(toasts[0]);
    // No longer leading: the next bid is everyone's news.
    send(broadcast(bid(7, "Mo", 400_000), 3));
    await until(() => connection.$auction.get().highest?.id === 7, "Mo's bid");
    expect(toasts[1]).toEqual({ title: "New Bid!", description: "Mo bid $4,000.00" });
  });

  it("raises no toast for the name this visitor has typed", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    await goLive();
    connection.$typedBidderName.set("  Lin ");
    send(broadcast(bid(4, "Lin", 200_000), 4));
    // A barrier: the next bid's toast comes after Lin's would have.
    send(broadcast(bid(5, "Mo", 210_000), 5));
    await until(() => connection.$auction.get().highest?.id === 5, "both bids");
    expect(toasts).toEqual([{ title: "New Bid!", description: "Mo bid $2,100.00" }]);
  });

  it("resolves a bid with the acknowledgement, or with the typed refusal", async () => {
    const { connection, received, send, goLive } = await openAuction();
    await goLive();
    send(state("snapshot", { bids: [bid(4, "Mo", 100_000)], highest: bid(4, "Mo", 100_000), bidders: 1 }));
    await until(() => connection.$auction.get().bids.length === 1, "snapshot");
    const accepted = connection.placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const sent = received.find((message) => message.type === "bid") as { requestId: string; amount: number };
    expect(sent).toMatchObject({ bidderName: "Lin", amount: 2_500 });
    send({ type: "accepted", requestId: sent.requestId, bid: bid(5, "Lin", 250_000), round: 1 });
    await expect(accepted).resolves.toEqual({ ok: true, bid: bid(5, "Lin", 250_000) });
    expect(connection.$auction.get().bids[0]?.id).toBe(5);

    received.length = 0;
    const refused = connection.placeBid("Lin", 250_001);
    await until(() => received.length === 1, "the second bid");
    const second = received[0] as { requestId: string };
    send({ type: "error", requestId: second.requestId, code: "too_low", message: "Too low.", highestCents: 300_000 });
    await expect(refused).resolves.toEqual({ ok: false, code: "too_low", highestCents: 300_000 });
  });

  it("says when a bid was passed at once by an automatic bid, and then raises no outbid toast for it", async () => {
    const { connection, toasts, received, send, goLive } = await openAuction();
    await goLive();
    connection.$typedBidderName.set("Lin");
    send(state("snapshot", { bids: [bid(4, "Mo", 100_000)], highest: bid(4, "Mo", 100_000), bidders: 1 }));
    await until(() => connection.$auction.get().bids.length === 1, "snapshot");
    const placed = connection.placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const { requestId } = received.find((message) => message.type === "bid") as { requestId: string };
    send({ type: "accepted", requestId, bid: bid(5, "Lin", 250_000), round: 1, outbidByMaximum: true });
    await expect(placed).resolves.toEqual({ ok: true, bid: bid(5, "Lin", 250_000), outbidByMaximum: true });
    // Mo's maximum answers: the page's own bid never led, so this is news like any bid.
    send(broadcast(bid(5, "Lin", 250_000), 2));
    send(broadcast(bid(6, "Mo", 250_001), 2));
    await until(() => connection.$auction.get().highest?.id === 6, "the automatic bid");
    expect(toasts).toEqual([{ title: "New Bid!", description: "Mo bid $2,500.01" }]);
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

describe("rounds over a real socket", () => {
  /** The end's toasts: "Sold!", or "You won …" on the winner's page. */
  const sold = (toasts: ToastInput[]) =>
    toasts.filter((toast) => toast.title === "Sold!" || toast.title.startsWith("You won"));

  /** A page live on round 1 with Mo's bid, and its own accepted bid of Lin's (id 5, $2,500.00). */
  async function openRoundWithOwnBid() {
    const auction = await openAuction();
    const { connection, received, send, goLive } = auction;
    await goLive();
    send(state("snapshot", { bids: [bid(4, "Mo", 100_000)], highest: bid(4, "Mo", 100_000), bidders: 1 }));
    await until(() => connection.$auction.get().bids.length === 1, "snapshot");
    const placed = connection.placeBid("Lin", 250_000);
    await until(() => received.some((message) => message.type === "bid"), "the bid message");
    const { requestId } = received.find((message) => message.type === "bid") as { requestId: string };
    send({ type: "accepted", requestId, bid: bid(5, "Lin", 250_000), round: 1 });
    await placed;
    return auction;
  }

  /** The service's message at the end of round 1, won by `winner`. */
  const endOfRound1 = (winner: WireBid, bids: WireBid[]) =>
    state("roundEnded", {
      bids,
      highest: winner,
      bidders: bids.length,
      round: round({ ended: true }),
      pastWinners: [{ round: 1, bid: winner, endedAt: IN_AN_HOUR }],
    });

  it("announces the end to the winner's page as its own win, and marks the win there", async () => {
    const { connection, toasts, send } = await openRoundWithOwnBid();
    send(endOfRound1(bid(5, "Lin", 250_000), [bid(5, "Lin", 250_000), bid(4, "Mo", 100_000)]));
    await until(() => connection.$auction.get().round?.ended === true, "the end");
    expect(toasts.filter((toast) => toast.title === "Sold!")).toEqual([]);
    expect(sold(toasts)).toEqual([
      {
        title: "You won for $2,500.00!",
        description: "Nothing is yours now. Pretend money: nobody pays.",
        variant: "personal",
      },
    ]);
    expect(connection.$won.get()).toEqual({ round: 1, bid: bid(5, "Lin", 250_000), endedAt: IN_AN_HOUR });
  });

  it("announces another visitor's win without marking it as this page's", async () => {
    const { connection, toasts, send } = await openRoundWithOwnBid();
    // Grace outbid Lin just before the end.
    send(endOfRound1(bid(6, "Grace", 300_000), [bid(6, "Grace", 300_000), bid(5, "Lin", 250_000)]));
    await until(() => connection.$auction.get().round?.ended === true, "the end");
    expect(sold(toasts)).toEqual([{ title: "Sold!", description: "Sold to Grace for $3,000.00" }]);
    expect(connection.$won.get()).toBeNull();
  });

  it("does not call a bid its maximum answers at once an outbid, even when the answer comes in the next frame", async () => {
    const { connection, toasts, send } = await openRoundWithOwnBid();
    connection.answerWithMaximum((placed) => placed.bidderName !== "Lin" && placed.amountCents < 350_000);
    send(broadcast(bid(6, "Grace", 300_000), 3));
    await until(() => connection.$auction.get().highest?.id === 6, "Grace's bid");
    connection.claimBid(7);
    send(broadcast(bid(7, "Lin", 300_001), 3));
    await until(() => connection.$auction.get().highest?.id === 7, "the automatic bid");
    // Above the maximum: passed for good, and told so.
    send(broadcast(bid(8, "Grace", 400_000), 3));
    await until(() => connection.$auction.get().highest?.id === 8, "Grace's second bid");
    expect(toasts.map((toast) => toast.title)).toEqual([
      "New Bid!",
      "New Bid!",
      "You've been outbid by Grace — $4,000.00",
    ]);
  });

  it("counts a claimed bid (the page's maximum's automatic bid) as its own: outbid and won follow it", async () => {
    const { connection, toasts, send, received } = await openRoundWithOwnBid();
    const heard: string[] = [];
    const stop = connection.listen((message) => heard.push(message.type));
    // Grace passes Lin's bid; Lin's maximum answers in Lin's name, a bid this page did not place.
    send(broadcast(bid(6, "Grace", 300_000), 3));
    await until(() => connection.$auction.get().highest?.id === 6, "Grace's bid");
    connection.claimBid(7);
    send(broadcast(bid(7, "Lin", 300_001), 3));
    await until(() => heard.includes("bid") && connection.$auction.get().highest?.id === 7, "the automatic bid");
    send(broadcast(bid(8, "Grace", 400_000), 3));
    await until(() => connection.$auction.get().highest?.id === 8, "Grace's second bid");
    expect(toasts.map((toast) => toast.title)).toEqual([
      "You've been outbid by Grace — $3,000.00",
      "New Bid!",
      "You've been outbid by Grace — $4,000.00",
    ]);
    send(endOfRound1(bid(7, "Lin", 300_001), [bid(7, "Lin", 300_001), bid(6, "Grace", 300_000)]));
    await until(() => connection.$auction.get().round?.ended === true, "the end");
    expect(sold(toasts).map((toast) => toast.title)).toEqual(["You won for $3,000.01!"]);
    stop();
    expect(heard).toEqual(["bid", "bid", "bid", "roundEnded"]);

    // What it sends goes as it is.
    expect(connection.send({ type: "ping" })).toBe(true);
    await until(() => received.at(-1)?.type === "ping", "the ping");
  });

  it("announces each end once: a later snapshot, resume or next round showing it raises no second toast", async () => {
    const { connection, toasts, send } = await openRoundWithOwnBid();
    const winner = bid(5, "Lin", 250_000);
    send(endOfRound1(winner, [winner]));
    send(state("snapshot", { bids: [winner], highest: winner, bidders: 1, round: round({ ended: true }) }));
    send(state("resume", { highest: winner, bidders: 1, round: round({ ended: true }) }));
    const nextRound = round({ number: 2, endsAt: "2026-11-21T14:00:00.000Z" });
    const pastWinners: WireWinner[] = [{ round: 1, bid: winner, endedAt: IN_AN_HOUR }];
    send(state("snapshot", { bids: [bid(7, "Zed", 100)], highest: bid(7, "Zed", 100), round: nextRound, pastWinners }));
    await until(() => connection.$auction.get().round?.number === 2, "round 2");
    expect(sold(toasts)).toHaveLength(1);
    expect(connection.$auction.get().pastWinners).toEqual(pastWinners);
  });

  it("hears of an end it missed, once, from the next round's snapshot", async () => {
    const { connection, toasts, send } = await openRoundWithOwnBid();
    const winner = bid(5, "Lin", 250_000);
    const nextRound = state("snapshot", {
      bids: [bid(7, "Zed", 100)],
      highest: bid(7, "Zed", 100),
      bidders: 1,
      round: round({ number: 2, endsAt: "2026-11-21T14:00:00.000Z" }),
      pastWinners: [{ round: 1, bid: winner, endedAt: IN_AN_HOUR }],
    });
    send(nextRound);
    send(nextRound);
    await until(() => connection.$auction.get().round?.number === 2, "round 2");
    expect(sold(toasts).map((toast) => toast.title)).toEqual(["You won for $2,500.00!"]);
    expect(connection.$won.get()?.round).toBe(1);
  });

  it("shows a round that had ended before the page loaded without a toast", async () => {
    const { connection, toasts, send, goLive } = await openAuction();
    await goLive();
    send(endOfRound1(bid(2, "Ada", 1_500), [bid(2, "Ada", 1_500), bid(1, "Bo", 1_000)]));
    // A barrier: the bid's toast comes after a Sold! one would have.
    send(broadcast(bid(3, "Zed", 100), 1, 2));
    await until(() => connection.$auction.get().highest?.id === 3, "the next round's bid");
    expect(toasts).toEqual([{ title: "New Bid!", description: "Zed bid $1.00" }]);
  });

  it("starts the next round's list afresh with its first bid: one bid, 1 Bidder", async () => {
    const { connection, send, goLive } = await openAuction();
    await goLive();
    send(endOfRound1(bid(2, "Ada", 1_500), [bid(2, "Ada", 1_500), bid(1, "Bo", 1_000)]));
    await until(() => connection.$auction.get().round?.ended === true, "the end");
    send(broadcast(bid(3, "Zed", 100), 1, 2, "2026-11-21T14:00:00.000Z"));
    await until(() => connection.$auction.get().round?.number === 2, "round 2");
    expect(connection.$auction.get()).toMatchObject({
      bids: [bid(3, "Zed", 100)],
      highest: bid(3, "Zed", 100),
      bidders: 1,
      round: round({ number: 2, endsAt: "2026-11-21T14:00:00.000Z" }),
    });
  });

  it("moves the end when a bid lands in the soft-close window", async () => {
    const { connection, send, goLive } = await openAuction();
    await goLive();
    send(state("snapshot", { bids: [bid(1, "Bo", 1_000)], highest: bid(1, "Bo", 1_000), bidders: 1 }));
    send(broadcast(bid(2, "Ada", 1_500), 2, 1, "2026-11-21T13:00:20.000Z"));
    await until(() => connection.$auction.get().highest?.id === 2, "the late bid");
    expect(connection.$auction.get().round?.endsAt).toBe("2026-11-21T13:00:20.000Z");
  });

  it("measures the service's clock against the page's monotonic clock as each snapshot, resume, moderation and end arrives", async () => {
    // The page's monotonic clock, set by the test; the wall clock plays no part (docs/design.md#9).
    let monotonicMs = 0;
    const { connection, send, goLive } = await openAuction(() => monotonicMs);
    const offset = () => connection.$auction.get().serviceOffsetMs;
    expect(offset()).toBeNull();
    await goLive();
    monotonicMs = 1_250.5;
    send(state("snapshot"));
    await until(() => offset() !== null, "snapshot");
    expect(offset()).toBe(Date.parse(NOW) - 1_250.5);

    const heard: Record<string, string> = {
      resume: "2026-11-21T12:00:01.500Z",
      moderated: "2026-11-21T12:00:07.000Z",
      roundEnded: "2026-11-21T13:00:00.020Z",
    };
    for (const [type, now] of Object.entries(heard) as ["resume" | "moderated" | "roundEnded", string][]) {
      monotonicMs += 3_000;
      send(state(type, { now }));
      await until(() => offset() === Date.parse(now) - monotonicMs, type);
    }
    // A bid carries no time of the service's: the offset stays as the last message set it.
    const before = offset();
    monotonicMs += 3_000;
    send(broadcast(bid(9, "Ada", 1_000), 1, 2, "2026-11-21T14:00:00.020Z"));
    await until(() => connection.$auction.get().round?.number === 2, "round 2");
    expect(offset()).toBe(before);
  });

  it("resyncs: connects again at once, resuming after its last bid; a bid in flight is answered as lost", async () => {
    let monotonicMs = 500;
    const { connection, connections, received, send, goLive } = await openAuction(() => monotonicMs);
    await goLive();
    send(state("snapshot", { bids: [bid(4, "Mo", 100_000)], highest: bid(4, "Mo", 100_000), bidders: 1 }));
    await until(() => connection.$auction.get().bids.length === 1, "snapshot");
    const outcome = connection.placeBid("Lin", 250_000);
    await until(() => received.length === 1, "the bid message");
    const statuses: string[] = [];
    const unlisten = connection.$auction.listen((state) => {
      if (statuses.at(-1) !== state.status) statuses.push(state.status);
    });
    onTestFinished(unlisten);

    connection.resync();
    await expect(outcome).resolves.toEqual({ ok: false, code: "connection_lost" });
    await until(() => connections.length === 2 && connection.$auction.get().status === "live", "the new connection");
    // At once: straight to connecting, not through "reconnecting" and its backoff (1 s first).
    expect(statuses).toEqual(["connecting", "live"]);
    expect(connections[1]).toBe("/realtime?after=4&moderation=0&round=1");
    monotonicMs = 9_000;
    send(state("resume", { now: "2026-11-21T12:30:00.000Z" }));
    await until(
      () => connection.$auction.get().serviceOffsetMs === Date.parse("2026-11-21T12:30:00.000Z") - 9_000,
      "the resume",
    );
  });

  it("resyncs nothing before it has connected", async () => {
    const { connection, connections } = await openAuction();
    connection.resync();
    expect(connection.$auction.get().status).toBe("idle");
    expect(connections).toEqual([]);
  });
});

describe("payments over a real socket (docs/design.md#8)", () => {
  const REFERENCE = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
  const OTHER = "3yvVM2ZWbrrpZb9PusVFin9xQeWvG816bUx9EPjHmaT2";
  const payment = (reference: string, status: "waiting" | "confirmed" | "underpaid") =>
    ({
      type: "payment",
      reference,
      status,
      tierId: "2",
      tierName: "Deluxe Nothing",
      spins: 7,
      priceAmount: "100",
      expiresAt: IN_AN_HOUR,
    }) satisfies ServerMessage;
  const watches = (received: Record<string, unknown>[]) =>
    received.filter((message) => message.type === "watchPayment");

  it("watches a request: its statuses reach its listener only, the watch goes again after a reconnection, and stops", async () => {
    const { connection, received, toasts, send, goLive, dropConnections } = await openAuction();
    const heard: string[] = [];
    // Watched before the connection is open: sent once it is.
    connection.connect();
    const unwatch = connection.watchPayment(REFERENCE, (status) => heard.push(status.status));
    await goLive();
    await until(() => watches(received).length === 1, "the watch");
    expect(watches(received)).toEqual([{ type: "watchPayment", reference: REFERENCE }]);
    send(payment(OTHER, "confirmed"));
    send(payment(REFERENCE, "waiting"));
    await until(() => heard.length === 1, "the waiting status");
    expect(heard).toEqual(["waiting"]);

    // The service forgets a closed socket's watches; the reconnection (1 s later) watches again.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    received.length = 0;
    dropConnections();
    await until(() => connection.$auction.get().status === "reconnecting", "the lost connection");
    vi.advanceTimersByTime(1_000);
    await until(() => watches(received).length === 1, "the watch on the new connection");
    send(payment(REFERENCE, "confirmed"));
    await until(() => heard.length === 2, "the confirmation");

    unwatch();
    send(payment(REFERENCE, "underpaid"));
    // A barrier: the purchase's toast comes after the status would have been heard.
    send({ type: "purchase", name: null, tierName: "Deluxe Nothing" });
    await until(() => toasts.length === 1, "the purchase's toast");
    expect(heard).toEqual(["waiting", "confirmed"]);
  });

  it("tells every visitor of each confirmed purchase, named or not", async () => {
    const { toasts, send, goLive } = await openAuction();
    await goLive();
    send({ type: "purchase", name: "Patron Pat", tierName: "Deluxe Nothing" });
    send({ type: "purchase", name: null, tierName: "Premium Nothing" });
    await until(() => toasts.length === 2, "two toasts");
    expect(toasts).toEqual([
      { title: "Patron Pat just bought Deluxe Nothing!" },
      { title: "Someone just bought Premium Nothing!" },
    ]);
  });
});
