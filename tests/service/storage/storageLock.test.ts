/**
 * PGlite does not lock its data directory; the store does (docs/design.md#3a): a second opener, in this
 * process or another, is refused with a message naming the directory, and the lock goes with its
 * holder, whether it closes or crashes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { killChild } from "../../../scripts/harness/childProcess.ts";
import { DataDirLockedError, LOCK_FILE_NAME, lockDataDir } from "../../../service/storage/dataDirLock.ts";
import { cleanUpAfter, NO_BIDS, openTestStore, storeForThisTest, storeTestOn, waitFor } from "../harness/stores.ts";

const OPEN_STORE_SCRIPT = fileURLToPath(new URL("../harness/openStoreProcess.ts", import.meta.url));
const CHILD_TIMEOUT_MS = 30_000;

const storeTest = storeTestOn("pglite");

/** Starts `node openStoreProcess.ts`; resolves with its first output line and the process. */
function openInAnotherProcess(dataDir: string, mode: "close" | "hold") {
  const child = spawn(process.execPath, [OPEN_STORE_SCRIPT, dataDir, mode], { stdio: ["ignore", "pipe", "pipe"] });
  cleanUpAfter(() => killChild(child));
  let output = "";
  let errors = "";
  child.stderr.on("data", (chunk) => {
    errors += chunk;
  });
  const firstLine = new Promise<{ opened?: boolean; error?: string; name?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from the child: ${errors}`)), CHILD_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      const newline = output.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(output.slice(0, newline)));
      }
    });
    // "close", not "exit": a child that prints and exits at once may exit before its line is read.
    child.once("close", (code) => {
      clearTimeout(timer);
      if (!output.includes("\n")) reject(new Error(`child exited with ${code}: ${errors}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, firstLine, exited };
}

describe("the PGlite data directory lock", () => {
  storeTest(
    "refuses a second open in the same process, naming the directory, until the first closes",
    async ({ location, store }) => {
      const dir = await realpath(location.dataDir);
      const second = openTestStore(location);
      await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(second).rejects.toThrow(`The data directory ${dir} is already open in this process.`);

      await store.close();
      expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
      const reopened = await storeForThisTest(location);
      expect(await reopened.view(1)).toMatchObject({ ...NO_BIDS, round: { number: 0 } });
    },
    60_000,
  );

  storeTest(
    "refuses another process with a clear message, and lets it in once closed",
    async ({ location, store }) => {
      const dir = await realpath(location.dataDir);
      const refused = openInAnotherProcess(location.dataDir, "close");
      const answer = await refused.firstLine;
      expect(answer.name).toBe("DataDirLockedError");
      expect(answer.error).toContain(`The data directory ${dir} is in use by process ${process.pid}`);
      expect(answer.error).toContain("choose another DATA_DIR");
      expect(await refused.exited).toBe(1);

      await store.placeBid("kept", 100);
      await store.close();
      const admitted = openInAnotherProcess(location.dataDir, "close");
      expect(await admitted.firstLine).toEqual({ opened: true });
      expect(await admitted.exited).toBe(0);
    },
    60_000,
  );

  storeTest(
    "does not outlive a holder that was killed",
    async ({ location }) => {
      const holder = openInAnotherProcess(location.dataDir, "hold");
      expect(await holder.firstLine).toEqual({ opened: true });
      await expect(openTestStore(location)).rejects.toThrow(/is in use by process \d+/);

      holder.child.kill("SIGKILL");
      await holder.exited;
      expect(existsSync(join(location.dataDir, LOCK_FILE_NAME))).toBe(true);
      const store = await storeForThisTest(location);
      await waitFor("the store to answer", async () => (await store.view(1)).bidders === 0);
    },
    60_000,
  );
});

