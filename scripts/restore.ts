/**
 * Restores a PGlite backup (`npm run backup`) into an empty or new data directory
 * (docs/deploying.md#backups-and-restore):
 *   npm run restore -- backup.tar.gz /srv/nothing-store/data
 * Refuses, exit 2 naming the directory, one that a live process holds (its lock) or that has
 * anything in it; exit 1 when the tarball cannot be loaded. The directory gets no lock file and no
 * database until the restore is whole (PG_VERSION last), and is private (0700 directories, 0600
 * files) whatever the backup recorded. Start the service on it afterwards.
 */
import { resolve } from "node:path";
import { argv, exit } from "node:process";
import { DataDirLockedError } from "../service/storage/dataDirLock.ts";
import { RestoreRefusedError, restoreDataDir } from "../service/storage/pgliteBackup.ts";

const [file, target] = argv.slice(2);
if (!file || !target || argv.length > 4) {
  console.error("Usage: npm run restore -- <backup file> <empty or new DATA_DIR>");
  exit(2);
}
const started = performance.now();
try {
  const { bids, migrations } = await restoreDataDir(resolve(file), resolve(target));
  const ms = Math.round(performance.now() - started);
  console.log(
    `Restored ${resolve(file)} into ${resolve(target)}: ${bids} bids, ${migrations} migrations, in ${ms} ms.`,
  );
  exit(0);
} catch (error) {
  const refused =
    error instanceof DataDirLockedError ||
    error instanceof RestoreRefusedError ||
    (error as NodeJS.ErrnoException).code === "ENOENT";
  console.error(`${refused ? "Refusing to restore" : "The restore failed"}: ${(error as Error).message}`);
  exit(refused ? 2 : 1);
}
