/**
 * No stranger can hold the public listener (service/http/connectionLimits.ts), tried as it was found:
 * thousands of half-sent requests from one address against the real service process, its file
 * limit lowered so that they would exhaust it, while another address asks for /healthz. On Linux
 * every 127.x.y.z address is loopback, so a socket bound to 127.0.0.2 is another client.
 */
import { once } from "node:events";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectClient } from "../harness/auctionClient.ts";
import { type ServiceProcess, startServiceProcess } from "../harness/serviceProcess.ts";
import { waitFor } from "../harness/stores.ts";

/** The service's file limit: the flood below is more than it, so without the caps it runs out of files. */
const SERVICE_FILE_LIMIT = 2_048;
const FLOOD_CONNECTIONS = 3_000;
/** Connections opened at once while flooding, so the flood takes seconds, not minutes. */
const FLOOD_BATCH = 200;

const running: ServiceProcess[] = [];
afterEach(async () => {
  for (const service of running.splice(0)) await service.stop();
});

async function startService(env: Record<string, string>, fileLimit = SERVICE_FILE_LIMIT) {
  // The tests' lifted limits would let one address have everything: these tests are about the caps.
  const service = await startServiceProcess({
    databaseUrl: "",
    fileLimit,
    env: { MAX_CONNECTIONS_PER_CLIENT: "100", MAX_SOCKETS_PER_ADDRESS: "50", ...env },
  });
  running.push(service);
  return service;
}

interface Outcome {
  /** What the service wrote back before closing, if anything. */
  answer: string;
  closed: boolean;
}

/** A connection from `localAddress` that sends half a request head and holds it; resolves once connected or refused. */
function halfSentRequest(port: number, localAddress: string): Promise<{ socket: Socket; outcome: Outcome }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    const outcome: Outcome = { answer: "", closed: false };
    socket.on("data", (chunk) => {
      outcome.answer += chunk;
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      outcome.closed = true;
    });
    socket.once("connect", () => {
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      resolve({ socket, outcome });
    });
    socket.once("close", () => resolve({ socket, outcome }));
  });
}

async function flood(port: number, localAddress: string, count: number) {
  const held: { socket: Socket; outcome: Outcome }[] = [];
  for (let opened = 0; opened < count; opened += FLOOD_BATCH) {
    const batch = Math.min(FLOOD_BATCH, count - opened);
    held.push(...(await Promise.all(Array.from({ length: batch }, () => halfSentRequest(port, localAddress)))));
  }
  return held;
}

