/**
 * Throughput of the bid path (docs/design.md#6c) with 1, 10 and 100 concurrent bidders in a closed loop
 * (each bids again once its answer came), every amount above the last one sent, so the database
 * decides nearly every bid. Reported: bids decided by the database per second (from the service's
 * auction_bids_decided_total, which the instance's own pre-check never counts), accepted per
 * second, bid to answer at the bidder, the batches the service placed (auction_bid_batch_size), the
 * CPU each side used and, on PostgreSQL, what its backends waited on.
 */
import type { Fleet } from "../fleet.ts";
import { latencyText, thousands } from "../format.ts";
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.ts";
import type { BidResult } from "../loadGenerator.ts";
import { type CpuShares, startCpuSampling } from "../processes.ts";
import type { Service } from "../service.ts";
import { startWaitSampling, type WaitSamples, waitsText } from "../waitEvents.ts";
import { refusals } from "./fanOut.ts";

interface BatchSizes {
  /** Placement transactions in the phase. */
  batches: number;
  meanBids: number;
  /** Upper bound of the histogram bucket holding the 99th percentile batch, and the largest batch. */
  p99AtMost: number;
  maxAtMost: number;
  /** Batches per bucket (upper bound, as the metric's `le`). */
  buckets: Record<string, number>;
}

export interface ThroughputReport {
  bidders: number;
  seconds: number;
  /**
   * The highest bid's id when the bidders connected: about how many bids the (endless) round held
   * before the phase, which the earlier phases filled. A placement's cost may grow with it.
   */
  bidsBefore: number;
  /**
   * Bids accepted or refused as too low or as tying a maximum by the database
   * (auction_bids_decided_total), and maximums it set, raised or refused as outbid
   * (auction_maximums_total), per second.
   */
  decidedPerSecond: number;
  decided: { accepted: number; tooLow: number; outbidByMaximum: number; maximums: number; nameNotAllowed: number };
  /** One bidder in this many kept a secret maximum (0: plain bids only). */
  maximumShare: number;
  acceptedPerSecond: number;
  /** Accepted bids as the bidders counted them (the same as decided.accepted when nothing timed out). */
  accepted: number;
  /** Refusals as the bidders saw them: too_low counts the database's and the instance's. */
  refused: Record<string, number>;
  /** Refused as too low by the instance's pre-check, never reaching the database. */
  tooLowByInstance: number;
  bidToAnswer: LatencySummary;
  batchSizes: BatchSizes;
  cpu: CpuShares;
  /** PostgreSQL only. */
  waits: WaitSamples | null;
}

const DECIDED = 'auction_bids_decided_total{outcome="%"}';
const MAXIMUM_OUTCOMES = ["set", "raised", "outbid"].map((outcome) => `auction_maximums_total{outcome="${outcome}"}`);
const REJECTED_TOO_LOW = 'auction_bids_rejected_total{code="too_low"}';
const BATCH = "auction_bid_batch_size";

