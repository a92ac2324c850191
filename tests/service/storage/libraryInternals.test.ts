/**
 * The two private library surfaces the service relies on for speed, pinned against the installed
 * versions: ws's Sender and `_socket` (prebuilt broadcast frames, service/auction/wire.ts) and
 * postgres.js's untyped `onnotify` option (the LISTEN connection, service/storage/postgres.ts).
 * If an upgrade changes either shape, these fail by name instead of the service slowing down or
 * going quiet.
 */
import { once } from "node:events";
import postgres from "postgres";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type WebSocket, WebSocket as WebSocketClient, WebSocketServer } from "ws";
import { createCoalescedWrites } from "../../../service/auction/coalescedWrites.ts";
import { prebuiltTextFrame, tcpSocketOf } from "../../../service/auction/wire.ts";
import { databaseForThisTest } from "../harness/stores.ts";

/** vi.waitFor's own limit is a second: too short for a loaded machine, and these wait on sockets. */
const ARRIVAL = { timeout: 10_000 };

async function connectedPair(): Promise<{ server: WebSocket; client: WebSocketClient }> {
  // The socket server's own setting: prebuilt frames are only valid without permessage-deflate.
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  onTestFinished(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  await once(wss, "listening");
  const { port } = wss.address() as { port: number };
  const client = new WebSocketClient(`ws://127.0.0.1:${port}`);
  onTestFinished(() => client.terminate());
  const [server] = (await once(wss, "connection")) as [WebSocket];
  await once(client, "open");
  return { server, client };
}

describe("ws internals behind the broadcast fan-out", () => {
  it("a prebuilt frame written to the TCP socket arrives whole, without socket.send", async () => {
    const { server, client } = await connectedPair();
    const send = vi.spyOn(server, "send");
    // One payload under 126 bytes, one with a 16-bit length and one with a 64-bit length.
    const payloads = ["x", "y".repeat(300), "z".repeat(70_000)].map((text) => JSON.stringify({ type: "bid", text }));
    const received: string[] = [];
    client.on("message", (data, isBinary) => {
      expect(isBinary).toBe(false);
      received.push(String(data));
    });
    const tcp = tcpSocketOf(server);
    for (const payload of payloads) tcp.write(prebuiltTextFrame(Buffer.from(payload)));
    await vi.waitFor(() => expect(received).toHaveLength(payloads.length), ARRIVAL);
    expect(received).toEqual(payloads);
    expect(send).not.toHaveBeenCalled();
  });

  it("frames coalesced in one turn leave as one writev, in order with ws's own sends between them", async () => {
    const { server, client } = await connectedPair();
    const tcp = tcpSocketOf(server);
    // Node's net.Socket hands one chunk to the kernel through _write, several buffered ones through
    // _writev. Written one by one, the first frame would leave alone by _write and the rest later.
    const stream = tcp as unknown as { _write(...args: unknown[]): void; _writev(...args: unknown[]): void };
    const write = vi.spyOn(stream, "_write");
    const writev = vi.spyOn(stream, "_writev");
    const received: string[] = [];
    client.on("message", (data) => received.push(String(data)));
    const writes = createCoalescedWrites();
    const payloads = Array.from({ length: 50 }, (_, index) => JSON.stringify({ type: "bid", index }));
    for (const [index, payload] of payloads.entries()) {
      writes.write(tcp, prebuiltTextFrame(Buffer.from(payload)));
      if (index === 24) server.send('{"type":"accepted"}');
    }
    const expected = [...payloads.slice(0, 25), '{"type":"accepted"}', ...payloads.slice(25)];
    await vi.waitFor(() => expect(received).toHaveLength(expected.length), ARRIVAL);
    expect(received).toEqual(expected);
    expect(write).not.toHaveBeenCalled();
    expect(writev).toHaveBeenCalledTimes(1);
  });

  it("a WebSocket without the TCP socket where wire.ts expects it is refused by name", () => {
    expect(() => tcpSocketOf({} as WebSocket)).toThrow("ws no longer keeps the TCP socket in WebSocket._socket");
  });
});

describe("postgres.js internals behind LISTEN", () => {
  it("delivers every notification to the onnotify option, with its channel and payload", async () => {
    const database = await databaseForThisTest();
    const notifications: [string, string][] = [];
    const listener = postgres(database.url, {
      max: 1,
      // The option postgres.js's own listen() uses; service/storage/postgres.ts passes it the same way.
      ...({ onnotify: (channel: string, payload: string) => notifications.push([channel, payload]) } as object),
    });
    const notifier = postgres(database.url, { max: 1 });
    onTestFinished(() => Promise.all([listener.end(), notifier.end()]).then(() => {}));
    await listener.unsafe("LISTEN pinned_channel");
    await notifier`SELECT pg_notify('pinned_channel', 'first'), pg_notify('pinned_channel', 'second')`;
    await vi.waitFor(() => expect(notifications).toHaveLength(2), ARRIVAL);
    expect(notifications).toEqual([
      ["pinned_channel", "first"],
      ["pinned_channel", "second"],
    ]);
  });
});
