/** Every phase but the slow consumer and the ceiling, on one backend's service. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../support/childProcess.ts";
import type { PostgresCluster } from "../support/postgresCluster.ts";
import { Fleet } from "./fleet.ts";
import { kib, latencyText, thousands } from "./format.ts";
import { type FanOutReport, fanOutLine, measureFanOut } from "./phases/fanOut.ts";
import { type HeldReport, measureHeld } from "./phases/held.ts";
import type { SlowConsumerReport } from "./phases/slowConsumer.ts";
import { measureStoreAlone, type StoreAloneReport } from "./phases/storeAlone.ts";
import { measureStorm, type StormReport } from "./phases/storm.ts";
import { measureThroughput, type ThroughputReport } from "./phases/throughput.ts";
import type { Backend, Plan } from "./plan.ts";
import { postgresPids } from "./processes.ts";
import { startService } from "./service.ts";

export interface BackendReport {
  backend: Backend;
  /** Measured on the first backend only: it does not depend on the database, and it is long. */
  held: HeldReport;
  fanOut: FanOutReport[];
  slowConsumer: SlowConsumerReport | null;
  reconnectStorm: StormReport[];
  throughput: ThroughputReport[];
  storeAlone: StoreAloneReport[];
  serviceLog: string;
}

export async function runBackend(
  backend: Backend,
  plan: Plan,
  tempDir: string,
  cluster: PostgresCluster | null,
): Promise<BackendReport> {
  const service = await startService(tempDir, cluster?.url ?? null);
  const postmasterPid = cluster
    ? Number((await readFile(join(cluster.dataDir, "postmaster.pid"), "utf8")).split("\n")[0])
    : null;
  const pgPids = postmasterPid ? await postgresPids(postmasterPid) : null;
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
    for (const size of plan.fanOutSizes) {
      await fleet.shrinkTo(size);
      for (const load of ["10/s", "saturation"] as const) {
        const pids = pgPids ? await postgresPids(postmasterPid ?? 0) : null;
        const report = await measureFanOut(fleet, service, pids, load, plan.phaseMs);
        console.log(fanOutLine(name, report));
        fanOut.push(report);
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

    const throughput: ThroughputReport[] = [];
    for (const bidders of plan.throughputBidders) {
      const pids = pgPids ? await postgresPids(postmasterPid ?? 0) : null;
      const report = await measureThroughput(fleet, service, pids, bidders, plan.throughputMs);
      console.log(
        `${name} throughput, ${bidders} concurrent bidder${bidders === 1 ? "" : "s"}: ${thousands(report.acceptedPerSecond)} accepted bids/s ` +
          `(refused ${JSON.stringify(report.refused)}); cpu service ${report.cpu.service}, postgres ${report.cpu.postgres ?? "in-process"}, ` +
          `generators ${report.cpu.generators}, machine busy ${Math.round(report.cpu.machineBusy * 100)}%`,
      );
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
        ]
      : plan.storeConcurrency.map((concurrency, index) => ({
          dataDir: join(tempDir, `pglite-alone-${index}`),
          concurrency,
        }));
    for (const options of storeRuns) {
      const report = await measureStoreAlone(options, plan.throughputMs);
      console.log(
        `${name} alone (place_auction_bid, no service), concurrency ${report.concurrency}` +
          `${report.synchronousCommit ? `, synchronous_commit ${report.synchronousCommit}` : ""}: ` +
          `${thousands(report.acceptedPerSecond)} accepted bids/s`,
      );
      storeAlone.push(report);
    }

    return {
      backend,
      held,
      fanOut,
      // Measured by main() once this service is stopped: it runs its own, with a smaller MAX_BUFFERED_BYTES.
      slowConsumer: null,
      reconnectStorm,
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