function delta(before: Map<string, number>, after: Map<string, number>, key: string): number {
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/** The batch-size histogram's change over the phase (prom-client's cumulative `_bucket{le}` lines). */
function batchSizes(before: Map<string, number>, after: Map<string, number>): BatchSizes {
  const batches = delta(before, after, `${BATCH}_count`);
  const cumulative: [number, number][] = [];
  for (const key of after.keys()) {
    const match = /^auction_bid_batch_size_bucket\{le="([^"]+)"\}$/.exec(key);
    if (match?.[1] === undefined) continue;
    const bound = match[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(match[1]);
    cumulative.push([bound, delta(before, after, key)]);
  }
  cumulative.sort((a, b) => a[0] - b[0]);
  const buckets: Record<string, number> = {};
  let below = 0;
  let p99AtMost = Number.NaN;
  let maxAtMost = Number.NaN;
  for (const [bound, count] of cumulative) {
    if (count > below) buckets[String(bound)] = count - below;
    if (Number.isNaN(p99AtMost) && count >= 0.99 * batches && batches > 0) p99AtMost = bound;
    if (Number.isNaN(maxAtMost) && count >= batches && batches > 0) maxAtMost = bound;
    below = count;
  }
  const sum = delta(before, after, `${BATCH}_sum`);
  return {
    batches,
    meanBids: batches > 0 ? Math.round((sum / batches) * 100) / 100 : 0,
    p99AtMost,
    maxAtMost,
    buckets,
  };
}

export async function measureThroughput(
  fleet: Fleet,
  service: Service,
  postgresPidList: number[] | null,
  databaseUrl: string | null,
  bidders: number,
  durationMs: number,
  maximumShare = 0,
): Promise<ThroughputReport> {
  // One process places every bid, each above the last it sent: amounts never collide with another
  // process's, so a refusal means bids reached the service out of their sending order. Each
  // bidder's socket still receives every broadcast (and only counts it).
  const before = await service.metrics();
  const endWaits = databaseUrl ? await startWaitSampling(databaseUrl) : null;
  const endCpu = await startCpuSampling(service.pid, fleet.pids, postgresPidList);
  const result = await fleet.bidder.run<BidResult>(
    { type: "bid", url: service.socketUrl, bidders, durationMs, mode: "closed", returnAccepts: false, maximumShare },
    durationMs + 60_000,
  );
  const cpu = await endCpu();
  const waits = endWaits ? await endWaits() : null;
  const after = await service.metrics();
  const seconds = (result.endedAtMs - result.startedAtMs) / 1000;
  const decided = {
    accepted: delta(before, after, DECIDED.replace("%", "accepted")),
    tooLow: delta(before, after, DECIDED.replace("%", "too_low")),
    outbidByMaximum: delta(before, after, DECIDED.replace("%", "outbid_by_maximum")),
    maximums: MAXIMUM_OUTCOMES.reduce((sum, key) => sum + delta(before, after, key), 0),
    nameNotAllowed: delta(before, after, DECIDED.replace("%", "name_not_allowed")),
  };
  const answers = new LatencyHistogram();
  answers.add(result.answers);
  return {
    bidders,
    seconds: Math.round(seconds * 100) / 100,
    bidsBefore: result.highestIdAtStart,
    decidedPerSecond: Math.round(
      (decided.accepted + decided.tooLow + decided.outbidByMaximum + decided.maximums) / seconds,
    ),
    decided,
    maximumShare,
    acceptedPerSecond: Math.round(decided.accepted / seconds),
    accepted: result.accepted,
    refused: refusals(result),
    tooLowByInstance: delta(before, after, REJECTED_TOO_LOW) - decided.tooLow,
    bidToAnswer: answers.summary(),
    batchSizes: batchSizes(before, after),
    cpu,
    waits,
  };
}

export function throughputLine(name: string, report: ThroughputReport): string {
  const { batchSizes: batches, decided } = report;
  const waits = report.waits ? `; backends waiting on ${waitsText(report.waits)}` : "";
  return (
    `${name} throughput, ${report.bidders} concurrent bidder${report.bidders === 1 ? "" : "s"}: ` +
    `${thousands(report.decidedPerSecond)} bids decided by the database/s, ${thousands(report.acceptedPerSecond)} accepted/s ` +
    (report.maximumShare > 0 && report.bidders >= report.maximumShare
      ? `(1 bidder in ${report.maximumShare} keeps a maximum: ${thousands(decided.maximums)} maximums decided, ` +
        `${thousands(decided.outbidByMaximum)} bids tying one; `
      : "(") +
    `${thousands(decided.tooLow)} too low there, ${thousands(report.tooLowByInstance)} by the instance's pre-check, ` +
    `timeouts ${report.refused.timeouts ?? 0}); bid→answer ${latencyText(report.bidToAnswer)}; ` +
    `${thousands(batches.batches)} batches, mean ${batches.meanBids} bids, p99 ≤ ${batches.p99AtMost}, max ≤ ${batches.maxAtMost}; ` +
    `cpu service ${report.cpu.service}, postgres ${report.cpu.postgres ?? "in-process"}, generators ${report.cpu.generators}, ` +
    `machine busy ${Math.round(report.cpu.machineBusy * 100)}%${waits}; ` +
    `${thousands(report.bidsBefore)} bids in the auction before`
  );
}
