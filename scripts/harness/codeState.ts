/** What a results file records about the code measured: the commit, uncommitted files, package versions. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "./childProcess.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export async function packageVersion(name: string): Promise<string> {
  const text = await readFile(join(ROOT, "node_modules", name, "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * The commit measured and the files under `paths` (the code under test and the benchmark) that
 * differ from it: figures are only comparable between runs of the same code.
 */
export async function codeState(paths: string[]): Promise<{ commit: string; modified: string[] }> {
  const git = async (args: string[]) =>
    (await run("git", args, { cwd: ROOT, timeout: 10_000 }).catch(() => ({ stdout: "" }))).stdout;
  const commit = (await git(["rev-parse", "--short", "HEAD"])).trim() || "unknown";
  const status = await git(["status", "--porcelain", "--", ...paths]);
  return {
    commit,
    modified: status
      .split("\n")
      .filter(Boolean)
      .map((line) => line.slice(3)),
  };
}
