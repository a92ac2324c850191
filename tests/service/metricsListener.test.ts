import { once } from "node:events";
import { connect, createServer as createTcpServer, type Server as TcpServer } from "node:net";
import type { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTimeout } from "../../scripts/harness/childProcess.ts";
import { createMetrics } from "../../service/metrics.ts";
import { createMetricsServer } from "../../service/server.ts";
import { connectClient } from "./harness/auctionClient.ts";
import { type ServedTestSite, serveTestSite } from "./harness/auctionService.ts";
import { NOT_FOUND_PAGE } from "./harness/builtSite.ts";
import { type CuttableProxy, startCuttableProxy } from "./harness/cuttableProxy.ts";
import { rawRequest, UPGRADE_HEADERS } from "./harness/rawHttp.ts";
import { accepts, serviceProcessEnv, spawnService, startServiceProcess } from "./harness/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, dataDirForThisTest, testLogger, waitFor } from "./harness/stores.ts";

const PROMETHEUS_TEXT = /^text\/plain; version=0\.0\.4/;

describe("the metrics listener, in process", () => {
  let served: ServedTestSite;
  let metricsPort: number;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    served = await serveTestSite({ logger: testLogger((line) => logs.push(line)) });
    metricsPort = Number(new URL(served.service.metricsUrl).port);
  });

  afterAll(() => served?.remove());

  const onMetricsPort = (requestLine: string, headers: Record<string, string> = {}) =>
    rawRequest(metricsPort, requestLine, { Host: `127.0.0.1:${metricsPort}`, ...headers });

  it("starts every counter at zero, each labelled one with every label value, and says ready and database up", async () => {
    const metrics = await served.service.metrics.registry.getMetricsAsJSON();
    const counters = metrics.filter((metric) => String(metric.type) === "counter");
    // Payments are off here: their counters start with the routes and the watcher (paymentRoutes.test.ts).
    const unpaid = counters.filter((metric) => !metric.name.startsWith("payment"));
    for (const counter of unpaid) expect(counter.values.length, counter.name).toBeGreaterThan(0);
    const series = (name: string) =>
      (metrics.find((metric) => metric.name === name)?.values ?? []).map((value) =>
        [...Object.values(value.labels), value.value].join(" "),
      );
    expect(series("admin_moderation_actions_total")).toEqual([
      ...["hide", "restore"].flatMap((action) => ["done", "unchanged", "no_such_bid"].map((o) => `${action} ${o} 0`)),
      ...["block", "unblock"].flatMap((action) => ["done", "unchanged"].map((o) => `${action} ${o} 0`)),
      ...["hide_patron", "restore_patron"].flatMap((action) =>
        ["done", "unchanged", "no_such_patron"].map((o) => `${action} ${o} 0`),
      ),
      "bid invalid 0",
      "name invalid 0",
      "patron invalid 0",
    ]);
    expect(series("auction_bids_decided_total")).toEqual([
      "accepted 0",
      "too_low 0",
      "outbid_by_maximum 0",
      "name_not_allowed 0",
    ]);
    const text = String((await onMetricsPort("GET /metrics HTTP/1.1")).body);
    expect(text).toContain("service_ready 1\n");
    expect(text).toContain("database_up 1\n");
  });

  it("answers GET /metrics with Prometheus text, its length and no-store; HEAD with the same headers and no body", async () => {
    const get = await onMetricsPort("GET /metrics HTTP/1.1");
    expect(get.status).toBe(200);
    expect(get.headers["content-type"]).toMatch(PROMETHEUS_TEXT);
    expect(get.headers["cache-control"]).toBe("no-store");
    expect(Number(get.headers["content-length"])).toBe(get.body.length);
    expect(String(get.body)).toContain("auction_open_sockets 0\n");
    const head = await onMetricsPort("HEAD /metrics HTTP/1.1");
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    // The figures (and so the length) move between two reads; every header is there all the same.
    expect(Object.keys(head.headers).sort()).toEqual(Object.keys(get.headers).sort());
    expect(Number(head.headers["content-length"])).toBeGreaterThan(0);
    for (const name of ["content-type", "cache-control", "content-security-policy", "x-content-type-options"]) {
      expect(head.headers[name], name).toBe(get.headers[name]);
    }
  });

  it.each(["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])(
    "answers %s /metrics 405 with Allow: GET, HEAD",
    async (method) => {
      const answer = await onMetricsPort(`${method} /metrics HTTP/1.1`, { "Content-Length": "2" });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe("GET, HEAD");
      expect(JSON.parse(String(answer.body))).toEqual({ error: "method_not_allowed" });
    },
  );

  it("answers every other path 404, the public routes included: it serves /metrics alone", async () => {
    for (const path of ["/", "/healthz", "/readyz", "/auction/winners", "/payments/config", "/admin", "/metrics/"]) {
      const answer = await onMetricsPort(`GET ${path} HTTP/1.1`);
      expect([answer.status, String(answer.body)], path).toEqual([404, '{"error":"not_found"}']);
      expect(answer.headers["content-security-policy"], path).toBe("default-src 'none'; frame-ancestors 'none'");
    }
    // No socket endpoint either: an upgrade is a request like another (closed after, to be read whole).
    const upgrade = await onMetricsPort("GET /realtime HTTP/1.1", { ...UPGRADE_HEADERS, Connection: "Upgrade, close" });
    expect(upgrade.status).toBe(404);
  });

  it("parses request targets as the public port does (docs/design.md#11)", async () => {
    for (const target of ["//", "//x:99999", "/%zz", "/metrics?x=%", "/%FF", "http://evil.example/metrics"]) {
      const answer = await onMetricsPort(`GET ${target} HTTP/1.1`);
      expect(answer.status, target).toBe(400);
      expect(JSON.parse(String(answer.body)).error, target).toBe("bad_request_target");
    }
    expect((await onMetricsPort(`GET /${"m".repeat(8000)} HTTP/1.1`)).status).toBe(414);
    // The absolute form naming the listener itself is its path; a dot segment resolves.
    expect((await onMetricsPort(`GET http://127.0.0.1:${metricsPort}/metrics HTTP/1.1`)).status).toBe(200);
    expect((await onMetricsPort("GET /x/../metrics HTTP/1.1")).status).toBe(200);
    expect(logs).toContainEqual(expect.objectContaining({ msg: "refused a malformed request target" }));
  });

  it("the public port answers /metrics as any unknown path: the site's not-found page, whatever the method", async () => {
    const { port } = served;
    for (const method of ["GET", "HEAD", "POST"]) {
      const answer = await rawRequest(port, `${method} /metrics HTTP/1.1`, { Host: `127.0.0.1:${port}` });
      expect(answer.status, method).toBe(404);
      expect(answer.headers["content-type"], method).toBe("text/html; charset=utf-8");
      expect(String(answer.body), method).toBe(method === "HEAD" ? "" : NOT_FOUND_PAGE);
    }
    expect(logs).toContainEqual(expect.objectContaining({ msg: "page not found", path: "/metrics" }));
  });

  it("a registry that cannot be read costs that request a 500; one that throws, a guarded 500; the listener carries on", async () => {
    const lines: Record<string, unknown>[] = [];
    const registry = createMetrics().registry;
    let failure: "reject" | "throw" | null = null;
    const failing = new Proxy(registry, {
      get(target, name, receiver) {
        if (name !== "metrics" || failure === null) return Reflect.get(target, name, receiver);
        return failure === "reject"
          ? () => Promise.reject(new Error("injected: the registry rejected"))
          : () => {
              throw new Error("injected: the registry threw");
            };
      },
    }) as Registry;
    const server = createMetricsServer(
      failing,
      testLogger((line) => lines.push(line)),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanUpAfter(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const port = (server.address() as { port: number }).port;
    const scrape = () => rawRequest(port, "GET /metrics HTTP/1.1", { Host: "127.0.0.1" });

    failure = "reject";
    const rejected = await scrape();
    expect([rejected.status, JSON.parse(String(rejected.body))]).toEqual([500, { error: "metrics_failed" }]);
    failure = "throw";
    const thrown = await scrape();
    expect(thrown.status).toBe(500);
    expect(JSON.parse(String(thrown.body))).toMatchObject({ error: "internal" });
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: "a request handler failed" }));
    failure = null;
    expect((await scrape()).status).toBe(200);
  });
});

