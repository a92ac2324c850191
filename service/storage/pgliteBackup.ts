/**
 * Backups of a PGlite data directory (docs/deploying.md#backups-and-restore, decision
 * 2026-11-27-backups-and-restore). One process may open the directory, so a backup of a running
 * service is taken by the service: on SIGUSR2 it has PGlite write a tarball of its directory
 * between two queries (dumpDataDir, after a CHECKPOINT) and leaves it in the directory as
 * nothing-store-backup.tar.gz; `npm run backup` sends the signal and moves the file where it was
 * asked. With no service running the script takes the directory's lock and dumps it itself.
 * `npm run restore` is pgliteRestore.ts's. The lock file, earlier backups (the script refuses a
 * destination inside DATA_DIR), a restore's marker and staging directories never go into a tarball. A backup is
 * written 0600 and records every entry owner-only (0700 directories, 0600 files), whatever the
 * files' modes were; a restored directory is private (privateFiles.ts).
 */
import { randomUUID } from "node:crypto";
import { realpath, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger.ts";
import { LOCK_FILE_NAME, lockDataDir } from "./dataDirLock.ts";
import { openPglite } from "./pgliteDatabase.ts";
import { hasDatabase, STAGING_PREFIX } from "./pgliteTemplate.ts";
import { makePrivate, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./privateFiles.ts";
import { RESTORE_MARKER_NAME, refuseIncompleteRestore } from "./restoreLeftovers.ts";
import type { BidStore } from "./types.ts";

/** What the service writes into its data directory on SIGUSR2 (renamed into place when whole). */
export const BACKUP_FILE_NAME = "nothing-store-backup.tar.gz";
/** Written instead when the backup failed: the error's message. */
export const BACKUP_FAILED_FILE_NAME = "nothing-store-backup.failed";
const BACKUP_PREFIX = "nothing-store-backup";

/**
 * A backup or restore refused for the operator's mistake (exit 2): a target not empty, a file that
 * is not a PGlite backup, a backup into the directory it backs up.
 */
export class RestoreRefusedError extends Error {
  override name = "RestoreRefusedError";
}

const BLOCK = 512;
const decoder = new TextDecoder();

function field(header: Uint8Array, from: number, length: number): string {
  const bytes = header.subarray(from, from + length);
  const end = bytes.indexOf(0);
  return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** A tar entry's path, as the archive names it (ustar's prefix joined on). */
function entryName(header: Uint8Array): string {
  const name = field(header, 0, 100);
  const prefix = field(header, 257, 5) === "ustar" ? field(header, 345, 155) : "";
  return prefix ? `${prefix}/${name}` : name;
}

/** Files of the store's, not the database's: the lock, backups, a restore's marker, staging directories. */
function isServiceFile(name: string): boolean {
  const top = name.replace(/^(\.?\/)+/, "").split("/")[0] ?? "";
  return (
    top === LOCK_FILE_NAME ||
    top === RESTORE_MARKER_NAME ||
    top.startsWith(BACKUP_PREFIX) ||
    top.startsWith(STAGING_PREFIX)
  );
}

const MODE_FIELD = { from: 100, length: 8 };
const CHECKSUM_FIELD = { from: 148, length: 8 };
const TYPE_FLAG = 156;
const DIRECTORY_TYPE = "5".charCodeAt(0);

/** A copy of a tar header recording the entry owner-only, its checksum made again. */
function privateHeader(header: Uint8Array): Buffer {
  const copy = Buffer.from(header);
  const mode = copy[TYPE_FLAG] === DIRECTORY_TYPE ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
  copy.write(`${mode.toString(8).padStart(MODE_FIELD.length - 1, "0")}\0`, MODE_FIELD.from, "latin1");
  // The checksum is the sum of the header's bytes with its own field read as spaces.
  copy.fill(" ", CHECKSUM_FIELD.from, CHECKSUM_FIELD.from + CHECKSUM_FIELD.length);
  const sum = copy.reduce((total, byte) => total + byte, 0);
  copy.write(`${sum.toString(8).padStart(6, "0")}\0 `, CHECKSUM_FIELD.from, "latin1");
  return copy;
}

interface TarEntry {
  header: Uint8Array;
  name: string;
  /** The entry's header and content, padded to whole blocks. */
  bytes: Uint8Array;
}

/** The entries of an uncompressed tarball, up to its end blocks. */
function* tarEntries(tar: Uint8Array): Generator<TarEntry> {
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) return;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    if (!Number.isFinite(size)) throw new Error(`The tarball has an unreadable entry at byte ${offset}.`);
    const end = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    yield { header, name: entryName(header), bytes: tar.subarray(offset, end) };
    offset = end;
  }
}

/** The paths an uncompressed tarball names. */
export function tarEntryNames(tar: Uint8Array): string[] {
  return [...tarEntries(tar)].map((entry) => entry.name);
}

/**
 * The entries of an uncompressed tarball (PGlite's dumpDataDir("none")), the store's own files left
 * out and every entry recorded owner-only.
 */
