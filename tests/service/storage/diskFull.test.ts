/**
 * A full disk under the real service process, on both backends
 * (docs/decisions/2026-11-27-storage-faults-end-cleanly.md). The data sits on a small tmpfs that a
 * filler file fills: PGlite's whole directory, PostgreSQL's tables in a tablespace there.
 *
 * When a table file cannot grow: /readyz answers 503 within a second of the first bid refused,
 * every bid after it is refused "unavailable" at once, the log says so in a line or two (not one
 * line and a stack per bid), the metric counts it, and once the filler is gone the store is
 * ready again by itself (its probe: a load balancer sends no bids while it answers 503). SIGTERM
 * on a full disk drains within SHUTDOWN_TIMEOUT_MS. When PGlite's write-ahead log cannot grow (its
 * unwritten tail copied as holes, so the next WAL page needs new blocks), PGlite PANICs: the
 * process exits 1 within seconds instead of spinning deaf to signals, and a restart recovers.
 * Every acknowledged bid is in the database at the end, read there directly.
 *
 * Root only (mount): CI runs the suite as root; anywhere else the test fails saying so.
 */
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { run, withTimeout } from "../../../scripts/harness/childProcess.ts";
import {
  type PostgresCluster,
  postgresBinariesPresent,
  startPostgresCluster,
} from "../../../scripts/harness/postgresCluster.ts";
import { scaled } from "../../harness/timeBudgets.ts";
import { type BidAnswer, connectClient, type TestClient } from "../harness/auctionClient.ts";
import { modelRisingAmounts } from "../harness/auctionModel.ts";
import { type ServiceProcess, startServiceProcess } from "../harness/serviceProcess.ts";
import { mountSmallDisk, type SmallDisk } from "../harness/smallDisk.ts";
import { cleanUpAfter, dataDirForThisTest, waitFor } from "../harness/stores.ts";

const SHUTDOWN_TIMEOUT_MS = 5_000;
/** "Within a second of the first failing write": the refusal's answer comes after that write. */
const NOT_READY_WITHIN_MS = 1_000;
/** The probe looks once a second; a busy machine may take a few more to answer. */
const READY_AGAIN_WITHIN_MS = scaled(10_000);
/** From the bid whose commit PANICked to the process's exit. */
const EXIT_AFTER_PANIC_WITHIN_MS = scaled(5_000);
/** Bids that may still find room in the table's last pages once the disk is full; a bound, never reached. */
const MAX_BIDS_UNTIL_FULL = 2_000;
const BURST = 200;
/** Warnings and errors the whole episode may log: the full disk, a count, perhaps the drain's. */
const MAX_WARNING_LINES = 4;

const disks: SmallDisk[] = [];
afterAll(async () => {
  for (const disk of disks.splice(0)) await disk.unmount();
});

async function smallDisk(sizeMiB: number, owner?: { uid: number; gid: number }): Promise<SmallDisk> {
  const disk = await mountSmallDisk(sizeMiB, owner);
  disks.push(disk);
  return disk;
}

async function status(url: string): Promise<number | string> {
  return fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
    (response) => response.status,
    (error: unknown) => String(error),
  );
}

