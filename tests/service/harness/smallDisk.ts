/**
 * A small tmpfs for tests of a full disk: mounted as root (CI runs the suite as root, as it runs
 * the container test), filled by a filler file until ENOSPC, freed by removing it.
 *
 *   const disk = await mountSmallDisk(64);           // 64 MiB at disk.dir
 *   await disk.fill(); ... await disk.free();
 *   await disk.unmount();                            // always (afterAll); safe to call twice
 *
 * A run that died before unmounting leaves its mount behind: the next mount removes those whose
 * process is gone (the mount point names its pid), never another live run's.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "../../../scripts/harness/childProcess.ts";

const MOUNT_PREFIX = "nothing-small-disk-";
const FILLER = "filler";

export interface SmallDisk {
  readonly dir: string;
  /** Writes the filler file until the file system has not one byte left. */
  fill(): void;
  /** Removes the filler file: the space it took is free again. */
  free(): Promise<void>;
  unmount(): Promise<void>;
}

function requireRoot(what: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(`${what} mounts a small tmpfs, which needs root; CI runs the service tests as root (.ci/run)`);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function unmountAt(dir: string): Promise<void> {
  // Lazily if still busy (a killed service's files): the memory is freed once the last file closes.
  await run("umount", [dir]).catch(() => run("umount", ["-l", dir]).catch(() => {}));
  await rm(dir, { recursive: true, force: true });
}

/** Unmounts what runs that are gone left behind. */
async function removeLeftovers(): Promise<void> {
  const mounts = await readFile("/proc/mounts", "utf8");
  for (const line of mounts.split("\n")) {
    const mountPoint = line.split(" ")[1] ?? "";
    const match = new RegExp(`/${MOUNT_PREFIX}(\\d+)-[^/]*$`).exec(mountPoint);
    if (match && !isRunning(Number(match[1]))) await unmountAt(mountPoint);
  }
}

/** Mounts a tmpfs of `sizeMiB`; `owner` makes its root theirs (PostgreSQL's user, for a tablespace). */
export async function mountSmallDisk(sizeMiB: number, owner?: { uid: number; gid: number }): Promise<SmallDisk> {
  requireRoot("This test");
  await removeLeftovers();
  const dir = join(tmpdir(), `${MOUNT_PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  await mkdir(dir, { recursive: true });
  const options = [`size=${sizeMiB}m`, "mode=0755", ...(owner ? [`uid=${owner.uid}`, `gid=${owner.gid}`] : [])];
  try {
    await run("mount", ["-t", "tmpfs", "-o", options.join(","), "tmpfs", dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not mount a ${sizeMiB} MiB tmpfs at ${dir} (root is not enough in some containers)`, {
      cause: error,
    });
  }
  let mounted = true;
  const filler = join(dir, FILLER);
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      try {
        // Big pieces, then pages: the last few kilobytes too. Bounded: every write takes space.
        for (const size of [1024 * 1024, 4096, 512]) {
          const piece = Buffer.alloc(size, 0x5a);
          for (let written = 0; written <= sizeMiB * 1024 * 1024; written += size) {
            try {
              writeSync(fd, piece);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async unmount() {
      if (!mounted) return;
      mounted = false;
      await unmountAt(dir);
    },
  };
}
