/**
 * `npm run restore` of a PGlite backup (docs/deploying.md#backups-and-restore, decision
 * 2026-11-28-atomic-restore). The tarball is unpacked into a staging directory beside DATA_DIR (same
 * file system), opened with PGlite to prove it is a store, made private, fsynced, and renamed into
 * DATA_DIR's place in one step. DATA_DIR's lock is held throughout, and a marker file is written
 * into DATA_DIR first and removed from the restored one last: a restore killed at any point leaves
 * DATA_DIR empty and marked, or the restored database complete (marked until the last step), and
 * never half a database under DATA_DIR's name. The service refuses, exit 2, a directory so marked
 * or one whose staging is still beside it; running the restore again clears both and succeeds.
 * Where DATA_DIR cannot be renamed (a mount point, a parent this user may not write) the files are
 * staged inside it and moved in with PG_VERSION last, the marker guarding the same way.
 */
import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { LOCK_FILE_NAME, lockDataDir } from "./dataDirLock.ts";
import { isWithin, privateDatabaseEntries, RestoreRefusedError, tarEntryNames } from "./pgliteBackup.ts";
import { moveInto, STAGING_PREFIX } from "./pgliteTemplate.ts";
import { makePrivate, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./privateFiles.ts";
import { exists, RESTORE_MARKER_NAME, restoreStagingDir } from "./restoreLeftovers.ts";

/** Where the directory a restore replaces goes for the moment between the two renames. */
function replacedDir(realDataDir: string): string {
  return join(dirname(realDataDir), `.${basename(realDataDir)}.replaced`);
}

const text = (bytes: Uint8Array, length: number) => Buffer.from(bytes.subarray(0, length)).toString("latin1");

/** Whether the first 512 bytes are a tar header whose checksum adds up. */
function startsWithTarHeader(bytes: Uint8Array): boolean {
  if (bytes.length < 512) return false;
  const recorded = Number.parseInt(text(bytes.subarray(148), 8).replace(/\0.*$/s, "").trim(), 8);
  let sum = 0;
  for (let index = 0; index < 512; index++) sum += index >= 148 && index < 156 ? 32 : (bytes[index] as number);
  return Number.isFinite(recorded) && recorded === sum;
}

const PG_RESTORE = "restore it with pg_restore into PostgreSQL (docs/deploying.md#backups-and-restore)";

/**
 * The uncompressed tarball of a PGlite backup in `bytes`, or RestoreRefusedError saying what the
 * file is instead (judged by its content: a pg_dump archive or script, another tarball, anything).
 */
async function pgliteTarball(file: string, bytes: Buffer): Promise<Buffer> {
  const notOne = (what: string) => new RestoreRefusedError(`${file} is not a PGlite backup (${what}).`);
  let tar = bytes;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    tar = await promisify(gunzip)(bytes).catch(() => {
      throw notOne("a gzip file that does not decompress: cut short or damaged");
    });
  }
  if (text(tar, 5) === "PGDMP") throw notOne(`it is a pg_dump custom-format archive: ${PG_RESTORE}`);
  const start = text(tar, 4_096);
  if (/^(--|SET |CREATE |\\)/.test(start) && start.includes("PostgreSQL database dump")) {
    throw notOne("it is a pg_dump SQL script: restore it with psql into PostgreSQL");
  }
  if (!startsWithTarHeader(tar)) {
    const head = [...tar.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
    throw notOne(`neither a tar archive nor a gzipped one; it begins ${head || "empty"}`);
  }
  const names = tarEntryNames(tar).map((name) => name.replace(/^(\.?\/)+/, ""));
  if (names.includes("toc.dat")) throw notOne(`it is a pg_dump tar-format archive (toc.dat): ${PG_RESTORE}`);
  if (!names.includes("PG_VERSION")) {
    throw notOne(`a tar archive without PG_VERSION, so no PostgreSQL data directory: ${names.length} entries`);
  }
  return tar;
}

/** How many fsyncs run at once: a thousand one after another took 1.4–4.1 s, 16 at a time 0.13–0.57 s. */
const SYNC_CONCURRENCY = 16;

/** fsyncs every file and directory under `root` (and `root`): what a rename then moves is on disk. */
async function syncTree(root: string): Promise<void> {
  const files: string[] = [];
  const dirs: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(path);
    }
    dirs.push(dir);
  }
  await walk(root);
  let next = 0;
  const worker = async () => {
    while (next < files.length) await syncPath(files[next++] as string);
  };
  await Promise.all(Array.from({ length: SYNC_CONCURRENCY }, worker));
  // Each directory after its entries, `root` last.
  for (const dir of dirs) await syncPath(dir);
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The steps a test may stop a restore after (scripts/restore.ts, RESTORE_TEST_KILL_AT). */
export type RestoreStep = "marked" | "unpacked" | "moved-aside" | "swapped";

export interface RestoreOptions {
  /** Called after each step, in order; a test kills the process there. */
  afterStep?: (step: RestoreStep) => void;
}

export interface RestoreFigures {
  bids: number;
  migrations: number;
  /** What a cut restore had left and this one cleared. */
  cleared: string[];
}

