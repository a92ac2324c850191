/**
 * Everything in a PGlite data directory and in its backups is owner-only (decision
 * 2026-11-28-private-data-files): 0700 directories, 0600 files, whatever the process umask, the
 * template's modes, PGlite's own or what a backup recorded. Real files and real processes: a store
 * opened by a child under umask 000, `npm run backup` and `npm run restore` under umask 000.
 */
import { randomUUID } from "node:crypto";
import { chmod, lstat, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, inject, it } from "vitest";
import { openPgliteStore } from "../../../service/storage/pglite.ts";
import { entryCount, notPrivate, notPrivateInTarball, tarballEntries } from "../harness/fileModes.ts";
import { spawnCollected } from "../harness/serviceProcess.ts";
import { cleanUpAfter, createTestDataDir, testLogger, waitFor } from "../harness/stores.ts";

const OPEN_STORE_SCRIPT = fileURLToPath(new URL("../harness/openStoreProcess.ts", import.meta.url));
const CHILD_TIMEOUT_MS = 60_000;

/** `command …args` run by a shell with umask 000: every mode the program asks for, unmasked. */
function underUmaskZero(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnCollected("sh", ["-c", 'umask 000 && exec "$@"', "sh", command, ...args], env);
}

function scratchDir(): string {
  const dir = join(inject("storageTempRoot"), `private-${randomUUID()}`);
  cleanUpAfter(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** What an older service left: every file 0666, every directory 0777. */
async function loosen(dir: string): Promise<void> {
  for (const path of [dir, ...(await readdir(dir, { recursive: true })).map((entry) => join(dir, entry))]) {
    await chmod(path, (await lstat(path)).isDirectory() ? 0o777 : 0o666);
  }
}

async function migratedDataDir(): Promise<string> {
  const data = await createTestDataDir();
  cleanUpAfter(() => data.remove());
  return data.dir;
}

const BLOCK = 512;

/** A tarball whose entries record `mode` (a backup taken before the modes were rewritten), checksums made again. */
function recordingMode(tar: Buffer, fileMode: number, dirMode: number): Buffer {
  const copy = Buffer.from(tar);
  for (let offset = 0; offset + BLOCK <= copy.length; ) {
    const header = copy.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const mode = header[156] === "5".charCodeAt(0) ? dirMode : fileMode;
    header.write(`${mode.toString(8).padStart(7, "0")}\0`, 100, "latin1");
    header.fill(" ", 148, 156);
    header.write(
      `${header
        .reduce((sum, byte) => sum + byte, 0)
        .toString(8)
        .padStart(6, "0")}\0 `,
      148,
      "latin1",
    );
    const size = Number.parseInt(header.toString("latin1", 124, 136).replace(/\0.*$/, "").trim() || "0", 8);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return copy;
}

describe("the PGlite data directory", () => {
  it("made by a store under umask 000 holds nothing group or other may read or write, open and closed", async () => {
    // The shell really hands its child umask 000: the test would prove nothing otherwise.
    const probe = underUmaskZero(process.execPath, ["-e", "process.stdout.write(process.umask().toString(8))"]);
    expect(await probe.exited, probe.output()).toBe(0);
    expect(probe.stdout()).toBe("0");

    // A new directory and its parent, made by the child: the build's template copied, or initialised.
    const dataDir = join(scratchDir(), "data");
    const holding = underUmaskZero(process.execPath, [OPEN_STORE_SCRIPT, dataDir, "hold"]);
    await waitFor("the store open in the child", () => holding.stdout().includes("\n"), CHILD_TIMEOUT_MS);
    expect(JSON.parse(holding.stdout()), holding.output()).toEqual({ opened: true });
    expect(await notPrivate(dataDir)).toEqual([]);
    const entries = await entryCount(dataDir);
    expect(entries).toBeGreaterThan(900);
    holding.child.kill("SIGKILL");
    await holding.exited;

    // Opened again and closed: PGlite rewrites files as it opens and checkpoints as it closes.
    const reopened = underUmaskZero(process.execPath, [OPEN_STORE_SCRIPT, dataDir, "close"]);
    expect(await reopened.exited, reopened.output()).toBe(0);
    expect(await notPrivate(dataDir)).toEqual([]);
    console.info(`a new data directory under umask 000: ${entries} entries, none open to group or other`);
  });

  it("left with open modes is made private at start, in one log line naming the directory and the count", async () => {
    const dataDir = await migratedDataDir();
    await loosen(dataDir);
    const loose = (await notPrivate(dataDir)).length;
    expect(loose).toBe(await entryCount(dataDir));

    const lines: Record<string, unknown>[] = [];
    const store = await openPgliteStore({ dataDir, logger: testLogger((line) => lines.push(line)) });
    cleanUpAfter(() => store.close());
    const said = lines.filter((line) => "tightened" in line);
    expect(said).toEqual([
      expect.objectContaining({
        level: 40,
        dataDir,
        tightened: loose,
        notOurs: 0,
        msg: `tightened ${loose} entries of the data directory ${dataDir} to owner-only modes (0700 directories, 0600 files)`,
      }),
    ]);
    expect(await notPrivate(dataDir)).toEqual([]);
    await store.close();
    expect(await notPrivate(dataDir)).toEqual([]);

    // Private now: the next start has nothing to say.
    lines.length = 0;
    const again = await openPgliteStore({ dataDir, logger: testLogger((line) => lines.push(line)) });
    cleanUpAfter(() => again.close());
    await again.close();
    expect(lines.filter((line) => "tightened" in line)).toEqual([]);
    console.info(`a directory with open modes: ${loose} entries tightened at start, 0 left`);
  });
});

describe("a PGlite backup and its restore", () => {
  it("under umask 000, of a directory with open modes: the file 0600, its entries owner-only, the restore private", async () => {
    const dataDir = await migratedDataDir();
    await loosen(dataDir);
    const scratch = scratchDir();
    const file = join(scratch, "backup.tar.gz");
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" };
    await mkdir(scratch);
    const backup = underUmaskZero(process.execPath, ["scripts/backup.ts", file], env);
    expect(await backup.exited, backup.output()).toBe(0);
    expect(backup.output()).toContain("(no service running)");
    expect(((await stat(file)).mode & 0o7777).toString(8)).toBe("600");
    const entries = await tarballEntries(file);
    expect(entries.length).toBeGreaterThan(900);
    expect(await notPrivateInTarball(file)).toEqual([]);

    const restored = join(scratch, "restored", "data");
    const restore = underUmaskZero(process.execPath, ["scripts/restore.ts", file, restored]);
    expect(await restore.exited, restore.output()).toBe(0);
    expect(await notPrivate(restored)).toEqual([]);

    // A backup that recorded open modes (taken by an older service) restores private all the same.
    const older = join(scratch, "older.tar.gz");
    await writeFile(older, gzipSync(recordingMode(gunzipSync(await readFile(file)), 0o666, 0o777)));
    expect(await notPrivateInTarball(older)).toHaveLength(entries.length);
    const restoredOlder = join(scratch, "restored-older");
    const restoreOlder = underUmaskZero(process.execPath, ["scripts/restore.ts", older, restoredOlder]);
    expect(await restoreOlder.exited, restoreOlder.output()).toBe(0);
    expect(await notPrivate(restoredOlder)).toEqual([]);
    console.info(
      `a backup under umask 000 of a directory with every entry open: ${entries.length} entries, 0 open; restored private`,
    );
  });
});
