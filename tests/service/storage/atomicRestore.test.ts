/**
 * Restores and backups that cannot go wrong quietly (decision 2026-11-28-atomic-restore, issue 46):
 * `npm run restore` killed after each of its steps leaves a directory the service refuses (exit 2,
 * naming it and what to do) instead of starting an empty store on it, and the restore run again
 * clears what was left and finishes; a backup into its own DATA_DIR, even through a symbolic link
 * and `..`, is refused naming both paths; a pg_dump file, gzipped or not, and a tarball without a
 * data directory are refused as "not a PGlite backup", saying what they are. Real processes: the
 * scripts, the service, pg_dump against the run's PostgreSQL.
 */
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { run, withTimeout } from "../../../scripts/harness/childProcess.ts";
import { hasDatabase } from "../../../service/storage/pgliteTemplate.ts";
import { RESTORE_MARKER_NAME, restoreStagingDir } from "../../../service/storage/restoreLeftovers.ts";
import { SERVICE_TEST_MS, scaled } from "../../harness/timeBudgets.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { serviceProcessEnv, spawnCollected, spawnService, startServiceProcess } from "../harness/serviceProcess.ts";
import {
  cleanUpAfter,
  createTestLocation,
  locationForThisTest,
  openTestStore,
  type TestLocation,
} from "../harness/stores.ts";

const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? "/usr/lib/postgresql/15/bin";
const BIDS = [
  ["Alice", 100],
  ["Bob", 200],
  ["Carol", 300],
] as const;

/** `node <script> …args` with `env`, its exit code (null when a signal ended it), signal and output. */
async function runScript(script: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawnCollected(process.execPath, [script, ...args], env);
  const code = await withTimeout(child.exited, scaled(60_000), `${script} exiting`);
  return { code, signal: child.child.signalCode, output: child.output() };
}

