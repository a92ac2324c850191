/**
 * Issue 20, "One request must never stop the service": each request an attacker sent to a running
 * service, now answered (docs/design.md#11), against a live service with the pages of a built site
 * and the operator console on. Every case here stopped the process, or got a wrong answer, before
 * the request target was parsed once (service/http/requestTarget.ts), the handlers guarded
 * (service/http/requestGuard.ts) and the static answers written by service/http/staticSite.ts. After each
 * case the service must still answer /healthz.
 *
 * The store plays no part in these answers, so one backend (PGlite) serves them; the hostile-input
 * fuzzer (httpFuzz.test.ts) runs both.
 */
import { readdir, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SocketServer } from "../../../service/auction/socketServer.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { answerSafely } from "../../../service/http/requestGuard.ts";
import { createMetrics } from "../../../service/metrics.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";
import { createAppServer } from "../../../service/server.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import { type ServedTestSite, serveTestSite } from "../harness/auctionService.ts";
import { ASSET, ASSET_PATH, HOME_PAGE, NOT_FOUND_PAGE } from "../harness/builtSite.ts";
import { type RawAnswer, rawRequest, UPGRADE_HEADERS } from "../harness/rawHttp.ts";
import { testLogger } from "../harness/stores.ts";

const HASH = await hashPassword("correct horse battery", { logN: 14, r: 8, p: 1 });
const SECRET = "a session secret of at least thirty-two bytes";

let served: ServedTestSite;
let port: number;
const logs: Record<string, unknown>[] = [];
/** What the store's next calls do; the tests that inject a fault set it and put it back. */
const faults: { isReady?: () => boolean; winners?: BidStore["winners"] } = {};

beforeAll(async () => {
  // Below the cost ADMIN_PASSWORD_HASH must have (docs/design.md#11), so passed in code, not through the environment's check.
  const admin = { passwordHash: parsePasswordHash(HASH), sessionSecret: SECRET };
  served = await serveTestSite({
    overrides: { admin },
    logger: testLogger((line) => logs.push(line)),
    storeView: (store) =>
      new Proxy(store, {
        get: (target, name, receiver) => faults[name as keyof typeof faults] ?? Reflect.get(target, name, receiver),
      }),
  });
  port = served.port;
});

afterAll(() => served?.remove());

const get = (target: string, headers: Record<string, string> = {}) =>
  rawRequest(port, `GET ${target} HTTP/1.1`, { Host: `127.0.0.1:${port}`, ...headers });

async function expectServing() {
  const health = await get("/healthz");
  expect(health.status).toBe(200);
  expect(JSON.parse(String(health.body))).toEqual({ status: "ok" });
}

function expectRefusedTarget(answer: RawAnswer, status = 400) {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toBe("application/json");
  const body = JSON.parse(String(answer.body));
  expect(body.error).toBe(status === 414 ? "uri_too_long" : "bad_request_target");
  expect(body.message).toMatch(/^The request/);
}

describe("request targets that stopped the process", () => {
  it.each(["//", "//x:99999", "//[", "//%", "//healthz", "//_headers", "//admin"])(
    "GET %s is answered 400 with a JSON error",
    async (target) => {
      expectRefusedTarget(await get(target));
      await expectServing();
    },
  );

  it.each(["//", "//x:99999", "//realtime", "//[?after=1"])(
    "a WebSocket upgrade to %s is refused 400 on the socket",
    async (target) => {
      const answer = await get(target, UPGRADE_HEADERS);
      expect(answer.status).toBe(400);
      expect(String(answer.body)).toBe("The request target's path may not start with //.");
      expect(answer.closedBy).toBe("server");
      await expectServing();
    },
  );
});

