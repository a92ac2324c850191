/**
 * What a restore cut short leaves (pgliteRestore.ts): a marker in DATA_DIR, written first and
 * removed last, and a staging directory beside it. A service, or a backup, that found either would
 * take an empty or unfinished directory for the store: they refuse it, naming the directory and
 * what to do (decision 2026-11-28-atomic-restore).
 */
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** In DATA_DIR while a restore into it is under way: written first, removed last. */
export const RESTORE_MARKER_NAME = "nothing-store-restore-incomplete";

/** The directory a restore into `dataDir` (its real path) stages in: beside it, so a rename moves it in. */
export function restoreStagingDir(realDataDir: string): string {
  return join(dirname(realDataDir), `.${basename(realDataDir)}.restoring`);
}

/** A data directory that a cut restore left: the service must not open it (startFailures.ts, exit 2). */
export class IncompleteRestoreError extends Error {
  override name = "IncompleteRestoreError";
  readonly dataDir: string;
  /** The marker or the staging directory found. */
  readonly leftover: string;
  constructor(dataDir: string, leftover: string) {
    super(
      `the data directory ${dataDir} is what a restore cut short left (${leftover}): ` +
        `run the restore again (npm run restore -- <backup file> ${dataDir}), or remove ${dataDir} ` +
        "and its leftover to start with an empty store",
    );
    this.dataDir = dataDir;
    this.leftover = leftover;
  }
}

export const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Throws IncompleteRestoreError if a restore into `dataDir` (locked by the caller) was cut short. */
export async function refuseIncompleteRestore(dataDir: string): Promise<void> {
  const dir = await realpath(dataDir);
  const marker = join(dir, RESTORE_MARKER_NAME);
  if (await exists(marker)) throw new IncompleteRestoreError(dir, `its marker ${marker}`);
  const staging = restoreStagingDir(dir);
  if (await exists(staging)) throw new IncompleteRestoreError(dir, `the staging directory ${staging}`);
}
