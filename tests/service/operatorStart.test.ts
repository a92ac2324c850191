/**
 * An operator's first deploy (docs/deploying.md#running-it): `npm run serve` as a supervisor runs
 * it and stops it, every bad setting refused at start with exit 2 and its name, and the line that
 * says what is running. Real processes: npm, the service, PostgreSQL and PGlite.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withTimeout } from "../../scripts/harness/childProcess.ts";
import { freePort } from "../../scripts/harness/ports.ts";
import { connectClient } from "./harness/auctionClient.ts";
import { buildTestSite } from "./harness/builtSite.ts";
import {
  accepts,
  type CollectedProcess,
  jsonLines,
  serviceProcessEnv,
  spawnCollected,
  spawnService,
  waitForOpenLine,
} from "./harness/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, dataDirForThisTest } from "./harness/stores.ts";

/** Never printed, whatever fails: it stands for the password in every DATABASE_URL here. */
const PASSWORD = "hunter2-not-printed";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A new database's URL with PASSWORD in it (the test cluster trusts every connection, whatever its password). */
async function urlWithPassword(): Promise<URL> {
  const url = new URL((await databaseForThisTest()).url);
  url.password = PASSWORD;
  return url;
}

/** `npm run serve` in a process group of its own, as a supervisor starts it, on a migrated PGlite directory. */
async function npmRunServe(): Promise<CollectedProcess> {
  const data = await dataDirForThisTest();
  return spawnCollected("npm", ["run", "serve"], serviceProcessEnv({ dataDir: data.dir }), { group: true });
}

/** Signals `send`, then proves the service drained: its socket closed 1001, npm exited 0, no process and no port left. */
async function expectDrainedAfter(npm: CollectedProcess, send: () => void) {
  const open = await waitForOpenLine(npm);
  const [pid, port] = [Number(open.pid), Number(open.port)];
  // exec: the service is npm's own child, with no shell in between to take the signal.
  expect(pid).not.toBe(npm.child.pid);
  const client = await connectClient(`ws://127.0.0.1:${port}/realtime`);
  await client.opening();
  send();
  expect(await withTimeout(client.closed, 20_000, "the socket closing")).toEqual({
    code: 1001,
    reason: "Service restarting",
  });
  expect(await withTimeout(npm.exited, 20_000, "npm exiting")).toBe(0);
  expect(isRunning(pid)).toBe(false);
  expect(await accepts(port)).toBe(false);
  const messages = jsonLines(npm.stdout()).map((line) => line.msg);
  expect(messages.filter((msg) => msg === "stopped")).toHaveLength(1);
  expect(messages).not.toContain("shutdown failed");
}

describe("npm run serve under a supervisor", () => {
  it("passes a SIGTERM sent to npm on to the service, which drains and exits, leaving no process behind", async () => {
    const npm = await npmRunServe();
    await expectDrainedAfter(npm, () => npm.child.kill("SIGTERM"));
  });

  it("drains once when the whole process group is signalled (the service hears it twice: directly and through npm)", async () => {
    const npm = await npmRunServe();
    await expectDrainedAfter(npm, () => process.kill(-(npm.child.pid as number), "SIGTERM"));
  });
});

