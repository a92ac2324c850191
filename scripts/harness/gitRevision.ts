/**
 * Another git revision of this repository beside the working tree, for benchmarks that measure it
 * against this tree in the same run (bench:web, bench:realtime `--baseline REV`).
 */
import { mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { errorMessage, run } from "./childProcess.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The short commit a revision (commit, tag, branch) names. */
export async function describeRevision(rev: string): Promise<string> {
  const { stdout } = await run("git", ["rev-parse", "--short", `${rev}^{commit}`], { cwd: ROOT });
  return stdout.trim();
}

/**
 * The files of `rev` in a temporary directory named after `prefix` (git archive: no work tree
 * registered, nothing in this checkout touched), sharing this tree's node_modules. The revision
 * must run with the packages installed here; the previous release does. The caller removes it.
 */
export async function checkoutRevision(rev: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  try {
    const archive = join(dir, ".revision.tar");
    await run("git", ["archive", "--format=tar", `--output=${archive}`, rev], { cwd: ROOT });
    await run("tar", ["-xf", archive, "-C", dir]);
    await rm(archive);
    await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    return dir;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not check out ${rev}: ${errorMessage(error)}`);
  }
}