async function countsOf(db: PGlite, file: string): Promise<{ bids: number; migrations: number }> {
  try {
    const { rows } = await db.query<{ bids: number; migrations: number }>(
      "SELECT (SELECT count(*) FROM auction_bids)::int AS bids, (SELECT count(*) FROM schema_migrations)::int AS migrations",
    );
    return rows[0] ?? { bids: 0, migrations: 0 };
  } catch (error) {
    throw new RestoreRefusedError(`${file} is a PGlite backup but not of this store (${(error as Error).message}).`);
  }
}

/** Loads `tar` into `staging` (new or empty) with PGlite and counts what it holds. */
async function unpack(tar: Buffer, staging: string, file: string) {
  const db = await PGlite.create({
    dataDir: staging,
    loadDataDir: new Blob([new Uint8Array(privateDatabaseEntries(tar))], { type: "application/x-tar" }),
  });
  try {
    return await countsOf(db, file);
  } finally {
    await db.close();
  }
}

/** Whether `dir` can be renamed within its parent: not a mount point, in a parent this user writes. */
async function renamable(dir: string, staging: string): Promise<boolean> {
  if ((await stat(dir)).dev !== (await stat(dirname(dir))).dev) return false;
  try {
    await mkdir(staging, { mode: PRIVATE_DIR_MODE });
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") return false;
    throw error;
  }
}

/**
 * Restores the backup `file` into `dataDir`: empty, new, or what a cut restore left (marked), and
 * locked meanwhile. DataDirLockedError when a live process holds it, RestoreRefusedError when it
 * holds anything else, holds the backup, or the file is not a PGlite backup.
 */
export async function restoreDataDir(
  file: string,
  dataDir: string,
  options: RestoreOptions = {},
): Promise<RestoreFigures> {
  const step = options.afterStep ?? (() => {});
  const bytes = await readFile(file);
  const tar = await pgliteTarball(file, bytes);
  const lock = await lockDataDir(dataDir);
  try {
    const dir = await realpath(dataDir);
    const realFile = await realpath(file);
    if (isWithin(realFile, dir)) {
      throw new RestoreRefusedError(
        `the backup ${file} is inside the data directory ${dir} it would replace: move it out of ${dir} first.`,
      );
    }
    const entries = await readdir(dir);
    const marker = join(dir, RESTORE_MARKER_NAME);
    const cut = entries.includes(RESTORE_MARKER_NAME);
    const present = entries.filter((entry) => entry !== LOCK_FILE_NAME && !entry.startsWith(STAGING_PREFIX));
    if (!cut && present.length > 0) {
      throw new RestoreRefusedError(
        `The data directory ${dir} is not empty (${present.slice(0, 3).join(", ")}${present.length > 3 ? ", …" : ""}): ` +
          "restore only into an empty or new directory.",
      );
    }
    const staging = restoreStagingDir(dir);
    const replaced = replacedDir(dir);
    const cleared: string[] = [];
    if (cut) cleared.push(marker);
    for (const leftover of [staging, replaced]) {
      if (await exists(leftover)) {
        await rm(leftover, { recursive: true, force: true });
        cleared.push(leftover);
      }
    }
    // Before anything else is written: a service started from here on refuses the directory.
    await writeFile(marker, `${JSON.stringify({ file: realFile, pid: process.pid, since: new Date() })}\n`, {
      mode: PRIVATE_FILE_MODE,
    });
    await syncPath(marker);
    await syncPath(dir);
    step("marked");
    // What a cut restore left inside: its database files, or an earlier fallback's staging.
    for (const entry of entries) {
      if (entry !== LOCK_FILE_NAME && entry !== RESTORE_MARKER_NAME) {
        await rm(join(dir, entry), { recursive: true, force: true });
      }
    }
    if (!(await renamable(dir, staging))) return { ...(await restoreInPlace(tar, file, dir, step)), cleared };
    const counts = await unpack(tar, staging, file);
    // PGlite gives the files it loads and writes modes of its own (pg_internal.init 0644).
    await makePrivate(staging);
    await writeFile(join(staging, RESTORE_MARKER_NAME), "", { mode: PRIVATE_FILE_MODE });
    await syncTree(staging);
    step("unpacked");
    // The lock file goes aside with the empty directory; the restored one is marked until the end.
    await rename(dir, replaced);
    step("moved-aside");
    await rename(staging, dir);
    await syncPath(dirname(dir));
    step("swapped");
    await rm(join(dir, RESTORE_MARKER_NAME));
    await syncPath(dir);
    await rm(replaced, { recursive: true, force: true });
    return { ...counts, cleared };
  } finally {
    await lock.release();
  }
}

/** The fallback for a directory that cannot be renamed: staged inside it, moved in with PG_VERSION last. */
async function restoreInPlace(tar: Buffer, file: string, dir: string, step: (step: RestoreStep) => void) {
  const staging = join(dir, `${STAGING_PREFIX}${randomUUID()}`);
  await mkdir(staging, { mode: PRIVATE_DIR_MODE });
  try {
    const counts = await unpack(tar, staging, file);
    await makePrivate(staging);
    await syncTree(staging);
    step("unpacked");
    await moveInto(staging, dir);
    await makePrivate(dir);
    await syncTree(dir);
    step("swapped");
    await rm(join(dir, RESTORE_MARKER_NAME));
    await syncPath(dir);
    return counts;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
