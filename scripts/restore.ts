/**
 * Restores a PGlite backup (`npm run backup`) into an empty or new data directory
 * (docs/deploying.md#backups-and-restore, decision 2026-11-28-atomic-restore):
 *   npm run restore -- backup.tar.gz /srv/nothing-store/data
 * Refuses, exit 2 naming the directory, one that a live process holds (its lock), one that has
 * anything in it, one that holds the backup, and a file that is not a PGlite backup (saying what it
 * is); exit 1 when the restore failed otherwise. The backup is unpacked beside the directory and
 * renamed into its place when whole (pgliteRestore.ts): a restore cut short leaves a directory the
 * service refuses, and running this again finishes it. Start the service on it afterwards.
 */
import { resolve } from "node:path";
import { argv, env, exit } from "node:process";
import { DataDirLockedError } from "../service/storage/dataDirLock.ts";
import { RestoreRefusedError } from "../service/storage/pgliteBackup.ts";
import { type RestoreStep, restoreDataDir } from "../service/storage/pgliteRestore.ts";

const [file, target] = argv.slice(2);
if (!file || !target || argv.length > 4) {
  console.error("Usage: npm run restore -- <backup file> <empty or new DATA_DIR>");
  exit(2);
}
// Tests only: the step after which this process kills itself, as an operator's kill -9 would.
const killAt = env.RESTORE_TEST_KILL_AT as RestoreStep | undefined;
const started = performance.now();
try {
  const { bids, migrations, cleared } = await restoreDataDir(resolve(file), resolve(target), {
    afterStep: (step) => {
      if (step === killAt) process.kill(process.pid, "SIGKILL");
    },
  });
  const ms = Math.round(performance.now() - started);
  if (cleared.length > 0) console.log(`Cleared what a restore cut short left: ${cleared.join(", ")}.`);
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
