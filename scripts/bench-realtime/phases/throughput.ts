/** Throughput: accepted bids per second with 1, 10 and 100 concurrent bidders, and the CPU each side used. */
import type { Fleet } from "../fleet.ts";
import type { BidResult } from "../loadGenerator.ts";
import { type CpuShares, startCpuSampling } from "../processes.ts";
import type { Service } from "../service.ts";
import { refusals } from "./fanOut.ts";

export interface ThroughputReport {
  bidders: number;
  acceptedPerSecond: number;
  accepted: number;
  refused: Record<string, number>;
  cpu: CpuShares;
}

export async function measureThroughput(
  fleet: Fleet,
  service: Service,
  postgresPidList: number[] | null,
  bidders: number,
  durationMs: number,
): Promise<ThroughputReport> {
  // One process places every bid: its amounts then never collide with another process's, so a
  // refusal means a real race at the row lock. Each bidder's socket still receives every broadcast.
  const endCpu = await startCpuSampling(service.pid, fleet.pids, postgresPidList);
  const result = await fleet.bidder.run<BidResult>(
    { type: "bid", url: service.socketUrl, bidders, durationMs, mode: "closed", returnAccepts: false },
    durationMs + 60_000,
  );
  const cpu = await endCpu();
  const accepted = result.accepted;
  const seconds = (result.endedAtMs - result.startedAtMs) / 1000;
  const refused = refusals(result);
  return { bidders, acceptedPerSecond: Math.round(accepted / seconds), accepted, refused, cpu };
}
