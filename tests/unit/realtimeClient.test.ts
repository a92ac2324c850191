import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type WebSocket as ServerSocket, WebSocketServer } from "ws";
import type { ServerMessage, WireBid } from "../../src/lib/auction/protocol.ts";
import {
  type ConnectionStatus,
  createRealtimeClient,
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_TIMEOUT_MS,
  type RealtimeClient,
  type RealtimeClientOptions,
  realtimeEndpoint,
  type SocketLike,
} from "../../src/lib/auction/realtimeClient.ts";
import { ManualTimers } from "../harness/manualTimers.ts";

async function until(condition: () => boolean, what: string) {
  await vi.waitFor(() => expect(condition(), what).toBe(true), { timeout: 5_000, interval: 5 });
}

/** Node's own WebSocket, as the browser's would be used. */
const createSocket = (url: string) => new WebSocket(url) as unknown as SocketLike;

const snapshot = {
  type: "snapshot",
  bids: [{ id: 7, bidderName: "Ada", amountCents: 1_250, createdAt: "2026-11-21T12:00:00.000Z" }],
  highest: { id: 7, bidderName: "Ada", amountCents: 1_250, createdAt: "2026-11-21T12:00:00.000Z" },
  bidders: 1,
  moderation: 0,
  round: { number: 1, endsAt: null, ended: false, seconds: 0, softCloseSeconds: 0 },
  pastWinners: [],
  now: "2026-11-21T12:00:00.000Z",
} satisfies ServerMessage;

