/**
 * What the private-files tests look at (decision 2026-11-28-private-data-files): the entries of a
 * directory, or of a backup's tarball, whose mode is not owner-only (0700 directories, 0600 files).
 *
 *   expect(await notPrivate(dataDir)).toEqual([]);           // ["0666 base/5/1259", …] when it fails
 *   expect(await notPrivateInTarball(file)).toEqual([]);     // listed by GNU tar, which checks each header
 */
import { lstat, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { run } from "../../../scripts/harness/childProcess.ts";

/** Files and directories below `dir`, `dir` itself included, that are not 0600 or 0700: "mode path". */
export async function notPrivate(dir: string): Promise<string[]> {
  const paths = [dir, ...(await readdir(dir, { recursive: true })).map((entry) => join(dir, entry))];
  const found: string[] = [];
  for (const path of paths) {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) continue;
    const mode = stats.mode & 0o7777;
    if (mode !== (stats.isDirectory() ? 0o700 : 0o600)) {
      found.push(`${mode.toString(8).padStart(4, "0")} ${relative(dir, path) || "."}`);
    }
  }
  return found;
}

/** How many entries are below `dir`, `dir` itself included. */
export async function entryCount(dir: string): Promise<number> {
  return 1 + (await readdir(dir, { recursive: true })).length;
}

/** The entries of a gzipped tarball, as `tar -tv` shows them: "drwx------ /base", "-rw------- /PG_VERSION". */
export async function tarballEntries(file: string): Promise<string[]> {
  const { stdout } = await run("tar", ["-tvzf", file], { maxBuffer: 16 * 1024 * 1024 });
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const fields = line.split(/\s+/);
      return `${fields[0]} ${fields.slice(5).join(" ")}`;
    });
}

/** The entries of a gzipped tarball recorded with other modes than 0700 (directories) and 0600 (files). */
export async function notPrivateInTarball(file: string): Promise<string[]> {
  return (await tarballEntries(file)).filter(
    (entry) => !entry.startsWith("drwx------ ") && !entry.startsWith("-rw------- "),
  );
}
