/**
 * Debian's podman with a storage of its own in a temp directory, so a run neither reads nor fills
 * the machine's /var/lib/containers, and destroy() leaves nothing behind (images, layers, mounts).
 *
 *   const podman = await privatePodman();
 *   await podman.run(["build", ...]);          // resolves with stdout and stderr, rejects with both
 *   await podman.destroy();                    // unmounts, removes every image, deletes the storage
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run as runCommand } from "./repository.ts";

export interface Podman {
  /** The temp directory holding the storage (`root/`) and its run state (`run/`). */
  readonly dir: string;
  run(args: string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string }>;
  /** Safe to call twice. */
  destroy(): Promise<void>;
}

export async function privatePodman(): Promise<Podman> {
  const dir = await mkdtemp(join(tmpdir(), "nothing-podman-"));
  const global = ["--root", join(dir, "root"), "--runroot", join(dir, "run")];
  const run = async (args: string[], timeoutMs = 120_000) => {
    try {
      return await runCommand("podman", [...global, ...args], { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
      throw new Error(`podman ${args[0]} failed: ${String(stderr).slice(-4000) || String(stdout).slice(-4000)}`, {
        cause: error,
      });
    }
  };
  let destroyed = false;
  return {
    dir,
    run,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await run(["image", "unmount", "--all"]).catch(() => {});
      await run(["rmi", "--all", "--force"]).catch(() => {});
      // An overlay still mounted below the storage would make rm fail half-way: say which.
      const mounts = await readFile("/proc/self/mountinfo", "utf8");
      const left = mounts.split("\n").filter((line) => line.split(" ")[4]?.startsWith(dir));
      if (left.length > 0) throw new Error(`podman left mounts under ${dir}:\n${left.join("\n")}`);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