/** A directory of its own, removed when the test ends. */
async function lockDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "nothing-lock-")));
  cleanUpAfter(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A process holding `dir` under another host name, touching its lock every `heartbeatMs`: a
 * container on the same volume, whose pid means nothing here. Resolves once it holds the lock.
 */
async function holdAsAnotherHost(dir: string, heartbeatMs: number) {
  const module = new URL("../../../service/storage/dataDirLock.ts", import.meta.url).href;
  const script = `const { lockDataDir } = await import(${JSON.stringify(module)});
    await lockDataDir(${JSON.stringify(dir)}, { hostname: "old-container", heartbeatMs: ${heartbeatMs} });
    console.log("held"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  cleanUpAfter(() => killChild(child));
  let errors = "";
  child.stderr.on("data", (chunk) => {
    errors += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk) => String(chunk).includes("held") && resolve());
    child.once("exit", (code) => reject(new Error(`the holder exited with ${code}: ${errors}`)));
  });
  return child;
}

const lockFileOf = (dir: string) => join(dir, LOCK_FILE_NAME);

describe("a lock held under another host name (a container recreated on the same volume)", () => {
  it("is refused while its holder beats, and taken 3 missed beats after the holder dies, not 60 s", async () => {
    const dir = await lockDir();
    const beat = 300;
    const holder = await holdAsAnotherHost(dir, beat);
    const owner = JSON.parse(await readFile(lockFileOf(dir), "utf8"));
    expect(owner).toMatchObject({ hostname: "old-container", heartbeatMs: beat });

    // Alive: the opener watches for a touch, sees one within a beat, and refuses.
    const started = Date.now();
    await expect(lockDataDir(dir)).rejects.toThrow(
      `is in use by process ${holder.pid} on old-container since ${owner.since}`,
    );
    expect(Date.now() - started).toBeLessThan(3 * beat + 2_000);

    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
    // Dead: its file stays, untouched; taken once 3 of its beats have passed without a touch.
    expect(existsSync(lockFileOf(dir))).toBe(true);
    const taking = Date.now();
    const lock = await lockDataDir(dir);
    cleanUpAfter(() => lock.release());
    expect(Date.now() - taking).toBeLessThan(3 * beat + 2_000);
    expect(JSON.parse(await readFile(lockFileOf(dir), "utf8"))).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
      heartbeatMs: 5_000,
    });
  }, 30_000);

  it("is refused while touched, however far behind the holder's clock runs (its mtimes an hour old)", async () => {
    const dir = await lockDir();
    const since = new Date().toISOString();
    await writeFile(lockFileOf(dir), JSON.stringify({ pid: 1, hostname: "old-container", since, heartbeatMs: 200 }));
    let holderClock = Date.now() - 3_600_000;
    const touch = () => {
      holderClock += 200;
      return utimes(lockFileOf(dir), new Date(holderClock), new Date(holderClock));
    };
    await touch();
    const beating = setInterval(() => void touch(), 200);
    try {
      await expect(lockDataDir(dir)).rejects.toThrow("is in use by process 1 on old-container");
    } finally {
      clearInterval(beating);
    }
  });

  it("is taken at once when untouched for 60 s and written by an older service (no interval recorded)", async () => {
    const dir = await lockDir();
    await writeFile(
      lockFileOf(dir),
      JSON.stringify({ pid: 1, hostname: "old-container", since: "2026-01-01T00:00:00Z" }),
    );
    const minuteAgo = new Date(Date.now() - 61_000);
    await utimes(lockFileOf(dir), minuteAgo, minuteAgo);
    const lock = await lockDataDir(dir);
    cleanUpAfter(() => lock.release());
    expect(JSON.parse(await readFile(lockFileOf(dir), "utf8"))).toMatchObject({ pid: process.pid });
  });

  it("tells its holder when another process took it (the holder stalled past its beats), and stops touching it", async () => {
    const dir = await lockDir();
    const lost: string[] = [];
    const lock = await lockDataDir(dir, { heartbeatMs: 100, onLost: (reason) => lost.push(reason) });
    cleanUpAfter(() => lock.release());
    const successor = { pid: 4242, hostname: "new-container", since: new Date().toISOString(), heartbeatMs: 5_000 };
    await writeFile(lockFileOf(dir), JSON.stringify(successor));
    const longAgo = new Date(Date.now() - 30_000);
    await utimes(lockFileOf(dir), longAgo, longAgo);
    await waitFor("the loss reported", () => lost.length === 1);
    expect(lost[0]).toContain("process 4242 on new-container took the lock file");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Never refreshed by the old holder, and never unlinked by its release.
    expect((await stat(lockFileOf(dir))).mtimeMs).toBe(longAgo.getTime());
    await lock.release();
    expect(JSON.parse(await readFile(lockFileOf(dir), "utf8"))).toMatchObject({ pid: 4242 });
  });
});
