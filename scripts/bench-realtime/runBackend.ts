/** Every phase but the slow consumer and the ceiling, on one backend's service. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../harness/childProcess.ts";
import type { PostgresCluster } from "../harness/postgresCluster.ts";
import { Fleet } from "./fleet.ts";
import { kib, latencyText, thousands } from "./format.ts";
import type { Ceiling } from "./phases/ceiling.ts";
import { type FanOutReport, fanOutLine, measureFanOut } from "./phases/fanOut.ts";
import { type HeldReport, measureHeld } from "./phases/held.ts";
import { type InsertCeilingReport, measureInsertCeiling } from "./phases/insertCeiling.ts";
import type { SlowConsumerReport } from "./phases/slowConsumer.ts";
import { measureStoreAlone, type StoreAloneReport } from "./phases/storeAlone.ts";
import { measureStorm, type StormReport } from "./phases/storm.ts";
import { measureThroughput, type ThroughputReport, throughputLine } from "./phases/throughput.ts";
import type { Backend, Plan } from "./plan.ts";
import { postgresPids, postmasterPid } from "./processes.ts";
import { startService } from "./service.ts";
import { waitsText } from "./waitEvents.ts";

export interface BackendReport {
  backend: Backend;
  /** Measured on the first backend only: it does not depend on the database, and it is long. */
  held: HeldReport;
  fanOut: FanOutReport[];
  /** The bare ws ceiling at each saturated size, measured right after the service's phase (same order). */
  bareFanOut: FanOutReport[];
  /** The same through the bare server that coalesces a turn's writes (for information). */
  coalescedBareFanOut: FanOutReport[];
  slowConsumer: SlowConsumerReport | null;
  reconnectStorm: StormReport[];
  /** Plain INSERTs with a NOTIFY trigger, no service (docs/design.md#6c): the bar for bids decided per second. */
  insertCeiling: InsertCeilingReport;
  throughput: ThroughputReport[];
  storeAlone: StoreAloneReport[];
  serviceLog: string;
}