async function metric(service: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(service.metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

/** Bids one at a time until one is refused, the acknowledged ones recorded; the refusal. */
async function bidUntilRefused(
  client: TestClient,
  acknowledged: Map<number, number>,
  next: () => number,
): Promise<BidAnswer> {
  for (let bid = 0; bid < MAX_BIDS_UNTIL_FULL; bid++) {
    const answer = await client.bid("Nobody", next() / 100);
    if (answer.type !== "accepted") return answer;
    acknowledged.set(answer.bid.id, answer.bid.amountCents);
  }
  throw new Error(`${MAX_BIDS_UNTIL_FULL} bids accepted on a full disk`);
}

interface Episode {
  service: ServiceProcess;
  disk: SmallDisk;
  acknowledged: Map<number, number>;
}

/**
 * The whole episode on a table file that cannot grow: refused at once and not ready, a bounded
 * log, ready again once freed, full again, then SIGTERM drains in time.
 */
async function runOutOfSpace({ service, disk, acknowledged }: Episode) {
  const next = modelRisingAmounts(100);
  const client = await connectClient(service.socketUrl);
  cleanUpAfter(() => client.close());
  await client.opening();
  for (let bid = 0; bid < 3; bid++) {
    const answer = await client.bid("Nobody", next() / 100);
    if (answer.type === "accepted") acknowledged.set(answer.bid.id, answer.bid.amountCents);
  }
  expect(acknowledged.size).toBe(3);
  expect(await status(`${service.httpUrl}/readyz`)).toBe(200);

  const logsBefore = service.logs.length;
  disk.fill();
  const refusal = await bidUntilRefused(client, acknowledged, next);
  const refusedAt = Date.now();
  expect(refusal).toMatchObject({ type: "error", code: "unavailable" });
  let readyz = await status(`${service.httpUrl}/readyz`);
  while (readyz !== 503 && Date.now() - refusedAt < NOT_READY_WITHIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    readyz = await status(`${service.httpUrl}/readyz`);
  }
  expect(readyz).toBe(503);

  // A burst on the full disk: every bid answered, refused, and no line each.
  const burst = Array.from({ length: BURST }, () => client.sendBid("Nobody", next() / 100));
  const answers = await Promise.all(burst.map((requestId) => client.answerTo(requestId)));
  expect(answers.every((answer) => answer.type === "error" && answer.code === "unavailable")).toBe(true);
  expect(await status(`${service.httpUrl}/healthz`)).toBe(200);
  expect(service.crashed()).toBe(false);
  // The log comes through the child's stdout, which a busy machine may deliver after the answers.
  await waitFor("the disk_full line in the log", () =>
    service.logs.slice(logsBefore).some((line) => Number(line.level) >= 40 && line.kind === "disk_full"),
  );
  const episode = service.logs.slice(logsBefore);
  const warnings = episode.filter((line) => Number(line.level) >= 40);
  expect(warnings.length, JSON.stringify(warnings)).toBeLessThanOrEqual(MAX_WARNING_LINES);
  expect(episode.some((line) => line.msg === "placing a bid failed")).toBe(false);
  expect(await metric(service, 'storage_write_failures_total{kind="disk_full"}')).toBeGreaterThanOrEqual(1);
  expect(await metric(service, 'storage_write_failures_total{kind="panic"}')).toBe(0);

  // Space freed: ready again with no bid arriving, and bids accepted.
  await disk.free();
  await waitFor(
    "/readyz 200 once space is free",
    async () => (await status(`${service.httpUrl}/readyz`)) === 200,
    READY_AGAIN_WITHIN_MS,
  );
  const afterFree = await client.bid("Nobody", next() / 100);
  expect(afterFree.type).toBe("accepted");
  if (afterFree.type === "accepted") acknowledged.set(afterFree.bid.id, afterFree.bid.amountCents);

  // Full again, then SIGTERM: the drain ends in time, whatever the store's close meets.
  disk.fill();
  expect(await bidUntilRefused(client, acknowledged, next)).toMatchObject({ code: "unavailable" });
  const signalledAt = Date.now();
  service.signal("SIGTERM");
  const { code } = await withTimeout(service.exited, SHUTDOWN_TIMEOUT_MS + 2_000, "the drain on a full disk");
  expect(Date.now() - signalledAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
  expect(code, JSON.stringify(service.logs.slice(-4)) + service.stderr()).toBe(0);
  await disk.free();
}

/** The acknowledged bids missing from (or changed in) the stored ones: none, ever. */
function missing(acknowledged: Map<number, number>, stored: { id: number; cents: number }[]) {
  const byId = new Map(stored.map((bid) => [bid.id, bid.cents]));
  return [...acknowledged].filter(([id, cents]) => byId.get(id) !== cents);
}

async function storedInPglite(dataDir: string) {
  const db = await PGlite.create({ dataDir });
  try {
    const { rows } = await db.query<{ id: number; cents: number }>(
      "SELECT id::integer AS id, (amount * 100)::integer AS cents FROM auction_bids",
    );
    return rows;
  } finally {
    await db.close();
  }
}

/** A copy of a migrated PGlite directory on `disk`; `sparse`: its zeros (the WAL's unwritten tail) as holes. */
async function pgliteDirOn(disk: SmallDisk, sparse: boolean): Promise<string> {
  const source = await dataDirForThisTest();
  const dataDir = join(disk.dir, "data");
  if (sparse) await run("cp", ["-r", "--sparse=always", source.dir, dataDir]);
  else await cp(source.dir, dataDir, { recursive: true });
  return dataDir;
}

async function startOn(options: { dataDir?: string; databaseUrl?: string }): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    databaseUrl: options.databaseUrl ?? "",
    dataDir: options.dataDir,
    env: { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) },
  });
  cleanUpAfter(() => service.stop());
  return service;
}

// A small tmpfs is mounted for each test, which needs root: as another user these tests cannot
// run at all (CI runs the service tests as root and runs them).
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn("diskFull.test.ts skips: mounting a small tmpfs needs root");

