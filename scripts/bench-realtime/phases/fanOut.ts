/** Fan-out: bids at 10/s or at saturation, latency to every receiving socket and msgs/s delivered. */
import type { Fleet } from "../fleet.ts";
import { latencyText, thousands } from "../format.ts";
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.ts";
import type { BidCommand, BidResult, CollectResult } from "../loadGenerator.ts";
import { SATURATION_BIDDERS, SATURATION_WINDOW } from "../plan.ts";
import { type CpuShares, cpuSeconds, startCpuSampling } from "../processes.ts";
import type { Service } from "../service.ts";

export interface FanOutReport {
  sockets: number;
  load: string;
  bidders: number;
  acceptedBids: number;
  bidsPerSecond: number;
  deliveredPerSecond: number;
  /** Broadcasts read by the receiving sockets over the whole phase (warm-up and drain included). */
  delivered: number;
  /**
   * The server's CPU time over the whole phase (accepting the bids and delivering them) divided by
   * the broadcasts delivered to the receiving sockets: the cost of one delivered message.
   */
  serviceCpuMicrosecondsPerMessage: number;
  latencyFromAcceptance: LatencySummary;
  latencyFromSend: LatencySummary;
  missing: number;
  duplicatesOrOutOfOrder: number;
  refused: Record<string, number>;
  cpu: CpuShares;
}

function mergeLatencies(collected: CollectResult[], key: "fromAck" | "fromSend"): LatencySummary {
  const histogram = new LatencyHistogram();
  for (const part of collected) histogram.add(part[key]);
  return histogram.summary();
}

export function refusals(bids: BidResult): Record<string, number> {
  return { too_low: bids.tooLow, timeouts: bids.timeouts, ...bids.otherErrors };
}

export async function measureFanOut(
  fleet: Fleet,
  target: Service,
  postgresPidList: number[] | null,
  load: "10/s" | "saturation",
  durationMs: number,
  extra: Partial<BidCommand> = {},
  onBids?: (bids: BidResult) => void,
): Promise<FanOutReport> {
  const paced = load === "10/s";
  const endCpu = await startCpuSampling(target.pid, fleet.pids, postgresPidList);
  const serviceCpuBefore = await cpuSeconds(target.pid);
  const warmupMs = Math.min(1_000, durationMs / 5);
  const { bids, collected } = await fleet.bidAndCollect(
    {
      url: target.socketUrl,
      bidders: paced ? 1 : SATURATION_BIDDERS,
      durationMs,
      mode: paced ? "paced" : "closed",
      ratePerSecond: 10,
      window: SATURATION_WINDOW,
      ...extra,
    },
    warmupMs,
  );
  const serviceCpu = (await cpuSeconds(target.pid)) - serviceCpuBefore;
  const cpu = await endCpu();
  onBids?.(bids);
  const windowSeconds = (bids.endedAtMs - bids.startedAtMs - warmupMs) / 1000;
  const deliveredInWindow = collected.reduce((sum, part) => sum + part.deliveredInWindow, 0);
  const delivered = collected.reduce((sum, part) => sum + part.delivered, 0);
  return {
    // Held at the end: a socket that closed during the run is not counted.
    sockets: collected.reduce((sum, part) => sum + part.receivers, 0),
    load,
    bidders: paced ? 1 : (extra.bidders ?? SATURATION_BIDDERS),
    acceptedBids: bids.accepted,
    bidsPerSecond: Math.round(bids.accepted / ((bids.endedAtMs - bids.startedAtMs) / 1000)),
    deliveredPerSecond: Math.round(deliveredInWindow / windowSeconds),
    delivered,
    serviceCpuMicrosecondsPerMessage: Math.round((serviceCpu / Math.max(1, delivered)) * 1e7) / 10,
    latencyFromAcceptance: mergeLatencies(collected, "fromAck"),
    latencyFromSend: mergeLatencies(collected, "fromSend"),
    missing: collected.reduce((sum, part) => sum + part.missing, 0),
    duplicatesOrOutOfOrder: collected.reduce((sum, part) => sum + part.duplicatesOrOutOfOrder, 0),
    refused: refusals(bids),
    cpu,
  };
}

export function fanOutLine(name: string, report: FanOutReport): string {
  return (
    `${name} fan-out ${thousands(report.sockets)} sockets @ ${report.load}: ${thousands(report.bidsPerSecond)} bids/s, ` +
    `${thousands(report.deliveredPerSecond)} msgs/s delivered; acceptance→socket ${latencyText(report.latencyFromAcceptance)}; ` +
    `send→socket ${latencyText(report.latencyFromSend)}; missing ${report.missing}, dup/out-of-order ${report.duplicatesOrOutOfOrder}; ` +
    `cpu service ${report.cpu.service} (${report.serviceCpuMicrosecondsPerMessage} µs per delivered msg), generators ${report.cpu.generators}, machine busy ${Math.round(report.cpu.machineBusy * 100)}%`
  );
}
