import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { checkStaticDir, configWarnings, databaseLocation, readServiceConfig } from "../../service/config.ts";
import { openFileBudget, readOpenFileLimit } from "../../service/http/connectionLimits.ts";

describe("service configuration", () => {
  it("defaults to port 4321 on loopback, metrics on 9464 on loopback, serving dist/, PGlite in ./data, same-origin sockets", () => {
    expect(readServiceConfig({}, 20_000)).toEqual({
      port: 4321,
      host: "127.0.0.1",
      metricsPort: 9464,
      metricsHost: "127.0.0.1",
      staticDir: resolve("dist"),
      logLevel: "info",
      databaseUrl: null,
      dataDir: resolve("data"),
      pgliteTemplateDir: null,
      allowedOrigins: [],
      maxSocketsPerAddress: 50,
      maxConnectionsPerClient: 256,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      maxConnections: 18_000,
      fileLimit: 20_000,
      networkSharePercent: 10,
      bidRateLimit: 10,
      bidRateWindowMs: 10_000,
      trustProxy: 0,
      trustedProxies: ["127.0.0.0/8", "::1/128"],
      heartbeatIntervalMs: 30_000,
      shutdownTimeoutMs: 10_000,
      maxBufferedBytes: 1_048_576,
      maxFramesPerSecond: 20,
      rounds: { roundSeconds: 3600, softCloseSeconds: 30 },
      admin: null,
      payments: null,
    });
  });

  it("reads the round lengths, 0 for one endless auction, and refuses a bad one by name", () => {
    expect(readServiceConfig({ AUCTION_ROUND_SECONDS: "0", AUCTION_SOFT_CLOSE_SECONDS: "5" }).rounds).toEqual({
      roundSeconds: 0,
      softCloseSeconds: 5,
    });
    expect(() => readServiceConfig({ AUCTION_ROUND_SECONDS: "1h" })).toThrow(
      /AUCTION_ROUND_SECONDS must be an integer from 0 to 2592000, got "1h"/,
    );
    expect(() => readServiceConfig({ AUCTION_SOFT_CLOSE_SECONDS: "-1" })).toThrow(/AUCTION_SOFT_CLOSE_SECONDS must be/);
    expect(() => readServiceConfig({ AUCTION_ROUND_SECONDS: "20", AUCTION_SOFT_CLOSE_SECONDS: "30" })).toThrow(
      'AUCTION_SOFT_CLOSE_SECONDS must not exceed AUCTION_ROUND_SECONDS (20), got "30"',
    );
  });

  it("reads the frame budget for bids sent, 0 to turn it off, and refuses a bad one by name", () => {
    expect(readServiceConfig({ MAX_FRAMES_PER_SECOND: "0" }).maxFramesPerSecond).toBe(0);
    expect(readServiceConfig({ MAX_FRAMES_PER_SECOND: " 5 " }).maxFramesPerSecond).toBe(5);
    expect(readServiceConfig({ MAX_FRAMES_PER_SECOND: "1000" }).maxFramesPerSecond).toBe(1_000);
    for (const value of ["-1", "1001", "2.5", "fast", "20/s"]) {
      expect(() => readServiceConfig({ MAX_FRAMES_PER_SECOND: value })).toThrow(
        `MAX_FRAMES_PER_SECOND must be an integer from 0 to 1000, got "${value}"`,
      );
    }
  });

  it("reads PORT, HOST, STATIC_DIR and LOG_LEVEL", () => {
    const config = readServiceConfig({ PORT: "8080", HOST: "0.0.0.0", STATIC_DIR: "/srv/site", LOG_LEVEL: "debug" });
    expect(config).toMatchObject({ port: 8080, host: "0.0.0.0", staticDir: "/srv/site", logLevel: "debug" });
  });

  it("refuses an unknown LOG_LEVEL, naming the variable and the levels it takes", () => {
    expect(() => readServiceConfig({ LOG_LEVEL: "loud" })).toThrow(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
    expect(readServiceConfig({ LOG_LEVEL: " WARN " }).logLevel).toBe("warn");
  });

  it("turns static serving off with an empty STATIC_DIR", () => {
    expect(readServiceConfig({ STATIC_DIR: "" }).staticDir).toBe("");
  });

  it("rejects a PORT that is not a port", () => {
    expect(() => readServiceConfig({ PORT: "http" })).toThrow(/PORT must be an integer from 0 to 65535, got "http"/);
    expect(() => readServiceConfig({ PORT: "70000" })).toThrow(/PORT must be/);
    expect(() => readServiceConfig({ PORT: "12.5" })).toThrow(/PORT must be/);
  });

  it("reads METRICS_PORT and METRICS_HOST: blank is the default, 0 a free port (docs/design.md#9)", () => {
    expect(readServiceConfig({ METRICS_PORT: "9100", METRICS_HOST: " 0.0.0.0 " })).toMatchObject({
      metricsPort: 9100,
      metricsHost: "0.0.0.0",
    });
    expect(readServiceConfig({ METRICS_PORT: "", METRICS_HOST: "" })).toMatchObject({
      metricsPort: 9464,
      metricsHost: "127.0.0.1",
    });
    expect(readServiceConfig({ METRICS_PORT: "0" }).metricsPort).toBe(0);
    // Both free ports: each listener gets its own.
    expect(readServiceConfig({ PORT: "0", METRICS_PORT: "0" })).toMatchObject({ port: 0, metricsPort: 0 });
  });

  it("rejects a METRICS_PORT that is not a port, naming it", () => {
    expect(() => readServiceConfig({ METRICS_PORT: "metrics" })).toThrow(
      'METRICS_PORT must be an integer from 0 to 65535, got "metrics"',
    );
    expect(() => readServiceConfig({ METRICS_PORT: "65536" })).toThrow(/^METRICS_PORT must be/);
    expect(() => readServiceConfig({ METRICS_PORT: "-1" })).toThrow(/^METRICS_PORT must be/);
    expect(() => readServiceConfig({ METRICS_PORT: "94.64" })).toThrow(/^METRICS_PORT must be/);
  });

  it("rejects a METRICS_PORT equal to PORT where the two listeners' addresses meet", () => {
    const message = 'METRICS_PORT must differ from PORT (8080): /metrics has a listener of its own, got "8080"';
    expect(() => readServiceConfig({ PORT: "8080", METRICS_PORT: "8080" })).toThrow(message);
    expect(() => readServiceConfig({ PORT: "8080", METRICS_PORT: "8080", HOST: "0.0.0.0" })).toThrow(message);
    expect(() => readServiceConfig({ PORT: "8080", METRICS_PORT: "8080", METRICS_HOST: "::" })).toThrow(message);
    expect(() => readServiceConfig({ METRICS_PORT: "4321" })).toThrow(/^METRICS_PORT must differ from PORT \(4321\)/);
    // Two interfaces: one port number on each is no conflict.
    expect(
      readServiceConfig({ PORT: "8080", HOST: "10.0.0.5", METRICS_PORT: "8080", METRICS_HOST: "127.0.0.1" }),
    ).toMatchObject({ port: 8080, metricsPort: 8080 });
  });

  it("uses PostgreSQL when DATABASE_URL is set, PGlite in DATA_DIR otherwise", () => {
    const url = "postgres://auction:secret@db.internal:5432/nothing";
    expect(readServiceConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(readServiceConfig({ DATABASE_URL: "postgresql://localhost/x" }).databaseUrl).toBe(
      "postgresql://localhost/x",
    );
    expect(readServiceConfig({ DATABASE_URL: "  " }).databaseUrl).toBeNull();
    expect(readServiceConfig({ DATA_DIR: "/var/lib/nothing" }).dataDir).toBe("/var/lib/nothing");
    expect(readServiceConfig({ DATA_DIR: "tmp/pg" }).dataDir).toBe(resolve("tmp/pg"));
    expect(readServiceConfig({ PGLITE_TEMPLATE_DIR: " tmp/template " }).pgliteTemplateDir).toBe(
      resolve("tmp/template"),
    );
    expect(readServiceConfig({ PGLITE_TEMPLATE_DIR: "" }).pgliteTemplateDir).toBeNull();
  });

  it("rejects a DATABASE_URL that is not PostgreSQL's, without echoing it", () => {
    expect(() => readServiceConfig({ DATABASE_URL: "mysql://root:hunter2@db/x" })).toThrow(
      /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL, got a mysql: URL/,
    );
    expect(() => readServiceConfig({ DATABASE_URL: "hunter2" })).toThrow(/^DATABASE_URL must be/);
    expect(() => readServiceConfig({ DATABASE_URL: "hunter2" })).not.toThrow(/hunter2/);
    // A port out of range, an unclosed bracket: postgres:// that does not parse.
    for (const url of ["postgres://auction:hunter2@db:99999/x", "postgres://auction:hunter2@[db/x"]) {
      expect(() => readServiceConfig({ DATABASE_URL: url })).toThrow(
        "DATABASE_URL does not parse as a URL: write postgres://user:password@host:5432/database, with any of @ : / ? # [ ] % in the password percent-encoded",
      );
      expect(() => readServiceConfig({ DATABASE_URL: url })).not.toThrow(/hunter2/);
    }
  });

  it("reads ALLOWED_ORIGINS as a comma list of normalised origins", () => {
    expect(
      readServiceConfig({ ALLOWED_ORIGINS: "https://Nothing.Store, http://localhost:4321/ ," }).allowedOrigins,
    ).toEqual(["https://nothing.store", "http://localhost:4321"]);
    expect(readServiceConfig({ ALLOWED_ORIGINS: "*" }).allowedOrigins).toEqual(["*"]);
  });

  it("rejects an ALLOWED_ORIGINS entry that is not an origin, naming it and saying what to write", () => {
    const cases: [string, string][] = [
      ["localhost:45000", 'ALLOWED_ORIGINS: "localhost:45000" has no scheme: write http://localhost:45000'],
      ["127.0.0.1:4321", 'ALLOWED_ORIGINS: "127.0.0.1:4321" has no scheme: write http://127.0.0.1:4321'],
      ["nothing.store", 'ALLOWED_ORIGINS: "nothing.store" has no scheme: write https://nothing.store'],
      [
        "https://nothing.store/auction",
        'ALLOWED_ORIGINS: "https://nothing.store/auction" has more than an origin: write https://nothing.store',
      ],
      [
        "wss://auction.nothing.store",
        "ALLOWED_ORIGINS: \"wss://auction.nothing.store\" is not a page's origin: pages are http:// or https:// (the socket's wss:// address is PUBLIC_REALTIME_URL)",
      ],
      ["https://[nothing", 'ALLOWED_ORIGINS: "https://[nothing" is not an origin such as https://nothing.example'],
    ];
    for (const [entry, message] of cases) {
      expect(() => readServiceConfig({ ALLOWED_ORIGINS: `https://ok.example, ${entry}` }), entry).toThrow(message);
    }
  });

  it("rejects a HOST or METRICS_HOST that is neither an IP address nor a host name, naming it", () => {
    expect(readServiceConfig({ HOST: "::", METRICS_HOST: "metrics.internal" })).toMatchObject({
      host: "::",
      metricsHost: "metrics.internal",
    });
    expect(readServiceConfig({ HOST: "localhost" }).host).toBe("localhost");
    expect(readServiceConfig({ HOST: "auction_service" }).host).toBe("auction_service");
    const cases: [Record<string, string>, string][] = [
      [
        { HOST: "999.1.1.1" },
        'HOST must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::), got "999.1.1.1"',
      ],
      [{ HOST: "0.0.0.0:4321" }, 'got "0.0.0.0:4321": the port goes in PORT'],
      [{ HOST: "http://0.0.0.0" }, 'got "http://0.0.0.0": no scheme'],
      [
        { METRICS_HOST: "10.0.0.1:9464" },
        'METRICS_HOST must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::), got "10.0.0.1:9464": the port goes in METRICS_PORT',
      ],
      [{ HOST: "my host" }, 'got "my host"'],
    ];
    for (const [env, message] of cases) {
      expect(() => readServiceConfig(env), JSON.stringify(env)).toThrow(message);
    }
  });

  it("refuses a STATIC_DIR that holds no built site, naming it and the way to serve no pages", async () => {
    const root = await mkdtemp(join(tmpdir(), "nothing-static-dir-"));
    onTestFinished(() => rm(root, { recursive: true, force: true }));
    const noPages = "or set STATIC_DIR= (empty) to serve no pages";
    expect(() => checkStaticDir(join(root, "dsit"))).toThrow(
      `STATIC_DIR: ${join(root, "dsit")} does not exist: name the built pages (npm run build writes dist/), ${noPages}`,
    );
    await writeFile(join(root, "file"), "");
    expect(() => checkStaticDir(join(root, "file"))).toThrow(
      `STATIC_DIR: ${join(root, "file")} is not a directory: ${noPages}`,
    );
    expect(() => checkStaticDir(root)).toThrow(
      `STATIC_DIR: ${root} holds no built site (index.html and 404.html missing): run npm run build, ${noPages}`,
    );
    await writeFile(join(root, "index.html"), "<!doctype html>");
    expect(() => checkStaticDir(root)).toThrow("(404.html missing)");
    await writeFile(join(root, "404.html"), "<!doctype html>");
    expect(() => checkStaticDir(root)).not.toThrow();
    expect(() => checkStaticDir("")).not.toThrow();
  });

  it("warns about ADMIN_SESSION_SECRET without ADMIN_PASSWORD_HASH: the console stays off", () => {
    expect(configWarnings({ ADMIN_SESSION_SECRET: "s".repeat(48) })).toEqual([
      "ADMIN_SESSION_SECRET is set but ADMIN_PASSWORD_HASH is not: the operator console is off (npm run -s admin:hash prints a hash)",
    ]);
    expect(configWarnings({})).toEqual([]);
    expect(configWarnings({ ADMIN_SESSION_SECRET: " ", ADMIN_PASSWORD_HASH: "" })).toEqual([]);
  });

  it("names where DATABASE_URL points without its user's password", () => {
    expect(databaseLocation("postgres://auction:secret@db.internal:6543/nothing")).toBe("db.internal:6543/nothing");
    expect(databaseLocation("postgresql://auction:secret@db")).toBe("db:5432/auction");
    expect(databaseLocation("postgres://auction@localhost/nothing?host=/run/postgresql")).toBe(
      "/run/postgresql:5432/nothing",
    );
  });

  it("reads the limits, proxy hops and timings", () => {
    const config = readServiceConfig({
      MAX_SOCKETS_PER_ADDRESS: "5000",
      MAX_CONNECTIONS_PER_CLIENT: "5000",
      BID_RATE_LIMIT: "100",
      BID_RATE_WINDOW_MS: "1000",
      TRUST_PROXY: "2",
      HEARTBEAT_INTERVAL_MS: "25000",
      SHUTDOWN_TIMEOUT_MS: "3000",
      MAX_BUFFERED_BYTES: "65536",
    });
    expect(config).toMatchObject({
      maxSocketsPerAddress: 5000,
      bidRateLimit: 100,
      bidRateWindowMs: 1000,
      trustProxy: 2,
      heartbeatIntervalMs: 25_000,
      shutdownTimeoutMs: 3000,
      maxBufferedBytes: 65_536,
    });
  });

  it("rejects a limit that is not a positive integer, naming the variable", () => {
    expect(() => readServiceConfig({ MAX_SOCKETS_PER_ADDRESS: "0" })).toThrow(
      /MAX_SOCKETS_PER_ADDRESS must be an integer from 1 to 1000000, got "0"/,
    );
    expect(() => readServiceConfig({ BID_RATE_LIMIT: "ten" })).toThrow(/BID_RATE_LIMIT must be an integer/);
    expect(() => readServiceConfig({ BID_RATE_WINDOW_MS: "-1" })).toThrow(/BID_RATE_WINDOW_MS must be/);
    expect(() => readServiceConfig({ TRUST_PROXY: "true" })).toThrow(/TRUST_PROXY must be an integer from 0 to 100/);
    expect(() => readServiceConfig({ HEARTBEAT_INTERVAL_MS: "1.5" })).toThrow(/HEARTBEAT_INTERVAL_MS must be/);
    expect(() => readServiceConfig({ SHUTDOWN_TIMEOUT_MS: "soon" })).toThrow(/SHUTDOWN_TIMEOUT_MS must be/);
    expect(() => readServiceConfig({ MAX_BUFFERED_BYTES: "0" })).toThrow(
      /MAX_BUFFERED_BYTES must be an integer from 1 to 1073741824, got "0"/,
    );
    expect(() => readServiceConfig({ MAX_BUFFERED_BYTES: "1MiB" })).toThrow(/MAX_BUFFERED_BYTES must be an integer/);
    expect(() => readServiceConfig({ MAX_BUFFERED_BYTES: "-1" })).toThrow(/MAX_BUFFERED_BYTES must be/);
  });

  it("keeps connections below the file limit, with room for the rest of the process", () => {
    // A tenth of the limit, or 256 files when that is more, stays for the database, /metrics and pages.
    expect(openFileBudget(20_000)).toEqual({ fileLimit: 20_000, maxConnections: 18_000 });
    expect(openFileBudget(1_024)).toEqual({ fileLimit: 1_024, maxConnections: 768 });
    expect(openFileBudget(null)).toEqual({ fileLimit: null, maxConnections: 10_000 });
    expect(readServiceConfig({}, 1_024).maxConnections).toBe(768);
    expect(readServiceConfig({ MAX_CONNECTIONS: "500" }, 1_024).maxConnections).toBe(500);
    expect(() => readServiceConfig({ MAX_CONNECTIONS: "1000" }, 1_024)).toThrow(
      /MAX_CONNECTIONS must be an integer from 1 to 768, got "1000"/,
    );
    expect(() => readServiceConfig({}, 300)).toThrow(
      /the process may open only 300 files \(ulimit -n\): too few for the database and 64 connections/,
    );
  });

  it("reads the soft file limit from /proc, and none when it is unlimited or unreadable", () => {
    const limits = (soft: string) => () =>
      `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                1048576              files\n`;
    expect(readOpenFileLimit(limits("20000"))).toBe(20_000);
    expect(readOpenFileLimit(limits("unlimited"))).toBeNull();
    expect(
      readOpenFileLimit(() => {
        throw new Error("ENOENT");
      }),
    ).toBeNull();
  });

  it("reads TRUSTED_PROXIES as addresses and ranges in one spelling, and names an entry that is neither", () => {
    expect(readServiceConfig({ TRUSTED_PROXIES: " 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "192.0.2.7/32",
      "2001:db8::/32",
    ]);
    for (const entry of ["proxy.local", "10.0.0.0/33", "2001:db8::/129", "10.0.0.0/8/1", "10.0.0.0/x"]) {
      expect(() => readServiceConfig({ TRUSTED_PROXIES: entry })).toThrow(
        `TRUSTED_PROXIES: "${entry}" is not an address or a CIDR range such as 10.0.0.0/8 or 2001:db8::/32`,
      );
    }
  });

  it("refuses connection settings that contradict each other, naming both", () => {
    expect(() => readServiceConfig({ MAX_SOCKETS_PER_ADDRESS: "300" })).toThrow(
      /MAX_SOCKETS_PER_ADDRESS \(300\) exceeds MAX_CONNECTIONS_PER_CLIENT \(256\), which counts sockets too/,
    );
    expect(() => readServiceConfig({ HEADERS_TIMEOUT_MS: "20000", REQUEST_TIMEOUT_MS: "15000" })).toThrow(
      /REQUEST_TIMEOUT_MS \(15000\) must be at least HEADERS_TIMEOUT_MS \(20000\)/,
    );
    expect(() => readServiceConfig({ HEADERS_TIMEOUT_MS: "10s" })).toThrow(/HEADERS_TIMEOUT_MS must be an integer/);
  });
});
