/**
 * An exclusive lock on a PGlite data directory, which PGlite does not lock itself (two processes
 * on one directory would corrupt it). A lock file created with O_EXCL records the owner's pid,
 * host and heartbeat interval. On the same host a lock whose process is gone is stale at once, so a
 * crash never leaves the directory locked. A lock from another host (a shared volume, or the same
 * volume under a container recreated with a new host name, where the pid says nothing) is judged by
 * its heartbeat: its holder touches it every HEARTBEAT_MS, so an opener watches it, and a lock not
 * touched for MISSED_BEATS of its holder's beats is stale, one touched meanwhile is live; whatever
 * the mtime says, the opener watches 2 beats itself, on its own clock, so skew between hosts cannot
 * make a live lock look stale. A holder that finds its file replaced (its event loop stalled past
 * the window) stops touching it and reports the loss, so two live processes never both write the
 * directory for longer than one beat.
 * Lock files written before the interval was recorded keep the old rule: stale after
 * LEGACY_STALE_MS without a touch.
 */
import { unlinkSync } from "node:fs";
import { mkdir, readFile, realpath, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./privateFiles.ts";

export const LOCK_FILE_NAME = "nothing-store.lock";
/** How often a holder touches its lock file. */
export const HEARTBEAT_MS = 5_000;
/** A lock from another host is stale once this many of its holder's beats passed without a touch: 15 s. */
const MISSED_BEATS = 3;
/** A lock file without a recorded interval (an older service): stale after 60 s without a touch. */
const LEGACY_STALE_MS = 60_000;
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
  /** How often the holder touches the file; absent in the files of older services. */
  heartbeatMs?: number;
}

export interface LockOptions {
  /** This machine's name (tests stand in another). */
  hostname?: string;
  /** The interval this holder touches its file at, recorded in it. */
  heartbeatMs?: number;
  /** Called once if another process replaced the lock file while this one held it. */
  onLost?: (reason: string) => void;
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

/** The holder's recorded interval, if it is a usable one (at most the legacy window). */
function beatOf(owner: LockOwner): number | undefined {
  const beat = owner.heartbeatMs;
  return typeof beat === "number" && Number.isFinite(beat) && beat > 0 ? Math.min(beat, LEGACY_STALE_MS) : undefined;
}

/** How long a lock of `owner` from another host may go untouched while its holder lives. */
function staleAfterMs(owner: LockOwner): number {
  const beat = beatOf(owner);
  return beat === undefined ? LEGACY_STALE_MS : Math.min(beat * MISSED_BEATS, LEGACY_STALE_MS);
}

async function mtimeMs(lockFile: string): Promise<number | null> {
  try {
    return (await stat(lockFile)).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * Watches a lock from another host for up to its window, less the time it has already gone
 * untouched by the mtime: stale if no touch came, live if one did (or the file changed or went).
 * The mtime is the holder's clock, which may run behind ours: however old it looks, a lock whose
 * interval is recorded is watched for 2 of its beats at least, which a live holder always touches.
 */
async function untouchedForItsWindow(lockFile: string, owner: LockOwner): Promise<boolean> {
  const window = staleAfterMs(owner);
  const first = await mtimeMs(lockFile);
  if (first === null) return false;
  const untouched = Math.max(0, Date.now() - first);
  const beat = beatOf(owner);
  if (beat === undefined && untouched > window) return true;
  const deadline = Date.now() + Math.max(window - untouched, 2 * (beat ?? 0));
  const step = Math.max(10, Math.min(1_000, (beat ?? 1_000) / 5));
  while (Date.now() < deadline) {
    await delay(Math.min(step, Math.max(0, deadline - Date.now())));
    if ((await mtimeMs(lockFile)) !== first) return false;
  }
  return true;
}

async function isStale(lockFile: string, owner: LockOwner | "unreadable", host: string): Promise<boolean> {
  if (owner === "unreadable") return (await ageMs(lockFile)) > EMPTY_LOCK_STALE_MS;
  if (owner.hostname !== host) return untouchedForItsWindow(lockFile, owner);
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
    // Private whatever the umask (privateFiles.ts); so are the parents it makes, which hold nothing else.
    await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
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
export async function lockDataDir(dataDir: string, options: LockOptions = {}): Promise<DataDirLock> {
  await makeDataDir(dataDir);
  const dir = await realpath(dataDir);
  if (heldByThisProcess.has(dir)) {
    throw new DataDirLockedError(`The data directory ${dir} is already open in this process.`);
  }
  const lockFile = join(dir, LOCK_FILE_NAME);
  // Claimed before any await, so a second open in this process never mistakes our file for a stale one.
  heldByThisProcess.set(dir, lockFile);
  try {
    return await takeLockFile(dir, lockFile, options);
  } catch (error) {
    heldByThisProcess.delete(dir);
    throw error;
  }
}

async function takeLockFile(dir: string, lockFile: string, options: LockOptions): Promise<DataDirLock> {
  const host = options.hostname ?? hostname();
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const me: LockOwner = { pid: process.pid, hostname: host, since: new Date().toISOString(), heartbeatMs };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(lockFile, JSON.stringify(me), { flag: "wx", mode: PRIVATE_FILE_MODE });
      return hold(dir, lockFile, me, options.onLost);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    // The file judged below, by identity: another process may judge the same stale file, replace it
    // with its own fresh lock, and that one must not be unlinked (ctime too, as inodes are reused).
    const judged = await identity(lockFile);
    const owner = await readOwner(lockFile);
    if (owner === "vanished" || judged === null) continue;
    if (!(await isStale(lockFile, owner, host))) {
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

function hold(
  dir: string,
  lockFile: string,
  me: LockOwner,
  onLost: ((reason: string) => void) | undefined,
): DataDirLock {
  installExitHook();
  const isMine = (owner: Awaited<ReturnType<typeof readOwner>>) =>
    typeof owner === "object" && owner.pid === me.pid && owner.hostname === me.hostname && owner.since === me.since;
  let released = false;
  /** Another process's file now: never unlinked by this one. */
  let lost = false;
  // Touch the file only while it still names this holder: refreshing a successor's would hide the loss.
  const heartbeat = setInterval(async () => {
    const now = new Date();
    const owner = await readOwner(lockFile);
    if (isMine(owner) || owner === "unreadable") {
      await utimes(lockFile, now, now).catch(() => {});
      return;
    }
    clearInterval(heartbeat);
    if (released) return;
    lost = true;
    heldByThisProcess.delete(dir);
    onLost?.(
      owner === "vanished"
        ? `the lock file ${lockFile} was removed while this process held it`
        : `process ${owner.pid} on ${owner.hostname} took the lock file ${lockFile} while this process held it (its heartbeat stalled past ${MISSED_BEATS} beats)`,
    );
  }, me.heartbeatMs);
  heartbeat.unref();
  return {
    lockFile,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      heldByThisProcess.delete(dir);
      if (lost) return;
      // The directory may have been renamed away meanwhile (a restore swaps it): whatever lock file
      // its path holds now is another's.
      if (isMine(await readOwner(lockFile))) await unlink(lockFile).catch(() => {});
    },
  };
}