describe("request targets answered for what they are", () => {
  it("a % not followed by two hex digits is 400, in the path or the query, for pages, the console and the socket", async () => {
    for (const target of ["/%", "/%zz", "/admin?before=%", "/auction/winners?x=%1"]) {
      expectRefusedTarget(await get(target));
    }
    const upgrade = await get("/realtime?after=%zz", UPGRADE_HEADERS);
    expect([upgrade.status, String(upgrade.body)]).toEqual([
      400,
      "The request target has a % that is not followed by two hex digits.",
    ]);
    await expectServing();
  });

  it("a path that is not UTF-8 once decoded is 400", async () => {
    expectRefusedTarget(await get("/%FF"));
    expectRefusedTarget(await get("/%C3%28"));
    await expectServing();
  });

  it("a target over 8000 characters is 414", async () => {
    expectRefusedTarget(await get(`/${"a".repeat(8000)}`), 414);
    await expectServing();
  });

  it("an absolute-form target naming another host is 400; naming this one, it is served", async () => {
    expectRefusedTarget(await get("http://evil.example/healthz"));
    expectRefusedTarget(await get(`http://user:pw@127.0.0.1:${port}/healthz`));
    const own = await get(`http://127.0.0.1:${port}/healthz`);
    expect(own.status).toBe(200);
  });

  it("a backslash, which URL parsers read as a slash (/\\host is //host), is 400", async () => {
    expectRefusedTarget(await get("/\\evil.example/"));
    await expectServing();
  });
});

describe("handlers that fail", () => {
  it("a handler that throws is answered 500 and logged; the process stays up", async () => {
    faults.isReady = () => {
      throw new Error("injected: readiness check threw");
    };
    try {
      const answer = await get("/readyz");
      expect(answer.status).toBe(500);
      expect(JSON.parse(String(answer.body))).toMatchObject({ error: "internal" });
      expect(answer.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
    } finally {
      delete faults.isReady;
    }
    expect(logs).toContainEqual(expect.objectContaining({ level: 50, msg: "a request handler failed" }));
    await expectServing();
  });

  it("a handler whose promise rejects is answered 500 and logged; the process stays up", async () => {
    // A winner row without its bid: the route's own code throws after the read.
    faults.winners = async () => [{ round: 1, endedAt: "2026-01-01T00:00:00Z" }] as never;
    try {
      const answer = await get("/auction/winners");
      expect(answer.status).toBe(500);
      expect(JSON.parse(String(answer.body))).toMatchObject({ error: "internal" });
    } finally {
      delete faults.winners;
    }
    await expectServing();
  });

  it("an upgrade handler that throws is refused 500 and logged; the process stays up", async () => {
    const lines: Record<string, unknown>[] = [];
    const socketServer = {
      isReady: () => true,
      handleUpgrade() {
        throw new Error("injected: upgrade handler threw");
      },
    } as unknown as SocketServer;
    const server = createAppServer(
      { staticDir: "" },
      testLogger((line) => lines.push(line)),
      {
        socketServer,
        metrics: createMetrics(),
        store: {} as BidStore,
      },
    );
    const bare = await listen(server);
    try {
      const answer = await rawRequest(bare, "GET /realtime HTTP/1.1", { Host: "127.0.0.1", ...UPGRADE_HEADERS });
      expect([answer.status, String(answer.body)]).toEqual([500, "Something went wrong on our side."]);
      expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: "an upgrade handler failed" }));
      expect((await rawRequest(bare, "GET /healthz HTTP/1.1", { Host: "127.0.0.1" })).status).toBe(200);
    } finally {
      await close(server);
    }
  });

  it("an error event on a response (a write after its end) is logged, not thrown", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = testLogger((line) => lines.push(line));
    const server = createServer((req, res) =>
      answerSafely(req, res, logger, () => {
        res.end("done");
        res.write("too late");
      }),
    );
    const bare = await listen(server);
    try {
      const answer = await rawRequest(bare, "GET / HTTP/1.1", { Host: "127.0.0.1" });
      expect([answer.status, String(answer.body)]).toEqual([200, "done"]);
      await expect.poll(() => lines.some((line) => line.msg === "response stream error")).toBe(true);
    } finally {
      await close(server);
    }
  });
});

