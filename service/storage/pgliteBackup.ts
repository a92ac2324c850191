/**
 * Backups of a PGlite data directory (docs/deploying.md#backups-and-restore, decision
 * 2026-11-27-backups-and-restore). One process may open the directory, so a backup of a running
 * service is taken by the service: on SIGUSR2 it has PGlite write a tarball of its directory
 * between two queries (dumpDataDir, after a CHECKPOINT) and leaves it in the directory as
 * nothing-store-backup.tar.gz; `npm run backup` sends the signal and moves the file where it was
 * asked. With no service running the script takes the directory's lock and dumps it itself.
 * `npm run restore` loads a tarball into an empty or new directory only, under that directory's
 * lock, and moves the files into place with PG_VERSION last: a restore cut short leaves no database.
 * The lock file, earlier backups and staging directories never go into a tarball. A backup is
 * written 0600 and records every entry owner-only (0700 directories, 0600 files), whatever the
 * files' modes were; a restored directory is private (privateFiles.ts).
 */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger.ts";
import { LOCK_FILE_NAME, lockDataDir } from "./dataDirLock.ts";
import { openPglite } from "./pgliteDatabase.ts";
import { hasDatabase, moveInto, STAGING_PREFIX } from "./pgliteTemplate.ts";
import { makePrivate, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./privateFiles.ts";
import type { BidStore } from "./types.ts";

/** What the service writes into its data directory on SIGUSR2 (renamed into place when whole). */
export const BACKUP_FILE_NAME = "nothing-store-backup.tar.gz";
/** Written instead when the backup failed: the error's message. */
export const BACKUP_FAILED_FILE_NAME = "nothing-store-backup.failed";
const BACKUP_PREFIX = "nothing-store-backup";

/** Thrown when a restore's target is not empty: the operator chose the wrong directory. */
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

/** Files of the store's, not the database's: the lock, backups, staging directories. */
function isServiceFile(name: string): boolean {
  const top = name.replace(/^(\.?\/)+/, "").split("/")[0] ?? "";
  return top === LOCK_FILE_NAME || top.startsWith(BACKUP_PREFIX) || top.startsWith(STAGING_PREFIX);
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

/**
 * The entries of an uncompressed tarball (PGlite's dumpDataDir("none")), the store's own files left
 * out and every entry recorded owner-only.
 */
function privateDatabaseEntries(tar: Uint8Array): Buffer {
  const kept: Uint8Array[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    if (!Number.isFinite(size)) throw new Error(`The tarball has an unreadable entry at byte ${offset}.`);
    const end = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (!isServiceFile(entryName(header))) kept.push(privateHeader(header), tar.subarray(offset + BLOCK, end));
    offset = end;
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

/**
 * Loads the tarball `file` (gzipped or not) into `dataDir`, which must be empty or absent and is
 * locked meanwhile: DataDirLockedError when a live process holds it, RestoreRefusedError when it
 * has anything in it. Says how many bids the restored directory holds.
 */
export async function restoreDataDir(file: string, dataDir: string): Promise<{ bids: number; migrations: number }> {
  const tarball = await readFile(file);
  const lock = await lockDataDir(dataDir);
  try {
    const entries = await readdir(dataDir);
    const present = entries.filter((entry) => entry !== LOCK_FILE_NAME && !entry.startsWith(STAGING_PREFIX));
    if (present.length > 0) {
      throw new RestoreRefusedError(
        `The data directory ${dataDir} is not empty (${present.slice(0, 3).join(", ")}${present.length > 3 ? ", …" : ""}): ` +
          "restore only into an empty or new directory.",
      );
    }
    // What an interrupted restore or first start left.
    for (const entry of entries) {
      if (entry.startsWith(STAGING_PREFIX)) await rm(join(dataDir, entry), { recursive: true, force: true });
    }
    const tar = tarball[0] === 0x1f && tarball[1] === 0x8b ? await promisify(gunzip)(tarball) : tarball;
    const staging = join(dataDir, `${STAGING_PREFIX}${randomUUID()}`);
    await mkdir(staging, { mode: PRIVATE_DIR_MODE });
    try {
      const db = await PGlite.create({
        dataDir: staging,
        loadDataDir: new Blob([new Uint8Array(privateDatabaseEntries(tar))], { type: "application/x-tar" }),
      });
      let counts: { bids: number; migrations: number };
      try {
        const { rows } = await db.query<{ bids: number; migrations: number }>(
          "SELECT (SELECT count(*) FROM auction_bids)::int AS bids, (SELECT count(*) FROM schema_migrations)::int AS migrations",
        );
        counts = rows[0] ?? { bids: 0, migrations: 0 };
      } finally {
        await db.close();
      }
      // PGlite gives the files it loads and writes modes of its own (pg_internal.init 0644).
      await makePrivate(staging);
      await moveInto(staging, dataDir);
      // The directory itself, if it existed before.
      await makePrivate(dataDir);
      return counts;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    await lock.release();
  }
}
