/**
 * The bid path of this tree against an earlier revision's (`--baseline REV`, issue 45): both services
 * run side by side on the same database kind, each on a database of its own, and the throughput
 * phase (phases/throughput.ts) runs against them in turn, A B A B, at 1, 10 and 100 bidders, for a
 * number of rounds: a busy spell of the machine falls on both. Figures of different runs are not
 * compared, only the ratio within one run.
 * Maximums in the mix (issue 45): against a service whose protocol knows the "maximum" message, one
 * bidder in MAXIMUM_SHARE keeps a secret maximum and raises it with each answer; a service that
 * does not know it (an earlier release) gets plain bids only.
 * `--without-index NAME` adds a third contender: this tree with that index dropped once its
 * migrations ran (PostgreSQL only), to see what one index costs the bid path.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import postgres from "postgres";
import type { PostgresCluster } from "../harness/postgresCluster.ts";
import { Fleet } from "./fleet.ts";
import { thousands } from "./format.ts";
import { type InsertCeilingReport, measureInsertCeiling } from "./phases/insertCeiling.ts";
import { measureThroughput, type ThroughputReport, throughputLine } from "./phases/throughput.ts";
import type { Backend, Plan } from "./plan.ts";
import { postgresPids, postmasterPid } from "./processes.ts";
import { type Service, startService } from "./service.ts";

const MAXIMUM_SHARE = 10;

/** Whether the checkout's protocol has the client's "maximum" message (src/lib/auction/protocol.ts). */
async function knowsMaximums(root: string): Promise<boolean> {
  const protocol = await readFile(join(root, "src", "lib", "auction", "protocol.ts"), "utf8").catch(() => "");
  return protocol.includes('type: v.literal("maximum")');
}

/** Not counted: the first bids on a fresh service warm its JIT, its pool and the table's pages. */
const WARM_UP = { bidders: 10, ms: 2_000 };

export interface Contender {
  label: string;
  commit: string;
  /** The checkout whose service runs. */
  root: string;
  /** Dropped once the service has migrated its database (PostgreSQL only). */
  withoutIndex?: string;
  /** Plain bids only, even when the service knows maximums (the same mix as an earlier release's). */
  plainBids?: boolean;
}

/** One phase of one contender, with what each decided bid cost. */
interface Measured extends ThroughputReport {
  /** WAL the cluster wrote over the phase per decided bid (the other contenders are idle meanwhile). */
  walBytesPerBid: number | null;
  /** CPU time per decided bid, µs: the service's, and the cluster's backends'. */
  serviceCpuMicrosecondsPerBid: number;
  postgresCpuMicrosecondsPerBid: number | null;
}

interface ContenderResult {
  label: string;
  commit: string;
  withoutIndex: string | null;
  /** One bidder in this many kept a maximum (0: plain bids only). */
  maximumShare: number;
  /** Every round's report, by number of bidders. */
  throughput: Record<number, Measured[]>;
}

interface Summary {
  label: string;
  bidders: number;
  /** Decided bids/s over the rounds: median, min, max. */
  median: number;
  min: number;
  max: number;
  /** Medians over the rounds: less at the mercy of the machine's other work than the rate. */
  walBytesPerBid: number | null;
  cpuMicrosecondsPerBid: number;
}