/** GET `path` from `localAddress`, with the time it took; a refused or cut connection rejects. */
function timedGet(port: number, path: string, localAddress: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  return new Promise<{ status: number; ms: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, localAddress, headers, agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function metricValue(text: string, series: string): number {
  const line = text.split("\n").find((each) => each.startsWith(`${series} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

async function metrics(service: ServiceProcess): Promise<string> {
  return (await fetch(service.metricsUrl)).text();
}

describe("connections from one address", () => {
  it("cannot keep another address from being answered", async () => {
    const service = await startService({});
    const flooded = await flood(service.port, "127.0.0.1", FLOOD_CONNECTIONS);
    try {
      const healthz = await timedGet(service.port, "/healthz", "127.0.0.2");
      expect(healthz.status).toBe(200);
      expect(healthz.ms).toBeLessThan(1_000);

      // The first 100 are held until their head times out; every other one was answered 429 and closed.
      await waitFor(
        "the refused connections to be closed",
        () => flooded.filter(({ outcome }) => outcome.closed).length >= FLOOD_CONNECTIONS - 100,
      );
      const refused = flooded.filter(({ outcome }) => outcome.answer.startsWith("HTTP/1.1 429 Too Many Requests"));
      expect(refused.length).toBeGreaterThanOrEqual(FLOOD_CONNECTIONS - 100);
      expect(refused[0]?.outcome.answer).toContain("Too many connections from your address.");
      // The flooding address is still refused while it holds its 100; another is not.
      await expect(timedGet(service.port, "/healthz", "127.0.0.1")).resolves.toMatchObject({ status: 429 });

      const text = await metrics(service);
      expect(metricValue(text, 'http_connections_refused_total{reason="per_client"}')).toBeGreaterThanOrEqual(
        FLOOD_CONNECTIONS - 100,
      );
      // Logged once a minute per address, with the address masked: one line for the whole flood.
      const lines = service.logs.filter((entry) => entry.msg === "refused a client over MAX_CONNECTIONS_PER_CLIENT");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ client: "127.0.0.x", cap: 100 });
    } finally {
      for (const { socket } of flooded) socket.destroy();
    }
  });

  it("logs the file limit and the connections it leaves at start", async () => {
    const service = await startService({}, 1_024);
    expect(service.logs).toContainEqual(
      expect.objectContaining({
        fileLimit: 1_024,
        maxConnections: 768,
        maxConnectionsPerClient: 100,
        msg: "At most 768 connections at once (file limit 1024), 100 per client",
      }),
    );
  });

  it("cuts a connection that sends nothing, and one whose head is late, after HEADERS_TIMEOUT_MS", async () => {
    const service = await startService({ HEADERS_TIMEOUT_MS: "1000", REQUEST_TIMEOUT_MS: "2000" });
    const silent = connect({ port: service.port, host: "127.0.0.1" });
    silent.on("error", () => {});
    await once(silent, "connect");
    const slow = await halfSentRequest(service.port, "127.0.0.1");
    // Node's own default would leave the silent one open for good, and the slow one for 60 s.
    await Promise.all([once(silent, "close"), once(slow.socket, "close")]);
    expect(slow.outcome.answer).toMatch(/^(HTTP\/1\.1 408 Request Timeout|)/);
    // Answered as usual afterwards: the timeouts cut connections, not the listener.
    await expect(timedGet(service.port, "/healthz", "127.0.0.1")).resolves.toMatchObject({ status: 200 });
  });
});

describe("the listener full", () => {
  it("closes new connections at once past MAX_CONNECTIONS, keeps /metrics and recovers", async () => {
    const service = await startService({ MAX_CONNECTIONS: "150" });
    // 240 networks of one connection each, every one within its share, together past the listener's.
    const networks = Array.from({ length: 240 }, (_, index) => `127.1.${index}.1`);
    const flooded = (await Promise.all(networks.map((address) => flood(service.port, address, 1)))).flat();
    try {
      await waitFor(
        "the dropped connections to be closed",
        () => flooded.filter(({ outcome }) => outcome.closed).length >= 240 - 150,
      );
      // Closed by the listener, not answered: nothing of them was read.
      expect(flooded.filter(({ outcome }) => outcome.closed && outcome.answer === "").length).toBe(240 - 150);
      const text = await metrics(service);
      expect(metricValue(text, 'http_connections_refused_total{reason="server_full"}')).toBe(240 - 150);
      const lines = service.logs.filter(
        (entry) => entry.msg === "refused a connection: the listener holds MAX_CONNECTIONS already",
      );
      expect(lines).toEqual([expect.objectContaining({ maxConnections: 150 })]);
    } finally {
      for (const { socket } of flooded) socket.destroy();
    }
    // Their files given back, the listener takes connections again.
    await waitFor(
      "the listener to take connections again",
      async () => (await timedGet(service.port, "/healthz", "127.0.0.2").catch(() => null))?.status === 200,
    );
  });
});

describe("behind a proxy (TRUST_PROXY)", () => {
  it("counts each forwarded client's sockets and requests, not the proxy's connections", async () => {
    const service = await startService({
      TRUST_PROXY: "1",
      MAX_CONNECTIONS_PER_CLIENT: "2",
      MAX_SOCKETS_PER_ADDRESS: "2",
    });
    const forwardedFor = (client: string) => ({ "X-Forwarded-For": client });
    // Client A holds two sockets, through connections that all come from the proxy's address.
    const sockets = [
      await connectClient(service.socketUrl, { headers: forwardedFor("198.51.100.7") }),
      await connectClient(service.socketUrl, { headers: forwardedFor("198.51.100.7") }),
    ];
    try {
      const refused = await timedGet(service.port, "/healthz", "127.0.0.1", forwardedFor("198.51.100.7"));
      expect(refused).toMatchObject({ status: 429, body: "Too many connections from your address." });
      // Another client through the same proxy is answered.
      const other = await timedGet(service.port, "/healthz", "127.0.0.1", forwardedFor("203.0.113.9"));
      expect(other.status).toBe(200);
      await sockets[0]?.close();
      // One socket closed, A may make a request again.
      await waitFor("A's slot to be freed", async () => {
        const again = await timedGet(service.port, "/healthz", "127.0.0.1", forwardedFor("198.51.100.7"));
        return again.status === 200;
      });
    } finally {
      for (const socket of sockets) await socket.close();
    }
  });

  it("believes X-Forwarded-For only from TRUSTED_PROXIES: another peer is counted as itself, from its first byte", async () => {
    const service = await startService({
      TRUST_PROXY: "1",
      TRUSTED_PROXIES: "127.0.0.1",
      MAX_CONNECTIONS_PER_CLIENT: "2",
      MAX_SOCKETS_PER_ADDRESS: "2",
    });
    // A stranger at 127.0.0.5 writes a new client into every request: it counts as itself all the
    // same, by its TCP connections, as without a proxy.
    const flooded = await flood(service.port, "127.0.0.5", 10);
    try {
      await waitFor(
        "the stranger's connections past its cap to be refused",
        () => flooded.filter(({ outcome }) => outcome.closed).length >= 8,
      );
      const refused = flooded.filter(({ outcome }) => outcome.answer.startsWith("HTTP/1.1 429"));
      expect(refused).toHaveLength(8);
      const forged = await timedGet(service.port, "/healthz", "127.0.0.5", { "X-Forwarded-For": "203.0.113.77" });
      expect(forged).toMatchObject({ status: 429, body: "Too many connections from your address." });
      // The proxy's own clients are unaffected.
      const proxied = await timedGet(service.port, "/healthz", "127.0.0.1", { "X-Forwarded-For": "203.0.113.77" });
      expect(proxied.status).toBe(200);
    } finally {
      for (const { socket } of flooded) socket.destroy();
    }
  });
});