describe("Range on the pages", () => {
  const size = Buffer.byteLength(HOME_PAGE);

  it("an end before the start (bytes=100-50) is 416 with the file's size", async () => {
    const answer = await get("/", { Range: "bytes=100-50" });
    expect(answer.status).toBe(416);
    expect(answer.headers["content-range"]).toBe(`bytes */${size}`);
    await expectServing();
  });

  it("an end past 2^64 (bytes=0-18446744073709551615) is the whole file as one range", async () => {
    const answer = await get(ASSET_PATH, { Range: "bytes=0-18446744073709551615" });
    expect(answer.status).toBe(206);
    expect(answer.headers["content-range"]).toBe(`bytes 0-${ASSET.length - 1}/${ASSET.length}`);
    expect(String(answer.body)).toBe(ASSET);
    await expectServing();
  });

  it("a suffix range (bytes=-10) is the last 10 bytes", async () => {
    const answer = await get("/", { Range: "bytes=-10" });
    expect(answer.status).toBe(206);
    expect(answer.headers["content-range"]).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect(String(answer.body)).toBe(HOME_PAGE.slice(-10));
  });

  it("the first byte alone (bytes=0-0) is one byte", async () => {
    const answer = await get("/", { Range: "bytes=0-0" });
    expect(answer.status).toBe(206);
    expect(answer.headers["content-range"]).toBe(`bytes 0-0/${size}`);
    expect(String(answer.body)).toBe("<");
  });

  it("a range is in the plain file's bytes even for a client that accepts br: 206 and 416 alike", async () => {
    const partial = await get("/", { Range: "bytes=10-19", "Accept-Encoding": "br, gzip" });
    expect(partial.status).toBe(206);
    expect(partial.headers["content-encoding"]).toBeUndefined();
    expect(partial.headers["content-range"]).toBe(`bytes 10-19/${size}`);
    expect(String(partial.body)).toBe(HOME_PAGE.slice(10, 20));
    const past = await get("/", { Range: `bytes=${size}-`, "Accept-Encoding": "br" });
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe(`bytes */${size}`);
  });

  it("a malformed Range or several ranges get the whole file, 200", async () => {
    for (const range of ["bytes=abc", "bytes=0-1,5-6", "items=0-1", "bytes=1-2-3"]) {
      const answer = await get("/", { Range: range });
      expect(answer.status, range).toBe(200);
      expect(answer.headers["content-range"], range).toBeUndefined();
      expect(String(answer.body), range).toBe(HOME_PAGE);
    }
  });
});

describe("encodings and revalidation on the pages", () => {
  it("honours q=0: br;q=0, gzip gets gzip", async () => {
    const answer = await get("/", { "Accept-Encoding": "br;q=0, gzip" });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-encoding"]).toBe("gzip");
  });

  it("honours preference: gzip over a less wanted br, br at equal preference whatever the order", async () => {
    expect((await get("/", { "Accept-Encoding": "br;q=0.5, gzip" })).headers["content-encoding"]).toBe("gzip");
    const browser = await get("/", { "Accept-Encoding": "gzip, deflate, br, zstd" });
    expect(browser.headers["content-encoding"]).toBe("br");
    expect(String(brotliDecompressSync(browser.body))).toBe(HOME_PAGE);
    expect((await get("/", { "Accept-Encoding": "gzip;q=0, br;q=0" })).headers["content-encoding"]).toBeUndefined();
  });

  it("a 304 carries the Vary, Content-Security-Policy, Cache-Control and ETag of the 200", async () => {
    for (const path of ["/", ASSET_PATH]) {
      const full = await get(path, { "Accept-Encoding": "br" });
      expect(full.status).toBe(200);
      const etag = full.headers.etag ?? "";
      const revalidated = await get(path, { "Accept-Encoding": "br", "If-None-Match": etag });
      expect(revalidated.status, path).toBe(304);
      for (const name of ["vary", "content-security-policy", "cache-control", "etag", "x-content-type-options"]) {
        expect(revalidated.headers[name], `${path} ${name}`).toBe(full.headers[name]);
      }
      expect(revalidated.body.length).toBe(0);
    }
  });

  it("never serves _headers, whatever the spelling", async () => {
    for (const target of [
      "/_headers",
      "/_headers/",
      "/%5Fheaders",
      "/%5fheaders/",
      "/./_headers",
      "/_astro/../_headers",
      "/%2e/_headers",
      "/_headers%2F",
      `http://127.0.0.1:${port}/_headers/`,
    ]) {
      const answer = await get(target);
      expect(answer.status, target).toBe(404);
      expect(String(answer.body), target).toBe(NOT_FOUND_PAGE);
    }
    expectRefusedTarget(await get("//_headers"));
  });
});

