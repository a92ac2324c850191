/**
 * Owner-only modes for everything in a PGlite data directory (decision 2026-11-28-private-data-files):
 * 0700 for directories, 0600 for files. The tables hold bidders' names and payments, and a backup
 * records each file's mode: a file others may read on the server is one others may read wherever a
 * backup is restored.
 *
 * The store sets the modes itself rather than relying on a process umask, because PGlite does not
 * follow the process's: its file system applies an umask of its own (022), and the directories its
 * initdb makes hold 969 files of mode 0666 under a process umask of 077 just as under 000 (measured
 * with PGlite 0.5.16). It rewrites pg_internal.init 0644 every time it opens a directory. So the store
 * walks the directory after each step in which PGlite writes (a new or restored directory, an open,
 * a close) and before any backup of it; the files the store writes itself are created 0600.
 */
import { chmod, lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export interface Tightened {
  /** Entries whose mode was changed. */
  tightened: number;
  /** Entries of another user's that this one may not change (EPERM): left as they are. */
  notOurs: number;
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/**
 * Sets `root` and everything under it to 0700 (directories) and 0600 (files); symbolic links are
 * neither followed nor changed. Entries that vanish meanwhile (PGlite's temporary files) are skipped.
 */
export async function makePrivate(root: string): Promise<Tightened> {
  const counts: Tightened = { tightened: 0, notOurs: 0 };
  async function visit(path: string): Promise<void> {
    let isDirectory: boolean;
    try {
      const stats = await lstat(path);
      if (stats.isSymbolicLink()) return;
      isDirectory = stats.isDirectory();
      const wanted = isDirectory ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
      if ((stats.mode & 0o7777) !== wanted) {
        await chmod(path, wanted);
        counts.tightened++;
      }
    } catch (error) {
      if (code(error) === "ENOENT") return;
      if (code(error) !== "EPERM") throw error;
      counts.notOurs++;
      return;
    }
    if (!isDirectory) return;
    const entries = await readdir(path).catch((error: unknown) => {
      if (code(error) === "ENOENT") return [];
      throw error;
    });
    await Promise.all(entries.map((entry) => visit(join(path, entry))));
  }
  await visit(root);
  return counts;
}
