/**
 * Backups and restore on both backends (docs/deploying.md#backups-and-restore): a store with bids
 * over two ended rounds, a hidden bid, a blocked name and a confirmed payment is backed up while
 * the service runs on it (PostgreSQL: the documented pg_dump recipe; PGlite: `npm run backup`,
 * which the running service answers), restored into a fresh location, and opened with the real
 * store: every table, sequence and function is the same, the store reads the same bids, winners,
 * moderation and payments, and a new bid gets an id above every old one. A restore refuses a PGlite
 * directory in use or not empty, and pg_restore a database that is not empty.
 */
import { mkdir, readdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, inject, it } from "vitest";
import { run } from "../../../scripts/harness/childProcess.ts";
import { LOCK_FILE_NAME } from "../../../service/storage/dataDirLock.ts";
import type { RoundSettings, StoreWithPayments } from "../../../service/storage/types.ts";
import { SERVICE_TEST_MS, scaled } from "../../harness/timeBudgets.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { notPrivate, notPrivateInTarball } from "../harness/fileModes.ts";
import { spawnCollected, startServiceProcess } from "../harness/serviceProcess.ts";
import {
  cleanUpAfter,
  createTestDatabase,
  type DirectQuery,
  locationForThisTest,
  openTestStore,
  type TestLocation,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? "/usr/lib/postgresql/15/bin";
/** Short rounds, so that two of them end within the test; the service runs with the same. */
const ROUNDS: RoundSettings = { roundSeconds: 1, softCloseSeconds: 0 };
const ROUND_ENV = { AUCTION_ROUND_SECONDS: "1", AUCTION_SOFT_CLOSE_SECONDS: "0" };
const MINT = "BackupMint1111111111111111111111111111111111";
const RECIPIENT = "BackupRecipient11111111111111111111111111111";

const BY_THE_TEST = { reason: "backup test", sessionId: "backup-session" };

async function untilRoundEnds(endsAt: string | null): Promise<void> {
  expect(endsAt).not.toBeNull();
  const wait = Date.parse(endsAt as string) - Date.now() + 50;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** Two ended rounds with winners, a hidden bid, a blocked name, a confirmed and a waiting payment. */
async function fillStore(store: StoreWithPayments): Promise<void> {
  const opener = await store.placeBid("Alice", 100);
  expect(opener.accepted).toBe(true);
  const troll = await store.placeBid("Troll", 150);
  if (!troll.accepted) throw new Error("the troll's bid was refused");
  await untilRoundEnds(troll.endsAt);
  const second = await store.placeBid("Bob", 200);
  expect(second).toMatchObject({ accepted: true, round: 2 });
  expect(await store.moderate({ action: "hide", bidId: troll.bid.id, ...BY_THE_TEST })).toMatchObject({
    outcome: "done",
  });
  expect(await store.moderate({ action: "block", bidderName: "Spammer", ...BY_THE_TEST })).toMatchObject({
    outcome: "done",
  });
  const last = await store.placeBid("Carol", 300);
  await untilRoundEnds(last.endsAt);
  expect(await store.settleRound()).toMatchObject({ number: 2, closed: true });
  expect((await store.winners(10)).map((winner) => winner.bid.bidderName)).toEqual(["Carol", "Alice"]);

  const now = new Date();
  const terms = { tierId: 2, priceBaseUnits: 5_000_000n, decimals: 6, mint: MINT, recipient: RECIPIENT };
  const expiresAt = new Date(now.getTime() + 15 * 60_000);
  await store.payments.create({ ...terms, reference: "BackupPaid", name: "Patron", createdAt: now, expiresAt });
  await store.payments.create({ ...terms, reference: "BackupWaiting", name: null, createdAt: now, expiresAt });
  const lease = await store.payments.claimWatcher({
    tokenAccount: "BackupTokenAccount",
    mint: MINT,
    recipient: RECIPIENT,
  });
  if (!lease) throw new Error("no watcher lease");
  const recorded = await lease.record(
    { signature: "BackupSignature", accountKeys: ["BackupPaid"], received: 5_000_000n, blockTime: now },
    now,
  );
  expect(recorded.outcome).toBe("confirmed");
  await lease.release();
}

/** What the store reads back: the bids, winners, moderation and payments (the clock's `now` aside). */
async function storeReadings(store: StoreWithPayments) {
  const { now: _now, ...view } = await store.view(50);
  return {
    view,
    winners: await store.winners(10),
    moderation: await store.moderationView(null, 50),
    payments: await store.payments.latest(10),
    patrons: await store.payments.patrons(MINT, 10),
  };
}

/** Fills the store at `location` (fillStore), closes it, and gives what it read back before closing. */
async function filledAndClosed(location: TestLocation): Promise<Awaited<ReturnType<typeof storeReadings>>> {
  const store = await openTestStore(location, { rounds: ROUNDS });
  cleanUpAfter(() => store.close());
  await fillStore(store);
  const readings = await storeReadings(store);
  await store.close();
  return readings;
}

/** Every row of every table, every sequence's value and every function of the schema. */
async function databaseContents(query: DirectQuery) {
  const tables = await query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const rows: Record<string, unknown[]> = {};
  for (const { name } of tables) {
    rows[String(name)] = (await query(`SELECT to_jsonb(t)::text AS row FROM "${name}" t ORDER BY 1`)).map(
      (row) => row.row,
    );
  }
  const sequences = await query(
    "SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
  );
  const functions = await query(
    "SELECT proname AS name, md5(prosrc) AS source FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1, 2",
  );
  return { rows, sequences, functions };
}

/** The restored location opened with the real store: the same readings, and a new bid above every old id. */
async function expectRestored(restored: TestLocation, readings: Awaited<ReturnType<typeof storeReadings>>) {
  const store = await openTestStore(restored, { rounds: ROUNDS });
  cleanUpAfter(() => store.close());
  expect(await storeReadings(store)).toEqual(readings);
  const oldIds = (await store.moderationView(null, 50)).bids.map((bid) => bid.id);
  const after = await store.placeBid("After", 1_000);
  if (!after.accepted) throw new Error("the bid after the restore was refused");
  expect(after.bid.id).toBeGreaterThan(Math.max(...oldIds));
  await store.close();
}

/** `node <script> …args` in the repository with `env`, its exit code and output. */
async function runScript(script: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawnCollected(process.execPath, [script, ...args], env);
  return { code: await child.exited, output: child.output() };
}

describe("backups and restore", () => {
  it(
    "PostgreSQL: pg_dump -Fc of a running service, pg_restore into an empty database",
    async () => {
      const location = await locationForThisTest("postgres");
      const readings = await filledAndClosed(location);
      const service = await startServiceProcess({ databaseUrl: location.databaseUrl as string, env: ROUND_ENV });
      cleanUpAfter(() => service.stop());

      const dir = join(inject("storageTempRoot"), `backup-${process.pid}-${Date.now()}`);
      await mkdir(dir, { recursive: true });
      const dump = join(dir, "nothing.dump");
      const started = performance.now();
      await run(join(POSTGRES_BIN_DIR, "pg_dump"), [
        "--format=custom",
        `--file=${dump}`,
        location.databaseUrl as string,
      ]);
      const dumpMs = performance.now() - started;
      const target = await createTestDatabase();
      cleanUpAfter(() => target.drop());
      const restoreArgs = ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"];
      await run(join(POSTGRES_BIN_DIR, "pg_restore"), [...restoreArgs, `--dbname=${target.url}`, dump]);
      console.info(`pg_dump: ${(await readFile(dump)).length} bytes in ${Math.round(dumpMs)} ms`);

      const original = await withDirectSql(location, databaseContents);
      const restored: TestLocation = { ...location, databaseUrl: target.url };
      expect(await withDirectSql(restored, databaseContents)).toEqual(original);
      expect(original.rows.schema_migrations?.length).toBeGreaterThan(10);
      expect(original.sequences.length).toBeGreaterThan(0);
      await expectRestored(restored, readings);

      // A second restore into the same, no longer empty, database fails and changes nothing.
      await expect(
        run(join(POSTGRES_BIN_DIR, "pg_restore"), [...restoreArgs, `--dbname=${target.url}`, dump]),
      ).rejects.toThrow(/already exists/);
      expect(service.crashed()).toBe(false);
    },
    SERVICE_TEST_MS,
  );

  it(
    "PGlite: npm run backup through the running service, npm run restore into a new directory",
    async () => {
      const location = await locationForThisTest("pglite");
      const readings = await filledAndClosed(location);
      // Read before the service opens the directory: the first backup is taken before any bid comes.
      const original = await withDirectSql(location, databaseContents);
      const service = await startServiceProcess({ databaseUrl: "", dataDir: location.dataDir, env: ROUND_ENV });
      cleanUpAfter(() => service.stop());

      const dir = join(inject("storageTempRoot"), `backup-${process.pid}-${Date.now()}`);
      await mkdir(dir, { recursive: true });
      const file = join(dir, "nothing.tar.gz");
      const backup = spawnCollected("npm", ["run", "-s", "backup", "--", file], {
        ...process.env,
        DATA_DIR: location.dataDir,
        DATABASE_URL: "",
      });
      expect(await backup.exited, backup.output()).toBe(0);
      expect(backup.output()).toContain(`through the running service (process ${service.child.pid})`);
      console.info(backup.output().trim());
      expect(service.logs.some((line) => String(line.msg).startsWith("backup written"))).toBe(true);
      // The service's copy was moved out; the tarball holds no lock and no earlier backup.
      expect((await readdir(location.dataDir)).filter((entry) => entry.startsWith("nothing-store-backup"))).toEqual([]);
      const names = gunzipSync(await readFile(file)).toString("latin1");
      expect(names).toContain("PG_VERSION");
      expect(names).not.toContain(LOCK_FILE_NAME);
      // Owner-only, the file and what it records (decision 2026-11-28-private-data-files).
      expect(((await stat(file)).mode & 0o7777).toString(8)).toBe("600");
      expect(await notPrivateInTarball(file)).toEqual([]);

      // A backup taken while bids keep coming holds every bid acknowledged before it and no hole:
      // the bids up to some id, exactly (checked once the service has stopped).
      const client = await connectClient(service.socketUrl);
      cleanUpAfter(() => client.close());
      await client.opening();
      const acknowledged: number[] = [];
      let bidding = true;
      const steady = (async () => {
        for (let amount = 100; bidding; amount++) {
          const answer = await client.bid("Steady", amount);
          if (answer.type === "accepted") acknowledged.push(answer.bid.id);
        }
      })();
      await waitFor("the first steady bids", () => acknowledged.length >= 5, scaled(30_000));
      const beforeBusyBackup = Math.max(...acknowledged);
      const busyFile = join(dir, "busy.tar.gz");
      const busy = await runScript("scripts/backup.ts", [busyFile], {
        ...process.env,
        DATA_DIR: location.dataDir,
        DATABASE_URL: "",
      });
      expect(busy.code, busy.output).toBe(0);
      await waitFor("a steady bid after the backup", () => acknowledged.length >= 10, scaled(30_000));
      bidding = false;
      await steady;
      const busyRestoredDir = join(dir, "busy-restored");
      const busyRestore = await runScript("scripts/restore.ts", [busyFile, busyRestoredDir]);
      expect(busyRestore.code, busyRestore.output).toBe(0);

      // Refused while the service holds the directory, and into a directory with anything in it.
      const restoreScript = "scripts/restore.ts";
      const inUse = await runScript(restoreScript, [file, location.dataDir]);
      expect(inUse.code, inUse.output).toBe(2);
      expect(inUse.output).toContain(
        `The data directory ${await realpath(location.dataDir)} is in use by process ${service.child.pid}`,
      );
      const occupied = join(dir, "occupied");
      await mkdir(occupied);
      await writeFile(join(occupied, "notes.txt"), "keep me");
      const notEmpty = await runScript(restoreScript, [file, occupied]);
      expect(notEmpty.code, notEmpty.output).toBe(2);
      expect(notEmpty.output).toContain(`The data directory ${occupied} is not empty (notes.txt)`);
      expect(await readdir(occupied)).toEqual(["notes.txt"]);

      const restoredDir = join(dir, "restored", "data");
      const restore = spawnCollected("npm", ["run", "-s", "restore", "--", file, restoredDir], process.env);
      expect(await restore.exited, restore.output()).toBe(0);
      console.info(restore.output().trim());
      expect(await readdir(restoredDir)).not.toContain(LOCK_FILE_NAME);
      expect(await notPrivate(restoredDir)).toEqual([]);

      expect(service.crashed()).toBe(false);
      service.signal("SIGTERM");
      expect((await service.exited).code).toBe(0);
      const restored: TestLocation = { backend: "pglite", dataDir: restoredDir, remove: async () => {} };
      expect(await withDirectSql(restored, databaseContents)).toEqual(original);
      expect(original.rows.payments?.length).toBe(2);
      const bidsOf = (query: DirectQuery) =>
        query("SELECT id, bidder_name, amount, round_number FROM auction_bids ORDER BY id").then((rows) =>
          rows.map((row) => JSON.stringify(row)),
        );
      const allBids = await withDirectSql(location, bidsOf);
      const busyBids = await withDirectSql({ ...restored, dataDir: busyRestoredDir }, bidsOf);
      expect(busyBids).toEqual(allBids.slice(0, busyBids.length));
      expect(busyBids.some((row) => JSON.parse(row).id === beforeBusyBackup)).toBe(true);
      await expectRestored(restored, readings);
    },
    SERVICE_TEST_MS,
  );
});