describe("methods (docs/design.md#9)", () => {
  /** Every route family that is only read; on this service payments are off, so the payment routes are these two. */
  const READ_ONLY = [
    "/",
    "/leaderboard",
    ASSET_PATH,
    "/auction/winners",
    "/payments/config",
    "/payments/patrons",
    "/healthz",
    "/readyz",
  ];
  /** A bid, as a client that thought it could place one over HTTP would send it. */
  const BODY = JSON.stringify({ type: "bid", requestId: "r1", bidderName: "Over HTTP", amount: 5 });

  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    rawRequest(
      port,
      `${method} ${path} HTTP/1.1`,
      {
        Host: `127.0.0.1:${port}`,
        "Content-Type": "application/json",
        "Content-Length": String(BODY.length),
        ...headers,
      },
      { body: BODY },
    );

  /** What a request could have changed: the auction's bids and winners, and the built site's files. */
  async function writable() {
    const entries = await readdir(served.site.dir, { recursive: true, withFileTypes: true });
    const files = await Promise.all(
      entries
        .filter((entry) => entry.isFile())
        .map(async (entry) => {
          const path = join(entry.parentPath, entry.name);
          const { size, mtimeMs } = await stat(path);
          return `${relative(served.site.dir, path)} ${size} ${mtimeMs}`;
        }),
    );
    const { store } = served.auction;
    // The view's own clock reading aside.
    const { now: _now, ...view } = await store.view(50);
    return { files: files.sort(), view, winners: await store.winners(10) };
  }

  it.each(READ_ONLY)(
    "%s answers POST, PUT, DELETE and PATCH 405 with Allow: GET, HEAD, and writes nothing",
    async (path) => {
      const before = await writable();
      for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
        const answer = await send(method, path);
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.headers.allow, `${method} ${path}`).toBe("GET, HEAD");
        expect(answer.headers["content-type"], `${method} ${path}`).toBe("application/json");
        expect(answer.headers["cache-control"], `${method} ${path}`).toBe("no-store");
        expect(JSON.parse(String(answer.body)), `${method} ${path}`).toEqual({ error: "method_not_allowed" });
      }
      expect(await writable()).toEqual(before);
      await expectServing();
    },
  );

  it("a 405 on a page carries the pages' own security headers; on a service route, the service's", async () => {
    const page = await send("POST", "/");
    expect(page.headers["content-security-policy"]).toMatch(/script-src 'self' 'sha256-/);
    const route = await send("POST", "/healthz");
    expect(route.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it("an unknown path, and _headers, stay 404 whatever the method", async () => {
    for (const path of ["/nowhere", "/_headers", "/payments/nothing"]) {
      const answer = await send("POST", path);
      expect([answer.status, String(answer.body)], path).toEqual([404, NOT_FOUND_PAGE]);
    }
  });

  it("OPTIONS is 405 on the read-only routes, winners included (a simple GET needs no preflight); the payment routes answer a CORS preflight", async () => {
    for (const path of READ_ONLY.filter((path) => !path.startsWith("/payments/"))) {
      const answer = await send("OPTIONS", path, { Origin: `http://127.0.0.1:${port}` });
      expect([answer.status, answer.headers.allow], path).toEqual([405, "GET, HEAD"]);
    }
    // Its own origin may read the refusal, as it may read the winners.
    const winners = await send("OPTIONS", "/auction/winners", { Origin: `http://127.0.0.1:${port}` });
    expect(winners.headers["access-control-allow-origin"]).toBe(`http://127.0.0.1:${port}`);
    for (const path of ["/payments/config", "/payments/patrons"]) {
      const answer = await send("OPTIONS", path, { Origin: `http://127.0.0.1:${port}` });
      expect(answer.status, path).toBe(204);
      expect(answer.headers["access-control-allow-methods"], path).toBe("GET, HEAD, POST");
    }
  });

  it.each(READ_ONLY)("HEAD %s answers the GET's status and headers, with no body", async (path) => {
    const get = await rawRequest(port, `GET ${path} HTTP/1.1`, { Host: `127.0.0.1:${port}` });
    const head = await rawRequest(port, `HEAD ${path} HTTP/1.1`, { Host: `127.0.0.1:${port}` });
    const withoutDate = ({ date: _date, ...headers }: Record<string, string>) => headers;
    expect(head.status).toBe(get.status);
    expect(withoutDate(head.headers)).toEqual(withoutDate(get.headers));
    expect(Number(get.headers["content-length"])).toBe(get.body.length);
    expect(head.body.length).toBe(0);
  });
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server) {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