/** A read-only tmpfs mounted for this test (root only), or null where this process may not mount. */
async function readOnlyMount(): Promise<string | null> {
  if (process.getuid?.() !== 0) return null;
  const dir = await mkdtemp(join(tmpdir(), "nothing-ro-"));
  const mount = spawnCollected("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir], process.env);
  if ((await withTimeout(mount.exited, 10_000, "mount")) !== 0) {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  cleanUpAfter(async () => {
    await withTimeout(spawnCollected("umount", [dir], process.env).exited, 10_000, "umount");
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

describe("a DATA_DIR the service cannot write stops the start with exit code 2, naming it", () => {
  async function refusedOn(dataDir: string, { fileModesBind = false } = {}) {
    const service = spawnService(serviceProcessEnv({ dataDir }), { fileModesBind });
    const code = await withTimeout(service.exited, 60_000, "the service exiting");
    expect(service.output()).not.toContain(" is open at ");
    const fatal = jsonLines(service.stdout()).find((line) => line.level === 60);
    // One line, no stack: the message is the whole story.
    expect(fatal).not.toHaveProperty("err");
    return { code, fatal: fatal?.msg };
  }

  it("a read-only mount (EROFS): DATA_DIR itself, or a directory still to be made under it", async (context) => {
    const mount = await readOnlyMount();
    if (!mount) return context.skip("mounting a read-only tmpfs needs root");
    const advice =
      "PGlite keeps the auction there and must write to it; mount it read-write or choose another DATA_DIR";
    for (const dataDir of [mount, join(mount, "data", "auction")]) {
      expect(await refusedOn(dataDir)).toEqual({
        code: 2,
        fatal: `DATA_DIR ${dataDir} is read-only (EROFS, a read-only file system): ${advice}`,
      });
    }
  });

  it("a directory this user may not write (EACCES), as root without its override of file modes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "nothing-555-"));
    cleanUpAfter(() => rm(dir, { recursive: true, force: true }));
    await chmod(dir, 0o555);
    // Root keeps its uid (another user could not enter a checkout under a private directory).
    const uid = process.getuid?.();
    expect(await refusedOn(dir, { fileModesBind: true })).toEqual({
      code: 2,
      fatal: `DATA_DIR ${dir} is read-only for this process (uid ${uid}: EACCES on ${dir}/nothing-store.lock): PGlite keeps the auction there and must write to it; give this user write access (chown) or choose another DATA_DIR`,
    });
  });
});

describe("a bad setting stops the start with exit code 2, naming its variable", () => {
  /** Runs the service with `env` until it exits; its code and output, checked to hold no password. */
  async function refusedStart(env: Record<string, string>, databaseUrl?: string) {
    const data = await dataDirForThisTest();
    const service = spawnService(serviceProcessEnv({ dataDir: data.dir, databaseUrl, env }));
    const code = await withTimeout(service.exited, 60_000, "the service exiting");
    expect(service.output()).not.toContain(PASSWORD);
    expect(service.output()).not.toContain(" is open at ");
    const fatal = jsonLines(service.stdout()).find((line) => line.level === 60);
    return { code, output: service.output(), fatal: fatal?.msg };
  }

  it("refuses settings it can read wrong before opening anything: STATIC_DIR, HOST, ALLOWED_ORIGINS, DATABASE_URL", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ STATIC_DIR: "dsit" }, `Configuration error: STATIC_DIR: ${process.cwd()}/dsit does not exist`],
      [{ HOST: "999.1.1.1" }, "Configuration error: HOST must be an IP address or a host name of this machine"],
      [
        { ALLOWED_ORIGINS: "localhost:45000" },
        'Configuration error: ALLOWED_ORIGINS: "localhost:45000" has no scheme: write http://localhost:45000',
      ],
      [
        { DATABASE_URL: `postgres://auction:${PASSWORD}@[db/nothing` },
        "Configuration error: DATABASE_URL does not parse as a URL",
      ],
    ];
    for (const [env, message] of cases) {
      const { code, output } = await refusedStart(env);
      expect(code, message).toBe(2);
      expect(output, message).toContain(message);
      // Refused before the store opened: no migration ran, no directory was touched.
      expect(output, message).not.toContain("auction store open");
    }
  });

  it("names HOST when it is no address of this machine, found at listen", async () => {
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is assigned to no interface here.
    const { code, output } = await refusedStart({ HOST: "192.0.2.1" });
    expect(code).toBe(2);
    expect(output).toContain(
      "HOST: cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)",
    );
  });

  it("names DATABASE_URL and what failed, without its password: 2 for a wrong database or user, 1 for a database out of reach", async () => {
    const base = await urlWithPassword();
    const at = (change: (url: URL) => void) => {
      const url = new URL(base);
      change(url);
      return url.toString();
    };
    const { hostname, port, pathname } = base;
    const wrongDatabase = await refusedStart(
      {},
      at((url) => {
        url.pathname = "/no_such_database";
      }),
    );
    expect(wrongDatabase.code).toBe(2);
    expect(wrongDatabase.fatal).toBe(
      `DATABASE_URL: PostgreSQL at ${hostname}:${port}/no_such_database has no such database: database "no_such_database" does not exist (3D000)`,
    );
    const wrongUser = await refusedStart(
      {},
      at((url) => {
        url.username = "nobody_here";
      }),
    );
    expect(wrongUser.code).toBe(2);
    expect(wrongUser.fatal).toMatch(
      /^DATABASE_URL: PostgreSQL at .* refused the user: role "nobody_here" does not exist \(28000\)$/,
    );

    const closedPort = await freePort();
    const unreachable = await refusedStart(
      {},
      at((url) => {
        url.port = String(closedPort);
      }),
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.fatal).toBe(
      `DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:${closedPort}${pathname}: connect ECONNREFUSED 127.0.0.1:${closedPort} (ECONNREFUSED)`,
    );
  });
});

describe("the open line says what is running", () => {
  it("on PostgreSQL without pages: the database but not its password, no pages, the console off with a warning, the origins", async () => {
    const [url, data] = await Promise.all([urlWithPassword(), dataDirForThisTest()]);
    const service = spawnService(
      serviceProcessEnv({
        dataDir: data.dir,
        databaseUrl: url.toString(),
        env: { ALLOWED_ORIGINS: "https://nothing.example", ADMIN_SESSION_SECRET: "s".repeat(48) },
      }),
    );
    const open = await waitForOpenLine(service);
    expect(open).toMatchObject({
      backend: "postgres",
      database: `${url.hostname}:${url.port}${url.pathname}`,
      pages: null,
      console: false,
      payments: false,
      allowedOrigins: ["https://nothing.example"],
      pid: service.child.pid,
    });
    expect(open.msg).toMatch(
      /^The Nothing Store's auction service is open at http:\/\/localhost:\d+, serving no pages/,
    );
    expect(jsonLines(service.stdout())).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: "ADMIN_SESSION_SECRET is set but ADMIN_PASSWORD_HASH is not: the operator console is off (npm run -s admin:hash prints a hash)",
      }),
    );
    expect(service.output()).not.toContain(PASSWORD);
    // What the line says: / is the service's not_found, not a page.
    const home = await fetch(`http://127.0.0.1:${open.port}/`);
    expect([home.status, await home.json()]).toEqual([404, { error: "not_found" }]);
  });

  it("on PGlite with pages: the pages' directory and the data directory", async () => {
    const [site, data] = await Promise.all([buildTestSite(), dataDirForThisTest()]);
    cleanUpAfter(() => site.remove());
    const service = spawnService(serviceProcessEnv({ dataDir: data.dir, env: { STATIC_DIR: site.dir } }));
    const open = await waitForOpenLine(service);
    expect(open).toMatchObject({
      backend: "pglite",
      dataDir: data.dir,
      pages: site.dir,
      allowedOrigins: "same origin",
    });
    expect(open.msg).toMatch(
      new RegExp(
        `^The Nothing Store is open at http://localhost:\\d+: pages from ${site.dir}, bids in PGlite at ${data.dir}, operator console off`,
      ),
    );
    expect((await fetch(`http://127.0.0.1:${open.port}/`)).status).toBe(200);
  });
});