export async function runBackend(
  backend: Backend,
  plan: Plan,
  tempDir: string,
  cluster: PostgresCluster | null,
  ceiling: Ceiling | null,
): Promise<BackendReport> {
  const service = await startService(tempDir, cluster?.url ?? null);
  const postmaster = cluster ? await postmasterPid(cluster.dataDir) : null;
  const pgPids = postmaster ? await postgresPids(postmaster) : null;
  const fleet = new Fleet(plan.generators);
  const name = backend === "postgres" ? "PostgreSQL" : "PGlite";
  try {
    const held = await measureHeld(fleet, service, plan.heldSockets);
    console.log(
      `${name} held ${thousands(held.held)} of ${thousands(held.requested)} sockets (${held.failed} failed) in ${held.rampSeconds} s: ` +
        `${kib(held.rssBytesPerSocket)} RSS and ${kib(held.heapBytesPerSocket)} heap per socket ` +
        `(RSS ${Math.round(held.baseline.rssBytes / 2 ** 20)} → ${Math.round(held.loaded.rssBytes / 2 ** 20)} MiB); ` +
        `opening ${latencyText(held.openingLatency)}`,
    );

    const fanOut: FanOutReport[] = [];
    const bareFanOut: FanOutReport[] = [];
    const coalescedBareFanOut: FanOutReport[] = [];
    for (const size of plan.fanOutSizes) {
      await fleet.shrinkTo(size);
      for (const load of ["10/s", "saturation"] as const) {
        const pids = pgPids ? await postgresPids(postmaster ?? 0) : null;
        const report = await measureFanOut(fleet, service, pids, load, plan.phaseMs);
        console.log(fanOutLine(name, report));
        fanOut.push(report);
        // The ceiling at once, at the same size, while the machine is in the same state.
        if (load === "saturation" && ceiling) {
          const bare = await ceiling.measure(size);
          bareFanOut.push(bare.perFrame);
          coalescedBareFanOut.push(bare.coalesced);
        }
      }
    }

    await fleet.shrinkTo(plan.stormSockets);
    const reconnectStorm: StormReport[] = [];
    for (const resume of [false, true, false, true]) {
      const storm = await measureStorm(fleet, service, resume);
      console.log(
        `${name} reconnect storm, ${thousands(storm.sockets)} sockets at once with ${storm.kind}: all open in ${storm.seconds} s, ` +
          `service cpu ${storm.serviceCpuSeconds} s ` +
          `(${storm.failed} failed, ${storm.resumes} resumes); connect→first message ${latencyText(storm.openingLatency)}`,
      );
      reconnectStorm.push(storm);
    }
    await fleet.shrinkTo(0);

    // The database's own ceiling, just before the bids that are judged against it, on the same cluster.
    const insertCeiling = await measureInsertCeiling(
      cluster ? { databaseUrl: cluster.url } : { dataDir: join(tempDir, "pglite-insert") },
      plan.insertConcurrency,
      plan.throughputMs,
    );
    console.log(
      `${name} plain INSERT with a NOTIFY trigger (no service${cluster ? "" : ", its own PGlite"}), concurrency ${insertCeiling.concurrency}: ` +
        `${thousands(insertCeiling.rowsPerSecond)} rows/s (${thousands(insertCeiling.rows)} rows in ${insertCeiling.seconds} s, ` +
        `${thousands(insertCeiling.notified)} notifications heard)` +
        (insertCeiling.waits ? `; backends waiting on ${waitsText(insertCeiling.waits)}` : ""),
    );

    const throughput: ThroughputReport[] = [];
    for (const bidders of plan.throughputBidders) {
      const pids = pgPids ? await postgresPids(postmaster ?? 0) : null;
      const report = await measureThroughput(fleet, service, pids, cluster?.url ?? null, bidders, plan.throughputMs);
      console.log(throughputLine(name, report));
      throughput.push(report);
    }

    const storeAlone: StoreAloneReport[] = [];
    const storeRuns: Record<string, unknown>[] = cluster
      ? [
          ...plan.storeConcurrency.map((concurrency) => ({
            databaseUrl: cluster.url,
            concurrency,
            synchronousCommit: "on",
          })),
          { databaseUrl: cluster.url, concurrency: 10, synchronousCommit: "off" },
          ...plan.storeBatchSizes.map((batchSize) => ({ databaseUrl: cluster.url, batchSize })),
        ]
      : [
          ...plan.storeConcurrency.map((concurrency) => ({ concurrency })),
          ...plan.storeBatchSizes.map((batchSize) => ({ batchSize })),
        ].map((options, index) => ({ ...options, dataDir: join(tempDir, `pglite-alone-${index}`) }));
    for (const options of storeRuns) {
      const report = await measureStoreAlone(options, plan.throughputMs);
      const how = report.batchSize
        ? `place_auction_bids, batches of ${report.batchSize} one at a time, ${report.msPerBatch} ms each`
        : `place_auction_bid, concurrency ${report.concurrency}` +
          `${report.synchronousCommit ? `, synchronous_commit ${report.synchronousCommit}` : ""}`;
      console.log(`${name} alone (${how}, no service): ${thousands(report.acceptedPerSecond)} accepted bids/s`);
      storeAlone.push(report);
    }

    return {
      backend,
      held,
      fanOut,
      bareFanOut,
      coalescedBareFanOut,
      // Measured by main() once this service is stopped: it runs its own, with a smaller MAX_BUFFERED_BYTES.
      slowConsumer: null,
      reconnectStorm,
      insertCeiling,
      throughput,
      storeAlone,
      serviceLog: (await readFile(service.logFile, "utf8").catch(() => "")).slice(-4_000),
    };
  } catch (error) {
    const log = await readFile(service.logFile, "utf8").catch(() => "");
    throw new Error(`${name}: ${errorMessage(error)}\nservice log (tail):\n${log.slice(-2_000)}`);
  } finally {
    await fleet.stop();
    await service.stop();
  }
}
