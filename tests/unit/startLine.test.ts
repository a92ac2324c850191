/** What the service says once it listens, and when it cannot start (service/startLine.ts, startFailures.ts). */
import { describe, expect, it } from "vitest";
import { readServiceConfig } from "../../service/config.ts";
import { listenFailure, storeFailure } from "../../service/startFailures.ts";
import { isOpenLine, openLine, shownHost } from "../../service/startLine.ts";

const HASH = `scrypt:17:8:1:${Buffer.alloc(16, 1).toString("base64")}:${Buffer.alloc(32, 2).toString("base64")}`;

describe("the open line", () => {
  it("names the pages, PGlite's directory, the console, payments and the same-origin sockets", () => {
    const config = readServiceConfig({ STATIC_DIR: "/app/dist", DATA_DIR: "/data", HOST: "0.0.0.0" });
    const line = openLine({ config, port: 4321, metricsPort: 9464 });
    expect(line.fields).toEqual({
      host: "0.0.0.0",
      port: 4321,
      metricsPort: 9464,
      pid: process.pid,
      backend: "pglite",
      dataDir: "/data",
      pages: "/app/dist",
      console: false,
      payments: false,
      allowedOrigins: "same origin",
    });
    expect(line.msg).toBe(
      "The Nothing Store is open at http://localhost:4321: pages from /app/dist, bids in PGlite at /data, operator console off, payments off, sockets from the same origin only",
    );
    expect(isOpenLine({ ...line.fields, msg: line.msg })).toBe(true);
  });

  it("says no pages are served with STATIC_DIR empty, and names PostgreSQL's host and database, never the password", () => {
    const config = readServiceConfig({
      STATIC_DIR: "",
      DATABASE_URL: "postgres://auction:hunter2@db.internal:5432/nothing",
      ALLOWED_ORIGINS: "https://nothing.example, http://localhost:4321",
      ADMIN_PASSWORD_HASH: HASH,
      ADMIN_SESSION_SECRET: "s".repeat(32),
    });
    const line = openLine({ config, port: 8080, metricsPort: 9464 });
    expect(line.fields).toMatchObject({
      backend: "postgres",
      database: "db.internal:5432/nothing",
      pages: null,
      console: true,
      allowedOrigins: ["https://nothing.example", "http://localhost:4321"],
    });
    expect(line.fields).not.toHaveProperty("dataDir");
    expect(line.msg).toBe(
      "The Nothing Store's auction service is open at http://localhost:8080, serving no pages (STATIC_DIR is empty: / answers not_found): bids in PostgreSQL at db.internal:5432/nothing, operator console on at /admin, payments off, sockets from https://nothing.example, http://localhost:4321",
    );
    expect(JSON.stringify(line)).not.toContain("hunter2");
    expect(isOpenLine({ ...line.fields, msg: line.msg })).toBe(true);
    expect(isOpenLine({ msg: line.msg })).toBe(false);
  });

  it("shows the host as a person types it", () => {
    expect(["127.0.0.1", "0.0.0.0", "::", "::1", "10.0.0.5", "shop.internal"].map(shownHost)).toEqual([
      "localhost",
      "localhost",
      "localhost",
      "[::1]",
      "10.0.0.5",
      "shop.internal",
    ]);
  });
});

describe("a start that fails", () => {
  const url = "postgres://auction:hunter2@db.internal:5432/nothing";

  it("names DATABASE_URL: exit 2 when only a changed setting helps, 1 when the database may come back", () => {
    const refused = Object.assign(new Error('password authentication failed for user "auction"'), { code: "28P01" });
    expect(storeFailure(refused, url, "/data")).toEqual({
      exitCode: 2,
      msg: 'DATABASE_URL: PostgreSQL at db.internal:5432/nothing refused the password: password authentication failed for user "auction" (28P01)',
      fields: { database: "db.internal:5432/nothing", code: "28P01" },
    });
    const cause = Object.assign(new Error("connect ECONNREFUSED 10.0.0.9:5432"), { code: "ECONNREFUSED" });
    const unavailable = Object.assign(new Error("PostgreSQL is unavailable"), { name: "StoreUnavailableError", cause });
    expect(storeFailure(unavailable, url, "/data")).toMatchObject({
      exitCode: 1,
      msg: "DATABASE_URL: cannot reach PostgreSQL at db.internal:5432/nothing: connect ECONNREFUSED 10.0.0.9:5432 (ECONNREFUSED)",
    });
    expect(storeFailure(new Error("disk full"), url, "/data")).toMatchObject({
      exitCode: 1,
      msg: "could not open the auction store on PostgreSQL at db.internal:5432/nothing (DATABASE_URL): disk full",
    });
    expect(storeFailure(new Error("locked"), null, "/data")).toMatchObject({
      exitCode: 1,
      msg: "could not open the auction store on PGlite in DATA_DIR /data: locked",
    });
    for (const failure of [refused, unavailable])
      expect(JSON.stringify(storeFailure(failure, url, "/d"))).not.toContain("hunter2");
  });

  it("names HOST for an address that is not this machine's (2), the port's settings for the rest (1)", () => {
    const settings = { host: "HOST", port: "PORT" } as const;
    const notHere = Object.assign(new Error("listen EADDRNOTAVAIL"), { code: "EADDRNOTAVAIL" });
    expect(listenFailure(notHere, "10.9.9.9", 4321, settings)).toMatchObject({
      exitCode: 2,
      msg: "HOST: cannot listen on 10.9.9.9:4321: 10.9.9.9 is not an address of this machine (EADDRNOTAVAIL); 0.0.0.0 listens on every interface",
    });
    const privileged = Object.assign(new Error("listen EACCES"), { code: "EACCES" });
    expect(listenFailure(privileged, "0.0.0.0", 80, settings)).toMatchObject({
      exitCode: 2,
      msg: expect.stringMatching(/^PORT: /),
    });
    const taken = Object.assign(new Error("listen EADDRINUSE: address already in use"), { code: "EADDRINUSE" });
    expect(listenFailure(taken, "127.0.0.1", 9464, { host: "METRICS_HOST", port: "METRICS_PORT" })).toMatchObject({
      exitCode: 1,
      msg: "could not listen on 127.0.0.1:9464 (METRICS_HOST:METRICS_PORT): listen EADDRINUSE: address already in use",
    });
  });
});