/** A TCP port held by this test (another program on METRICS_PORT). */
async function holdPort(): Promise<{ port: number; server: TcpServer }> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanUpAfter(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as { port: number }).port, server };
}

/** A test database reached through a relay that can go silent: the relay, and the URL through it. */
async function databaseBehindRelay(): Promise<{ relay: CuttableProxy; databaseUrl: string }> {
  const database = await databaseForThisTest();
  const databaseUrl = new URL(database.url);
  const relay = await startCuttableProxy(Number(databaseUrl.port));
  cleanUpAfter(() => relay.close());
  databaseUrl.port = String(relay.port);
  return { relay, databaseUrl: databaseUrl.href };
}

describe("the metrics listener of a service process", () => {
  it("METRICS_PORT=0 picks a free port and says which; two processes side by side each have their own", async () => {
    const database = await databaseForThisTest();
    const first = await startServiceProcess({ databaseUrl: database.url });
    cleanUpAfter(() => first.stop());
    const second = await startServiceProcess({ databaseUrl: database.url });
    cleanUpAfter(() => second.stop());
    const ports = [first, second].map((service) => Number(new URL(service.metricsUrl).port));
    expect(ports.every((port) => port > 0)).toBe(true);
    expect(new Set([...ports, first.port, second.port]).size).toBe(4);
    for (const service of [first, second]) {
      const port = Number(new URL(service.metricsUrl).port);
      expect(service.logs).toContainEqual(
        expect.objectContaining({
          level: 30,
          host: "127.0.0.1",
          port,
          msg: `Metrics for Prometheus at http://localhost:${port}/metrics`,
        }),
      );
    }
    // Each listener is its own process's: a socket open on the first shows on its figures only.
    const client = await connectClient(first.socketUrl);
    cleanUpAfter(() => client.close());
    await client.opening();
    const openSockets = async (url: string) =>
      /^auction_open_sockets (\d+)$/m.exec(await (await fetch(url)).text())?.[1];
    expect([await openSockets(first.metricsUrl), await openSockets(second.metricsUrl)]).toEqual(["1", "0"]);
    expect((await fetch(`${first.httpUrl}/metrics`)).status).toBe(404);
  });

  it("refuses a METRICS_PORT that is not a port with exit code 2, naming it, before opening anything", async () => {
    const data = await dataDirForThisTest();
    const cases: [string, string][] = [
      ["ninety", 'METRICS_PORT must be an integer from 0 to 65535, got "ninety"'],
      ["4321", 'METRICS_PORT must differ from PORT (4321): /metrics has a listener of its own, got "4321"'],
    ];
    for (const [value, message] of cases) {
      const service = spawnService(serviceProcessEnv({ dataDir: data.dir, port: 4321, env: { METRICS_PORT: value } }));
      expect(await withTimeout(service.exited, 30_000, "the service exiting"), value).toBe(2);
      expect(service.output(), value).toContain(`Configuration error: ${message}`);
    }
  });

  it("stops with exit code 1 naming the setting when METRICS_PORT is taken, and never opens the public port", async () => {
    const database = await databaseForThisTest();
    const held = await holdPort();
    const data = await dataDirForThisTest();
    const service = spawnService(
      serviceProcessEnv({ dataDir: data.dir, databaseUrl: database.url, env: { METRICS_PORT: String(held.port) } }),
    );
    expect(await withTimeout(service.exited, 60_000, "the service exiting")).toBe(1);
    expect(service.output()).toContain(
      `could not listen on 127.0.0.1:${held.port} (METRICS_HOST:METRICS_PORT): listen EADDRINUSE`,
    );
    expect(service.output()).not.toContain(" is open at ");
  });

  it("says service_ready and database_up 0 while the database is unreachable, 1 once it is back", async () => {
    const { relay, databaseUrl } = await databaseBehindRelay();
    const service = await startServiceProcess({ databaseUrl });
    cleanUpAfter(() => service.stop());
    const gauges = async () => {
      const text = await (await fetch(service.metricsUrl)).text();
      return [/^service_ready (\d)$/m.exec(text)?.[1], /^database_up (\d)$/m.exec(text)?.[1]].join(" ");
    };
    expect(await gauges()).toBe("1 1");
    relay.goDown();
    await waitFor("both gauges at 0", async () => (await gauges()) === "0 0", 30_000);
    expect((await fetch(`${service.httpUrl}/readyz`)).status).toBe(503);
    relay.comeBack();
    await waitFor("both gauges at 1", async () => (await gauges()) === "1 1", 30_000);
    expect((await fetch(`${service.httpUrl}/readyz`)).status).toBe(200);
  });

  it("closes the metrics listener with the public one on SIGTERM, while the drain still runs", async () => {
    // The database behind a relay that can go silent: a bid sent then waits at the store, and
    // the drain waits for it (up to SHUTDOWN_TIMEOUT_MS), so the process outlives its listeners.
    const { relay, databaseUrl } = await databaseBehindRelay();
    const service = await startServiceProcess({
      databaseUrl,
      env: { SHUTDOWN_TIMEOUT_MS: "20000" },
    });
    cleanUpAfter(() => service.stop());
    const metricsPort = Number(new URL(service.metricsUrl).port);
    // A scraper's idle keep-alive connection, let go at once by the shutdown.
    const scraper = connect(metricsPort, "127.0.0.1");
    await once(scraper, "connect");
    scraper.write(`GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${metricsPort}\r\n\r\n`);
    await once(scraper, "data");
    const scraperClosed = once(scraper, "close");
    const client = await connectClient(service.socketUrl);
    cleanUpAfter(() => client.close());
    await client.opening();

    relay.cutAll();
    client.sendBid("Last Orders", 5);
    service.signal("SIGTERM");
    await waitFor("the shutdown to begin", () => service.logs.some((line) => line.msg === "shutting down"));
    await withTimeout(scraperClosed, 10_000, "the scraper's connection closing");
    expect(await accepts(metricsPort)).toBe(false);
    expect(await accepts(service.port)).toBe(false);
    // Still draining: the bid at the silent database is unanswered and the process alive.
    expect(service.child.exitCode).toBeNull();
    expect(service.logs.some((line) => line.msg === "stopped")).toBe(false);
  });
});