describe("realtime client against a real socket server", () => {
  let server: WebSocketServer;
  let url: string;
  let timers: ManualTimers;
  let client: RealtimeClient;
  const connections: { socket: ServerSocket; url: string; received: string[] }[] = [];
  const statuses: ConnectionStatus[] = [];
  const messages: ServerMessage[] = [];
  const errors: string[] = [];

  beforeEach(async () => {
    connections.length = statuses.length = messages.length = errors.length = 0;
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.once("listening", resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/realtime`;
    server.on("connection", (socket, request) => {
      const connection = { socket, url: request.url ?? "", received: [] as string[] };
      socket.on("message", (data) => connection.received.push(String(data)));
      connections.push(connection);
    });
    timers = new ManualTimers();
    client = recordingClient();
  });

  /** A client on the test's server and timers that records its statuses, messages and logged errors. */
  function recordingClient(heartbeat: Pick<RealtimeClientOptions, "heartbeatIntervalMs" | "heartbeatTimeoutMs"> = {}) {
    return createRealtimeClient({
      url,
      timers,
      createSocket,
      onStatus: (status) => statuses.push(status),
      onMessage: (message) => messages.push(message),
      ...heartbeat,
      log: { error: (...parts: unknown[]) => errors.push(parts.join(" ")) },
    });
  }

  afterEach(async () => {
    client.stop();
    for (const { socket } of connections) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  });

  it("goes live, hands over validated messages and logs malformed ones", async () => {
    client.start();
    await until(() => statuses.includes("live"), "live");
    expect(statuses).toEqual(["connecting", "live"]);
    expect(connections[0]?.url).toBe("/realtime");
    connections[0]?.socket.send(JSON.stringify(snapshot));
    connections[0]?.socket.send('{"type":"bid","bid":{"id":"x"}}');
    await until(() => messages.length === 1 && errors.length === 1, "a message and an error");
    expect(messages).toEqual([snapshot]);
    expect(errors[0]).toContain("malformed");
  });

  it("sends only while connected", async () => {
    expect(client.send({ type: "ping" })).toBe(false);
    client.start();
    await until(() => statuses.includes("live"), "live");
    expect(client.send({ type: "bid", requestId: "r1", bidderName: "Ada", amount: 12.5 })).toBe(true);
    await until(() => connections[0]?.received.length === 1, "the bid");
    expect(JSON.parse(connections[0]?.received[0] ?? "")).toEqual({
      type: "bid",
      requestId: "r1",
      bidderName: "Ada",
      amount: 12.5,
    });
  });

  it("reconnects after 1, 2, 5, 10 and then every 10 s, resuming after the last id seen", async () => {
    client.start();
    await until(() => statuses.includes("live"), "live");
    connections[0]?.socket.send(JSON.stringify(snapshot));
    await until(() => messages.length === 1, "the snapshot");
    // The service goes away entirely: every attempt fails until it is back.
    const port = new URL(url).port;
    for (const { socket } of connections) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
    await until(() => statuses.at(-1) === "reconnecting", "reconnecting");
    const delays: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const pending = timers.scheduled.at(-1) ?? 0;
      delays.push(pending);
      const errorsBefore = errors.length;
      timers.advance(pending);
      await until(() => errors.length > errorsBefore && statuses.at(-1) === "reconnecting", `attempt ${attempt + 1}`);
      await until(() => timers.scheduled.length > delays.length, "the next retry");
    }
    delays.push(timers.scheduled.at(-1) ?? 0);
    expect(delays).toEqual([1_000, 2_000, 5_000, 10_000, 10_000, 10_000]);
    expect(errors.every((line) => line.includes("could not load bids"))).toBe(true);

    server = new WebSocketServer({ host: "127.0.0.1", port: Number(port) });
    server.on("connection", (socket, request) => connections.push({ socket, url: request.url ?? "", received: [] }));
    await new Promise((resolve) => server.once("listening", resolve));
    timers.advance(10_000);
    await until(() => statuses.at(-1) === "live", "live again");
    expect(connections.at(-1)?.url).toBe("/realtime?after=7&moderation=0&round=1");
  });

  it("resumes after the last bid received in order, not after an acknowledgement that outran the broadcasts", async () => {
    const bid = (id: number) => ({ ...snapshot.bids[0], id, amountCents: id * 1_000 }) as WireBid;
    const reconnect = async (count: number) => {
      connections.at(-1)?.socket.terminate();
      await until(() => statuses.at(-1) === "reconnecting", "reconnecting");
      timers.advance(1_000);
      await until(() => connections.length === count && statuses.at(-1) === "live", "live again");
    };
    client.start();
    await until(() => statuses.includes("live"), "live");
    connections[0]?.socket.send(JSON.stringify(snapshot));
    // Bid 8 was placed elsewhere; this visitor's bid 9 is acknowledged before 8's broadcast arrives.
    connections[0]?.socket.send(JSON.stringify({ type: "accepted", requestId: "r1", bid: bid(9), round: 1 }));
    await until(() => messages.length === 2, "the snapshot and the acknowledgement");
    await reconnect(2);
    expect(connections[1]?.url).toBe("/realtime?after=7&moderation=0&round=1");

    connections[1]?.socket.send(
      JSON.stringify({ ...snapshot, type: "resume", bids: [bid(8), bid(9)], highest: bid(9) }),
    );
    await until(() => messages.length === 3, "the resume");
    await reconnect(3);
    expect(connections[2]?.url).toBe("/realtime?after=9&moderation=0&round=1");

    connections[2]?.socket.send(JSON.stringify({ type: "bid", bid: bid(10), bidders: 1, round: 1, endsAt: null }));
    await until(() => messages.length === 4, "the broadcast");
    await reconnect(4);
    expect(connections[3]?.url).toBe("/realtime?after=10&moderation=0&round=1");

    // The first bid of the next round: the page's list is now round 2's, and so is its resume.
    connections[3]?.socket.send(JSON.stringify({ type: "bid", bid: bid(11), bidders: 1, round: 2, endsAt: null }));
    await until(() => messages.length === 5, "the next round's first bid");
    await reconnect(5);
    expect(connections[4]?.url).toBe("/realtime?after=11&moderation=0&round=2");

    // Several bids in one frame (docs/design.md#10): after its lastId, the newest.
    connections[4]?.socket.send(
      JSON.stringify({ type: "bids", lastId: 14, bidders: 2, round: 2, endsAt: null, bids: [bid(12), bid(14)] }),
    );
    await until(() => messages.length === 6, "the conflated frame");
    await reconnect(6);
    expect(connections[5]?.url).toBe("/realtime?after=14&moderation=0&round=2");
  });

  it("resumes with the moderation version of the last list, after the newest id seen even when it was hidden", async () => {
    const bid = (id: number) => ({ ...snapshot.bids[0], id, amountCents: id * 1_000 }) as WireBid;
    client.start();
    await until(() => statuses.includes("live"), "live");
    connections[0]?.socket.send(JSON.stringify(snapshot));
    connections[0]?.socket.send(JSON.stringify({ type: "bid", bid: bid(8), bidders: 2, round: 1, endsAt: null }));
    // The operator hid bid 8: the list now ends at 7, under moderation version 3.
    connections[0]?.socket.send(
      JSON.stringify({ ...snapshot, type: "moderated", moderation: 3 } satisfies ServerMessage),
    );
    await until(() => messages.length === 3, "the list after the action");
    connections[0]?.socket.terminate();
    await until(() => statuses.at(-1) === "reconnecting", "reconnecting");
    timers.advance(1_000);
    await until(() => connections.length === 2, "the reconnect");
    expect(connections[1]?.url).toBe("/realtime?after=8&moderation=3&round=1");
  });

  it("pings every 25 s and drops a connection that leaves a ping unanswered for 10 s", async () => {
    client.start();
    await until(() => statuses.includes("live"), "live");
    const first = connections[0];
    timers.advance(HEARTBEAT_INTERVAL_MS);
    await until(() => first?.received.length === 1, "a ping");
    expect(first?.received[0]).toBe('{"type":"ping"}');
    first?.socket.send('{"type":"pong"}');
    await until(() => messages.length === 1, "the pong");
    timers.advance(HEARTBEAT_TIMEOUT_MS);
    expect(statuses.at(-1)).toBe("live");

    // The second ping goes unanswered: the client gives up on this socket and reconnects.
    timers.advance(HEARTBEAT_INTERVAL_MS - HEARTBEAT_TIMEOUT_MS);
    await until(() => first?.received.length === 2, "the second ping");
    timers.advance(HEARTBEAT_TIMEOUT_MS);
    expect(statuses.at(-1)).toBe("reconnecting");
    timers.advance(1_000);
    await until(() => connections.length === 2 && statuses.at(-1) === "live", "a new connection");
  });

  it("takes a shorter heartbeat from its options, and a timeout longer than the interval drops only a silent connection", async () => {
    client.stop();
    client = recordingClient({ heartbeatIntervalMs: 300, heartbeatTimeoutMs: 1_000 });
    client.start();
    await until(() => statuses.at(-1) === "live", "live");
    const first = connections.at(-1);
    // Answered pings: each pong clears the wait, however many pings went out meanwhile.
    for (let ping = 1; ping <= 5; ping++) {
      timers.advance(300);
      await until(() => first?.received.length === ping, `ping ${ping}`);
      first?.socket.send('{"type":"pong"}');
      await until(() => messages.length === ping, `pong ${ping}`);
    }
    expect(statuses.at(-1)).toBe("live");
    // Silence from the next ping on (300 ms later): four more pings go out before its 1 s runs out.
    timers.advance(1_200);
    expect(statuses.at(-1)).toBe("live");
    timers.advance(100);
    expect(statuses.at(-1)).toBe("reconnecting");
  });
});

describe("realtimeEndpoint", () => {
  it("uses the configured URL, else this page's origin with the scheme that matches", () => {
    expect(realtimeEndpoint("wss://live.example.com/realtime", { protocol: "https:", host: "shop.example" })).toBe(
      "wss://live.example.com/realtime",
    );
    expect(realtimeEndpoint("", { protocol: "https:", host: "shop.example" })).toBe("wss://shop.example/realtime");
    expect(realtimeEndpoint("", { protocol: "http:", host: "127.0.0.1:4321" })).toBe("ws://127.0.0.1:4321/realtime");
  });
});
