/**
 * A consistent backup of the PGlite data directory (docs/deploying.md#backups-and-restore):
 *   npm run backup -- backup.tar.gz          # DATA_DIR as the service's (default ./data)
 * While the service runs (it holds the directory's lock) the service takes it: this sends it SIGUSR2
 * and moves the tarball it writes into DATA_DIR to the file named. With no service running this
 * takes the lock and dumps the directory itself. Either way the file is written 0600 and its entries
 * recorded 0600 (files) and 0700 (directories). PostgreSQL (DATABASE_URL) is pg_dump's.
 * A file inside DATA_DIR is refused: the next backup would carry it.
 * Exits 0 with the backup written, 2 for a mistake of the operator's, 1 when the backup failed.
 */
import { chmod, copyFile, readFile, realpath, rename, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { argv, env, exit } from "node:process";
import { DataDirLockedError, LOCK_FILE_NAME, processExists } from "../service/storage/dataDirLock.ts";
import {
  BACKUP_FAILED_FILE_NAME,
  BACKUP_FILE_NAME,
  backUpStoppedDataDir,
  RestoreRefusedError,
  refuseBackupInside,
} from "../service/storage/pgliteBackup.ts";
import { PRIVATE_FILE_MODE } from "../service/storage/privateFiles.ts";
import { IncompleteRestoreError } from "../service/storage/restoreLeftovers.ts";

/** How long the service may take; its dump of a directory of 100,000 bids took about a second. */
const SERVICE_TIMEOUT_MS = Number(env.BACKUP_TIMEOUT_MS) || 10 * 60_000;

function fail(code: 1 | 2, message: string): never {
  console.error(message);
  exit(code);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const target = argv[2];
if (!target || argv.length > 3) fail(2, "Usage: npm run backup -- <file>   (the PGlite directory is DATA_DIR)");
if (env.DATABASE_URL?.trim()) {
  fail(2, "DATABASE_URL is set: back PostgreSQL up with pg_dump (docs/deploying.md#backups-and-restore).");
}
const file = resolve(target);
const dataDir = resolve(env.DATA_DIR?.trim() || "data");
if (!(await exists(dataDir))) fail(2, `The data directory ${dataDir} does not exist (set DATA_DIR).`);
await refuseBackupInside(file, dataDir).catch((error: Error) => fail(2, error.message));

try {
  const figures = await backUpStoppedDataDir(dataDir, file);
  console.log(`Backed up ${dataDir} (no service running) to ${file}: ${figures.bytes} bytes in ${figures.totalMs} ms.`);
  exit(0);
} catch (error) {
  if (error instanceof RestoreRefusedError || error instanceof IncompleteRestoreError) fail(2, error.message);
  if (!(error instanceof DataDirLockedError)) fail(1, `The backup failed: ${(error as Error).message}`);
  await backUpThroughService(error);
}

/** The directory is locked: by a live service on this host, which takes the backup, or not ours to ask. */
async function backUpThroughService(locked: DataDirLockedError): Promise<never> {
  const dir = await realpath(dataDir);
  const owner = JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), "utf8").catch(() => "{}")) as {
    pid?: number;
    hostname?: string;
  };
  if (typeof owner.pid !== "number" || owner.hostname !== hostname() || !processExists(owner.pid)) {
    fail(2, `${locked.message} Run the backup where that process runs (in its container: podman exec).`);
  }
  const pid = owner.pid;
  const written = join(dir, BACKUP_FILE_NAME);
  const failed = join(dir, BACKUP_FAILED_FILE_NAME);
  await rm(written, { force: true });
  await rm(failed, { force: true });
  const started = performance.now();
  process.kill(pid, "SIGUSR2");
  for (;;) {
    if (await exists(written)) break;
    if (await exists(failed))
      fail(1, `The service (process ${pid}) could not back up: ${await readFile(failed, "utf8")}`);
    if (!processExists(pid)) fail(1, `The service (process ${pid}) exited before the backup was written.`);
    if (performance.now() - started > SERVICE_TIMEOUT_MS) {
      fail(
        1,
        `The service (process ${pid}) wrote no backup within ${SERVICE_TIMEOUT_MS / 1000} s (BACKUP_TIMEOUT_MS).`,
      );
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  const partial = `${file}.partial`;
  try {
    await copyFile(written, partial);
    // copyFile keeps the source's mode; a service older than this script may have written it 0644.
    await chmod(partial, PRIVATE_FILE_MODE);
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    fail(1, `The backup could not be written to ${file} (${(error as Error).message}); it is still at ${written}.`);
  }
  await rm(written, { force: true });
  const { size } = await stat(file);
  const ms = Math.round(performance.now() - started);
  console.log(`Backed up ${dir} through the running service (process ${pid}) to ${file}: ${size} bytes in ${ms} ms.`);
  exit(0);
}