describe.skipIf(!asRoot)("PGlite on a full disk", () => {
  it("refuses bids and answers 503 at once, logs a line not a flood, is ready again once freed, drains on SIGTERM", async () => {
    const disk = await smallDisk(64);
    const dataDir = await pgliteDirOn(disk, false);
    const acknowledged = new Map<number, number>();
    await runOutOfSpace({ service: await startOn({ dataDir }), disk, acknowledged });
    expect(missing(acknowledged, await storedInPglite(dataDir))).toEqual([]);
  });

  it("exits 1 within seconds when its write-ahead log cannot grow (PANIC), and a restart recovers every acknowledged bid", async () => {
    const disk = await smallDisk(64);
    const dataDir = await pgliteDirOn(disk, true);
    const service = await startOn({ dataDir });
    const client = await connectClient(service.socketUrl);
    cleanUpAfter(() => client.close());
    await client.opening();
    const acknowledged = new Map<number, number>();
    const next = modelRisingAmounts(100);
    for (let bid = 0; bid < 3; bid++) {
      const answer = await client.bid("Nobody", next() / 100);
      if (answer.type === "accepted") acknowledged.set(answer.bid.id, answer.bid.amountCents);
    }
    disk.fill();
    // Bids until one goes unanswered: its commit needs a WAL page the disk has no room for.
    let sentAt = 0;
    for (let bid = 0; bid < MAX_BIDS_UNTIL_FULL && service.child.exitCode === null; bid++) {
      sentAt = Date.now();
      const answer = await Promise.race([client.bid("Nobody", next() / 100), service.exited.then(() => null)]);
      if (answer === null) break;
      if (answer.type === "accepted") acknowledged.set(answer.bid.id, answer.bid.amountCents);
    }
    const { code } = await withTimeout(service.exited, EXIT_AFTER_PANIC_WITHIN_MS, "the exit after the PANIC");
    expect(Date.now() - sentAt).toBeLessThan(EXIT_AFTER_PANIC_WITHIN_MS);
    expect(code).toBe(1);
    const fatal = service.logs.find((line) => line.level === 60);
    expect(String(fatal?.reason)).toMatch(/PANIC|Aborted/);

    // The supervisor's restart, once there is room: the WAL replayed, every acknowledged bid there.
    await disk.free();
    const restarted = await startOn({ dataDir });
    expect(await status(`${restarted.httpUrl}/readyz`)).toBe(200);
    const again = await connectClient(restarted.socketUrl);
    cleanUpAfter(() => again.close());
    await again.opening();
    const answer = await again.bid("Nobody", next() / 100);
    expect(answer.type).toBe("accepted");
    if (answer.type === "accepted") acknowledged.set(answer.bid.id, answer.bid.amountCents);
    restarted.signal("SIGTERM");
    expect((await withTimeout(restarted.exited, SHUTDOWN_TIMEOUT_MS + 2_000, "the drain")).code).toBe(0);
    expect(missing(acknowledged, await storedInPglite(dataDir))).toEqual([]);
  });
});

// A cluster of its own, as storageOutage.test.ts starts: skipped, as there, without PostgreSQL's binaries.
describe.skipIf(!asRoot || !postgresBinariesPresent())("PostgreSQL with its tables on a full disk", () => {
  let cluster: PostgresCluster | undefined;
  afterAll(async () => {
    await cluster?.destroy();
  });

  it("refuses bids and answers 503 at once, logs a line not a flood, is ready again once freed, drains on SIGTERM", async () => {
    const { stdout: uid } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    const disk = await smallDisk(32, { uid: Number(uid), gid: Number(gid) });
    cluster = await startPostgresCluster();
    const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
    cleanUpAfter(() => admin.end({ timeout: 1 }));
    await admin.unsafe(`CREATE TABLESPACE small_disk LOCATION '${disk.dir}'`);
    await admin.unsafe("CREATE DATABASE auction TABLESPACE small_disk");
    const databaseUrl = cluster.url.replace(/\/postgres$/, "/auction");
    const acknowledged = new Map<number, number>();
    await runOutOfSpace({ service: await startOn({ databaseUrl }), disk, acknowledged });

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    cleanUpAfter(() => sql.end({ timeout: 1 }));
    const stored = await sql<{ id: number; cents: number }[]>`
      SELECT id::integer AS id, (amount * 100)::integer AS cents FROM auction_bids`;
    expect(missing(acknowledged, [...stored])).toEqual([]);
  });
});