export interface BaselineReport {
  backend: Backend;
  rounds: number;
  /** The plain-insert ceiling, once per round, and its median. */
  insertCeilings: InsertCeilingReport[];
  insertRowsPerSecond: number;
  contenders: ContenderResult[];
  summary: Summary[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** A database of its own on the cluster, so the contenders' tables never mix. */
async function createDatabase(cluster: PostgresCluster, name: string): Promise<string> {
  const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(cluster.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Statistics for the contender's bids as they stand, before each measurement. Until autovacuum first
 * analyzes a young table, the snapshot every connecting bidder reads plans its newest-bids list as a
 * scan of the whole round and a sort: 19 ms at 18,800 bids against 0.5 ms analyzed. Those reads
 * fall in the measured window, so without this a contender's CPU per bid depended on its table's
 * size and on when autovacuum last came by, not on its bid path.
 */
async function analyzeBids(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`ANALYZE auction_bids`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function walPosition(clusterUrl: string | null): Promise<bigint | null> {
  if (!clusterUrl) return null;
  const sql = postgres(clusterUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS bytes`;
    return BigInt(String(row?.bytes));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The throughput phase on one contender's service, and what each decided bid cost it. */
async function measureCosts(run: () => Promise<ThroughputReport>, clusterUrl: string | null): Promise<Measured> {
  const walBefore = await walPosition(clusterUrl);
  const report = await run();
  const walAfter = await walPosition(clusterUrl);
  const decided = Math.max(1, report.decidedPerSecond * report.seconds);
  const perBid = (cores: number) => Math.round((cores * report.seconds * 1e6) / decided);
  return {
    ...report,
    walBytesPerBid: walBefore !== null && walAfter !== null ? Math.round(Number(walAfter - walBefore) / decided) : null,
    serviceCpuMicrosecondsPerBid: perBid(report.cpu.service),
    postgresCpuMicrosecondsPerBid: report.cpu.postgres === null ? null : perBid(report.cpu.postgres),
  };
}

async function dropIndex(databaseUrl: string, index: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [found] = await sql`SELECT to_regclass(${index}) IS NOT NULL AS present`;
    if (!found?.present) throw new Error(`--without-index: no index ${index} in the migrated database`);
    await sql`DROP INDEX ${sql(index)}`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function runAgainstBaseline(
  backend: Backend,
  plan: Plan,
  rounds: number,
  contenders: Contender[],
  tempDir: string,
  cluster: PostgresCluster | null,
): Promise<BaselineReport> {
  const services: Service[] = [];
  const fleet = new Fleet(1);
  const name = backend === "postgres" ? "PostgreSQL" : "PGlite";
  try {
    const databaseUrls: (string | null)[] = [];
    for (const [index, contender] of contenders.entries()) {
      const databaseUrl = cluster ? await createDatabase(cluster, `bench_contender_${index}`) : null;
      databaseUrls.push(databaseUrl);
      services.push(
        await startService(tempDir, databaseUrl, {
          label: `-contender-${index}`,
          root: contender.root,
          inspector: false,
        }),
      );
      if (contender.withoutIndex) {
        if (!databaseUrl) throw new Error("--without-index runs on postgres only");
        await dropIndex(databaseUrl, contender.withoutIndex);
      }
      console.log(`${name} ${contender.label} (${contender.commit}) started from ${contender.root}`);
    }
    const postmaster = cluster ? await postmasterPid(cluster.dataDir) : null;

    for (const service of services) {
      await measureThroughput(fleet, service, null, null, WARM_UP.bidders, WARM_UP.ms);
    }

    const insertCeilings: InsertCeilingReport[] = [];
    const results: ContenderResult[] = [];
    for (const contender of contenders) {
      results.push({
        label: contender.label,
        commit: contender.commit,
        withoutIndex: contender.withoutIndex ?? null,
        maximumShare: !contender.plainBids && (await knowsMaximums(contender.root)) ? MAXIMUM_SHARE : 0,
        throughput: Object.fromEntries(plan.throughputBidders.map((bidders) => [bidders, []])),
      });
    }
    for (let round = 0; round < rounds; round += 1) {
      // The database's own ceiling in every round, as the machine is then: the bar's measure.
      const insertCeiling = await measureInsertCeiling(
        cluster ? { databaseUrl: cluster.url } : { dataDir: join(tempDir, `pglite-insert-${round}`) },
        plan.insertConcurrency,
        plan.throughputMs,
      );
      insertCeilings.push(insertCeiling);
      console.log(
        `round ${round + 1}/${rounds}: ${name} plain INSERT with a NOTIFY trigger (no service), ` +
          `concurrency ${insertCeiling.concurrency}: ${thousands(insertCeiling.rowsPerSecond)} rows/s`,
      );
      for (const bidders of plan.throughputBidders) {
        // Each round starts with the next contender, so none always runs right after the same one.
        for (let turn = 0; turn < contenders.length; turn += 1) {
          const index = (round + turn) % contenders.length;
          const service = services[index] as Service;
          const result = results[index] as ContenderResult;
          const databaseUrl = databaseUrls[index];
          if (databaseUrl) await analyzeBids(databaseUrl);
          const pids = postmaster ? await postgresPids(postmaster) : null;
          const report = await measureCosts(
            () =>
              measureThroughput(
                fleet,
                service,
                pids,
                databaseUrls[index] ?? null,
                bidders,
                plan.throughputMs,
                result.maximumShare,
              ),
            cluster?.url ?? null,
          );
          console.log(`round ${round + 1}/${rounds}: ${throughputLine(`${name} ${result.label}`, report)}`);
          result.throughput[bidders]?.push(report);
        }
      }
    }

    const summary = results.flatMap((result) =>
      plan.throughputBidders.map((bidders) => {
        const reports = result.throughput[bidders] ?? [];
        const rates = reports.map((report) => report.decidedPerSecond);
        const wal = reports.flatMap((report) => (report.walBytesPerBid === null ? [] : [report.walBytesPerBid]));
        return {
          label: result.label,
          bidders,
          median: median(rates),
          min: Math.min(...rates),
          max: Math.max(...rates),
          walBytesPerBid: wal.length > 0 ? median(wal) : null,
          cpuMicrosecondsPerBid: median(
            reports.map((report) => report.serviceCpuMicrosecondsPerBid + (report.postgresCpuMicrosecondsPerBid ?? 0)),
          ),
        };
      }),
    );
    const insertRowsPerSecond = median(insertCeilings.map((ceiling) => ceiling.rowsPerSecond));
    return { backend, rounds, insertCeilings, insertRowsPerSecond, contenders: results, summary };
  } catch (error) {
    const logs = await Promise.all(
      services.map(async (service) => (await readFile(service.logFile, "utf8").catch(() => "")).slice(-1_500)),
    );
    throw new Error(`${name}: ${(error as Error).message}\nservice logs (tails):\n${logs.join("\n---\n")}`);
  } finally {
    await fleet.stop();
    await Promise.all(services.map((service) => service.stop()));
  }
}

/**
 * The table: decided bids/s per contender (median of the rounds, min–max), the first contender
 * against each other one, each against the plain inserts, and what a decided bid cost.
 */
export function baselineTable(report: BaselineReport): string[] {
  const bidderCounts = [...new Set(report.summary.map((entry) => entry.bidders))];
  const cell = (label: string, bidders: number) =>
    report.summary.find((entry) => entry.label === label && entry.bidders === bidders);
  const [reference, ...others] = report.contenders;
  const rows: [string, string[]][] = [
    ["decided bids/s, median (min–max)", bidderCounts.map((bidders) => `${bidders} bidder${bidders === 1 ? "" : "s"}`)],
  ];
  for (const contender of report.contenders) {
    rows.push([
      `${contender.label} (${contender.commit}, ${contender.maximumShare > 0 ? `1 in ${contender.maximumShare} a maximum` : "plain bids"})`,
      bidderCounts.map((bidders) => {
        const entry = cell(contender.label, bidders);
        return entry ? `${thousands(entry.median)} (${thousands(entry.min)}–${thousands(entry.max)})` : "";
      }),
    ]);
  }
  for (const other of reference ? others : []) {
    rows.push([
      `${reference?.label} / ${other.label}`,
      bidderCounts.map((bidders) => {
        const ours = cell(reference?.label ?? "", bidders)?.median ?? Number.NaN;
        return (ours / (cell(other.label, bidders)?.median ?? Number.NaN)).toFixed(2);
      }),
    ]);
  }
  for (const contender of report.contenders) {
    rows.push([
      `${contender.label} / plain inserts`,
      bidderCounts.map(
        (bidders) => `${((cell(contender.label, bidders)?.median ?? 0) / report.insertRowsPerSecond).toFixed(2)}×`,
      ),
    ]);
  }
  for (const contender of report.contenders) {
    rows.push([
      `${contender.label}: CPU µs, WAL bytes per bid`,
      bidderCounts.map((bidders) => {
        const entry = cell(contender.label, bidders);
        return entry ? `${thousands(entry.cpuMicrosecondsPerBid)}, ${entry.walBytesPerBid ?? "–"}` : "";
      }),
    ]);
  }
  const width = Math.max(...rows.map(([label]) => label.length));
  const cellWidth = Math.max(...rows.flatMap(([, cells]) => cells.map((text) => text.length)));
  return [
    `${report.backend}, ${report.rounds} rounds alternating, ${thousands(report.insertRowsPerSecond)} plain inserts/s (median of the rounds)`,
    ...rows.map(
      ([label, cells]) => `${label.padEnd(width)} | ${cells.map((text) => text.padEnd(cellWidth)).join(" | ")}`,
    ),
  ];
}
