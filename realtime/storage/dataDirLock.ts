/**
 * An exclusive lock on a PGlite data directory, which PGlite does not lock itself (two processes
 * on one directory would corrupt it). A lock file created with O_EXCL records the owner's pid and
 * host. On the same host a lock whose process is gone is stale at once, so a crash never leaves
 * the directory locked; a lock from another host (a shared volume) is stale once its owner has
 * stopped refreshing it for HEARTBEAT_STALE_MS.
 */
import { unlinkSync } from "node:fs";
import { mkdir, readFile, realpath, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";

export const LOCK_FILE_NAME = "nothing-store.lock";
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_STALE_MS = 60_000;
// A lock file is created empty and then written; one that stays empty longer is from a crash.
const EMPTY_LOCK_STALE_MS = 5_000;

export class DataDirLockedError extends Error {
  override name = "DataDirLockedError";
}

export interface DataDirLock {
  readonly lockFile: string;
  release(): Promise<void>;
}

interface LockOwner {
  pid: number;
  hostname: string;
  since: string;
}

const heldByThisProcess = new Map<string, string>();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A process that exits without closing the store (an uncaught error) leaves no lock behind.
  process.once("exit", () => {
    for (const lockFile of heldByThisProcess.values()) {
      try {
        unlinkSync(lockFile);
      } catch {}
    }
  });
}

async function readOwner(lockFile: string): Promise<LockOwner | "vanished" | "unreadable"> {
  try {
    const owner = JSON.parse(await readFile(lockFile, "utf8")) as LockOwner;
    return typeof owner.pid === "number" && typeof owner.hostname === "string" ? owner : "unreadable";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "vanished" : "unreadable";
  }
}

/** Whether a process with this id runs on this machine (one we may not signal still runs). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function ageMs(lockFile: string): Promise<number> {
  try {
    return Date.now() - (await stat(lockFile)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Inode and change time of the lock file, or null if it is gone. */
async function identity(lockFile: string): Promise<string | null> {
  try {
    const { ino, ctimeNs } = await stat(lockFile, { bigint: true });
    return `${ino}:${ctimeNs}`;
  } catch {
    return null;
  }
}

async function isStale(lockFile: string, owner: LockOwner | "unreadable"): Promise<boolean> {
  if (owner === "unreadable") return (await ageMs(lockFile)) > EMPTY_LOCK_STALE_MS;
  if (owner.hostname !== hostname()) return (await ageMs(lockFile)) > HEARTBEAT_STALE_MS;
  // Our own pid on a lock this process does not hold: a previous life of a restarted container.
  if (owner.pid === process.pid) return true;
  return !processExists(owner.pid);
}

/**
 * Creates the directory and its parents. A recursive mkdir under a read-only mount fails ENOENT,
 * not EROFS (Node retries the parent and reports the last miss): then the first missing directory
 * is made alone, which fails with the real reason (EROFS, EACCES) for the start message to name.
 */
async function makeDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    let missing = dataDir;
    while (dirname(missing) !== missing && !(await exists(dirname(missing)))) missing = dirname(missing);
    await mkdir(missing);
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Takes the lock or throws DataDirLockedError naming the directory and its holder. Creates the directory. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await makeDataDir(dataDir);
  const dir = await realpath(dataDir);
  if (heldByThisProcess.has(dir)) {
    throw new DataDirLockedError(`The data directory ${dir} is already open in this process.`);
  }
  const lockFile = join(dir, LOCK_FILE_NAME);
  // Claimed before any await, so a second open in this process never mistakes our file for a stale one.
  heldByThisProcess.set(dir, lockFile);
  try {
    return await takeLockFile(dir, lockFile);
  } catch (error) {
    heldByThisProcess.delete(dir);
    throw error;
  }
}

async function takeLockFile(dir: string, lockFile: string): Promise<DataDirLock> {
  const me: LockOwner = { pid: process.pid, hostname: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(lockFile, JSON.stringify(me), { flag: "wx" });
      return hold(dir, lockFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    // The file judged below, by identity: another process may judge the same stale file, replace it
    // with its own fresh lock, and that one must not be unlinked (ctime too, as inodes are reused).
    const judged = await identity(lockFile);
    const owner = await readOwner(lockFile);
    if (owner === "vanished" || judged === null) continue;
    if (!(await isStale(lockFile, owner))) {
      const holder =
        owner === "unreadable" ? "another process" : `process ${owner.pid} on ${owner.hostname} since ${owner.since}`;
      throw new DataDirLockedError(
        `The data directory ${dir} is in use by ${holder} (lock file ${lockFile}). ` +
          "Stop that process or choose another DATA_DIR; two processes on one PGlite directory would corrupt it.",
      );
    }
    // Unlink only the file judged stale; if it was replaced, the next attempt judges the new one.
    // (The window between this check and the unlink is a few microseconds, not a whole judgement.)
    if ((await identity(lockFile)) === judged) await unlink(lockFile).catch(() => {});
  }
  throw new DataDirLockedError(
    `The data directory ${dir} could not be locked: its lock file ${lockFile} keeps changing.`,
  );
}

function hold(dir: string, lockFile: string): DataDirLock {
  installExitHook();
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockFile, now, now).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return {
    lockFile,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      heldByThisProcess.delete(dir);
      await unlink(lockFile).catch(() => {});
    },
  };
}
