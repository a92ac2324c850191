/**
 * Debian's podman with a storage of its own in a temp directory, so a run neither reads nor fills
 * the machine's /var/lib/containers, and destroy() leaves nothing behind (images, layers, mounts).
 * A run that never got to destroy() (killed, or its hook timed out mid-build) is swept by the next:
 * each storage names the process that made it, and one whose process is gone is removed.
 *
 *   const podman = await privatePodman();
 *   await podman.run(["build", ...]);          // resolves with stdout and stderr, rejects with both
 *   await podman.destroy();                    // ends commands still running, unmounts, removes every
 *                                              // image, deletes the storage
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processExists } from "../../../service/storage/dataDirLock.ts";
import { run as runCommand } from "./repository.ts";

export interface Podman {
  /** The temp directory holding the storage (`root/`) and its run state (`run/`). */
  readonly dir: string;
  run(args: string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string }>;
  /** Safe to call twice. */
  destroy(): Promise<void>;
}

const STORAGE_PREFIX = "nothing-podman-";
const OWNER_FILE = "owner.pid";
export const STAND_IN_WORK_PREFIX = "nothing-base-";

export async function privatePodman(): Promise<Podman> {
  await sweepAbandonedStorages();
  const dir = await ownedTempDir(STORAGE_PREFIX);
  const global = ["--root", join(dir, "root"), "--runroot", join(dir, "run")];
  // Every command still running when destroy() begins (a build whose hook timed out) is ended
  // first: left running, it would write into the storage while it is removed.
  const running = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  const podman = async (args: string[], timeoutMs: number, signal?: AbortSignal) => {
    try {
      return await runCommand("podman", [...global, ...args], {
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        signal,
      });
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
    run(args, timeoutMs = 120_000) {
      const command = podman(args, timeoutMs, running.signal);
      inFlight.add(command);
      const forget = () => inFlight.delete(command);
      command.then(forget, forget);
      return command;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      running.abort();
      // Each settles once its process has exited (SIGTERM, podman's own cleanup).
      await Promise.allSettled([...inFlight]);
      await podman(["image", "unmount", "--all"], 120_000).catch(() => {});
      await podman(["rmi", "--all", "--force"], 120_000).catch(() => {});
      await removeStorage(dir);
    },
  };
}

/** Unmounts whatever is still mounted below `dir` (an overlay a failed podman left), then deletes it. */
async function removeStorage(dir: string): Promise<void> {
  const mounted = await mountsBelow(dir);
  // Deepest first; lazily, so a mount still busy is detached now and freed when its last user goes.
  for (const mountPoint of mounted.sort((a, b) => b.length - a.length)) {
    await runCommand("umount", ["--lazy", mountPoint]).catch(() => {});
  }
  const left = await mountsBelow(dir);
  // rm would fail half-way through a mount: say which instead.
  if (left.length > 0) throw new Error(`mounts left under ${dir} that umount could not remove:\n${left.join("\n")}`);
  await rm(dir, { recursive: true, force: true });
}

async function mountsBelow(dir: string): Promise<string[]> {
  const mountInfo = await readFile("/proc/self/mountinfo", "utf8");
  return mountInfo
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((mountPoint) => mountPoint === dir || mountPoint.startsWith(`${dir}/`));
}

/**
 * A new temp directory named `prefix…` that names this process as its owner: if the run dies before
 * removing it, the next privatePodman() does (the stand-in base's work directory is one too).
 */
export async function ownedTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(join(dir, OWNER_FILE), String(process.pid));
  return dir;
}

/** Removes the temp directories of earlier runs whose process is gone. */
async function sweepAbandonedStorages(): Promise<void> {
  const entries = await readdir(tmpdir());
  const ours = (entry: string) => entry.startsWith(STORAGE_PREFIX) || entry.startsWith(STAND_IN_WORK_PREFIX);
  for (const name of entries.filter(ours)) {
    const dir = join(tmpdir(), name);
    const owner = Number(await readFile(join(dir, OWNER_FILE), "utf8").catch(() => "0"));
    if (owner > 0 && processExists(owner)) continue;
    await removeStorage(dir).catch((error: unknown) => console.warn(`could not sweep ${dir}: ${String(error)}`));
  }
}