/** A directory of the test's own under the run's temp root. */
async function testDir(name: string): Promise<string> {
  const dir = join(inject("storageTempRoot"), `restore-${name}-${process.pid}-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  return realpath(dir);
}

let source: TestLocation;
/** A backup of a stopped store with BIDS, by `npm run backup`'s script. */
let backupFile: string;

beforeAll(async () => {
  source = await createTestLocation("pglite");
  const store = await openTestStore(source);
  for (const [name, amount] of BIDS) expect((await store.placeBid(name, amount)).accepted).toBe(true);
  await store.close();
  backupFile = join(await testDir("backups"), "nothing.tar.gz");
  // execFile, not runScript: a hook has no test to kill its child after.
  await run(process.execPath, ["scripts/backup.ts", backupFile], {
    env: { ...process.env, DATA_DIR: source.dataDir, DATABASE_URL: "" },
  });
}, SERVICE_TEST_MS);

afterAll(() => source?.remove());

describe("a restore killed part-way", () => {
  it.each(["marked", "unpacked", "moved-aside", "swapped"] as const)(
    "after %s: the service exits 2 naming the directory; the restore run again finishes and the service has the bids",
    async (step) => {
      const dataDir = join(await testDir(`cut-${step}`), "data");
      const cut = await runScript("scripts/restore.ts", [backupFile, dataDir], {
        ...process.env,
        RESTORE_TEST_KILL_AT: step,
      });
      expect([cut.code, cut.signal], cut.output).toEqual([null, "SIGKILL"]);
      // Never a database under DATA_DIR's name without the marker that says it is unfinished.
      const marked = (await readdir(dataDir).catch((): string[] => [])).includes(RESTORE_MARKER_NAME);
      expect(marked || !(await hasDatabase(dataDir))).toBe(true);

      const refused = spawnService(serviceProcessEnv({ dataDir }));
      expect(await withTimeout(refused.exited, scaled(60_000), "the refused service exiting"), refused.output()).toBe(
        2,
      );
      const leftover = marked ? `its marker ${join(dataDir, RESTORE_MARKER_NAME)}` : restoreStagingDir(dataDir);
      expect(refused.output()).toContain(
        `refusing to start: the data directory ${dataDir} is what a restore cut short left (`,
      );
      expect(refused.output()).toContain(leftover);
      expect(refused.output()).toContain(`run the restore again (npm run restore -- <backup file> ${dataDir})`);
      expect(refused.output()).not.toContain(" is open at ");
      // The refusal wrote no database of its own there.
      if (!marked) expect(await hasDatabase(dataDir)).toBe(false);

      const again = await runScript("scripts/restore.ts", [backupFile, dataDir]);
      expect(again.code, again.output).toBe(0);
      expect(again.output).toContain("Cleared what a restore cut short left");
      expect(again.output).toContain(`: ${BIDS.length} bids,`);
      expect(await readdir(dirname(dataDir))).toEqual(["data"]);
      expect(await readdir(dataDir)).not.toContain(RESTORE_MARKER_NAME);

      const service = await startServiceProcess({ databaseUrl: "", dataDir });
      cleanUpAfter(() => service.stop());
      const client = await connectClient(service.socketUrl);
      cleanUpAfter(() => client.close());
      const opening = await client.opening();
      const shown = opening.bids.map((bid) => [bid.bidderName, bid.amountCents]);
      expect(shown.sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual(BIDS.map((bid) => [...bid]));
      console.info(`after ${step}: ${cut.output.trim()} | ${again.output.trim()}`);
    },
    SERVICE_TEST_MS,
  );
});

describe("refusals by name", () => {
  it("a backup into its own DATA_DIR, also through a symbolic link and `..`, exits 2 naming both paths", async () => {
    const location = await locationForThisTest("pglite");
    const dataDir = await realpath(location.dataDir);
    const outside = await testDir("alias");
    await symlink(dataDir, join(outside, "alias"));
    const env = { ...process.env, DATA_DIR: location.dataDir, DATABASE_URL: "" };
    for (const file of [join(dataDir, "inside.tar.gz"), join(outside, "alias", "sub", "..", "inside.tar.gz")]) {
      const backup = await runScript("scripts/backup.ts", [file], env);
      expect(backup.code, backup.output).toBe(2);
      expect(backup.output).toContain(`Refusing to back up into ${file}: it is inside the data directory ${dataDir}`);
      expect(backup.output).toContain("Write the backup outside DATA_DIR.");
    }
    expect((await readdir(dataDir)).filter((entry) => entry.endsWith(".tar.gz"))).toEqual([]);
  });

  it("a restore of the backup into the directory that holds it exits 2", async () => {
    const dataDir = await testDir("holds-backup");
    const inside = join(dataDir, "nothing.tar.gz");
    await writeFile(inside, await readFile(backupFile));
    const restore = await runScript("scripts/restore.ts", [inside, dataDir]);
    expect(restore.code, restore.output).toBe(2);
    expect(restore.output).toContain(
      `Refusing to restore: the backup ${inside} is inside the data directory ${dataDir} it would replace`,
    );
    expect(await readdir(dataDir)).toEqual(["nothing.tar.gz"]);
  });

  it("pg_dump files and other tarballs exit 2: not a PGlite backup, saying what they are", async () => {
    const location = await locationForThisTest("postgres");
    await (await openTestStore(location)).close();
    const dir = await testDir("not-backups");
    const custom = join(dir, "nothing.dump");
    const script = join(dir, "nothing.sql");
    await run(join(POSTGRES_BIN_DIR, "pg_dump"), [
      "--format=custom",
      `--file=${custom}`,
      location.databaseUrl as string,
    ]);
    await run(join(POSTGRES_BIN_DIR, "pg_dump"), [`--file=${script}`, location.databaseUrl as string]);
    // Named like a PGlite backup: the content decides, not the name.
    const gzipped = join(dir, "nothing-backup.tar.gz");
    await writeFile(gzipped, gzipSync(await readFile(custom)));
    await writeFile(join(dir, "notes.txt"), "not a database");
    const otherTar = join(dir, "notes.tar");
    await run("tar", ["-cf", otherTar, "-C", dir, "notes.txt"]);
    const cases = [
      [custom, "it is a pg_dump custom-format archive: restore it with pg_restore into PostgreSQL"],
      [gzipped, "it is a pg_dump custom-format archive: restore it with pg_restore into PostgreSQL"],
      [script, "it is a pg_dump SQL script: restore it with psql into PostgreSQL"],
      [otherTar, "a tar archive without PG_VERSION"],
      [join(dir, "notes.txt"), "neither a tar archive nor a gzipped one"],
    ];
    for (const [file, what] of cases) {
      const target = join(dir, "target");
      const restore = await runScript("scripts/restore.ts", [file as string, target]);
      expect(restore.code, restore.output).toBe(2);
      expect(restore.output).toContain(`Refusing to restore: ${file} is not a PGlite backup (${what}`);
      expect(await readdir(dir)).not.toContain("target");
    }
  });
});