export function privateDatabaseEntries(tar: Uint8Array): Buffer {
  const kept: Uint8Array[] = [];
  for (const { header, name, bytes } of tarEntries(tar)) {
    if (!isServiceFile(name)) kept.push(privateHeader(header), bytes.subarray(BLOCK));
  }
  kept.push(new Uint8Array(2 * BLOCK));
  return Buffer.concat(kept);
}

/** The directory's tarball, taken by PGlite between two queries after a CHECKPOINT. */
export async function dumpPglite(db: PGlite): Promise<Buffer> {
  await db.exec("CHECKPOINT");
  const tarball = await db.dumpDataDir("none");
  return privateDatabaseEntries(new Uint8Array(await tarball.arrayBuffer()));
}

/** `path` with its symbolic links and `..` resolved, as far as it exists (a file about to be written). */
async function realLocation(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dirname(absolute) === absolute) throw error;
    return join(await realLocation(dirname(absolute)), basename(absolute));
  }
}

/** Whether `path` is `dir` or below it, both real locations. */
export function isWithin(path: string, dir: string): boolean {
  const below = relative(dir, path);
  return below === "" || (below !== ".." && !below.startsWith(`..${sep}`) && !isAbsolute(below));
}

/**
 * Refuses a backup written inside the directory it backs up: the next backup would carry it (and
 * every one before it), each time larger.
 */
export async function refuseBackupInside(file: string, dataDir: string): Promise<void> {
  const [realFile, realDir] = await Promise.all([realLocation(file), realLocation(dataDir)]);
  if (isWithin(realFile, realDir)) {
    throw new RestoreRefusedError(
      `Refusing to back up into ${file}: it is inside the data directory ${realDir}` +
        `${realFile === resolve(file) ? "" : ` (as ${realFile})`}, so every later backup would carry it. ` +
        "Write the backup outside DATA_DIR.",
    );
  }
}

/** Writes `bytes` to `file` whole or not at all. */
async function writeWhole(file: string, bytes: Uint8Array): Promise<void> {
  const partial = `${file}.partial-${randomUUID()}`;
  try {
    await writeFile(partial, bytes, { mode: 0o600 });
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

export interface BackupFigures {
  file: string;
  bytes: number;
  /** The dump alone: how long the engine answered nothing else. */
  dumpMs: number;
  totalMs: number;
}

/** Gzips a store's dump into `file`. */
async function writeBackup(dump: () => Promise<Uint8Array>, file: string): Promise<BackupFigures> {
  const started = performance.now();
  const tar = await dump();
  const dumpMs = performance.now() - started;
  const compressed = await promisify(gzip)(tar);
  await writeWhole(file, compressed);
  return {
    file,
    bytes: compressed.length,
    dumpMs: Math.round(dumpMs),
    totalMs: Math.round(performance.now() - started),
  };
}

/**
 * The service's SIGUSR2: a backup of its PGlite directory into DATA_DIR/nothing-store-backup.tar.gz,
 * or the reason it failed into nothing-store-backup.failed. One at a time; none while stopping.
 */
export function backupOnSignal(options: {
  store: Promise<BidStore>;
  dataDir: string;
  logger: Logger;
  isStopping: () => boolean;
}): () => void {
  const { dataDir, logger } = options;
  let running = false;
  return () => {
    if (running || options.isStopping()) {
      logger.info({ signal: "SIGUSR2" }, running ? "a backup is running already" : "no backup while shutting down");
      return;
    }
    running = true;
    void (async () => {
      const failedFile = join(dataDir, BACKUP_FAILED_FILE_NAME);
      try {
        const store = await options.store;
        const dump = store.dumpDataDir?.bind(store);
        if (!dump) throw new Error("This service runs on PostgreSQL: back it up with pg_dump.");
        logger.info({ signal: "SIGUSR2" }, "backing up the PGlite data directory");
        await rm(failedFile, { force: true });
        const figures = await writeBackup(dump, join(dataDir, BACKUP_FILE_NAME));
        logger.info(figures, `backup written to ${figures.file} (${figures.bytes} bytes)`);
      } catch (error) {
        logger.error({ err: error }, "the backup failed");
        await writeWhole(failedFile, Buffer.from(error instanceof Error ? error.message : String(error))).catch(
          () => {},
        );
      } finally {
        running = false;
      }
    })();
  };
}

/** A backup of a directory no process has open, under its lock (the service cannot start meanwhile). */
export async function backUpStoppedDataDir(dataDir: string, file: string): Promise<BackupFigures> {
  const lock = await lockDataDir(dataDir);
  try {
    await refuseIncompleteRestore(dataDir);
    if (!(await hasDatabase(dataDir))) throw new RestoreRefusedError(`The data directory ${dataDir} has no database.`);
    const db = await openPglite(dataDir);
    try {
      return await writeBackup(() => dumpPglite(db), file);
    } finally {
      await db.close();
      // PGlite rewrote pg_internal.init (0644) as it opened.
      await makePrivate(dataDir);
    }
  } finally {
    await lock.release();
  }
}
