/** Sockets held: a ramp to the plan's count, and the service's memory per socket after a full GC. */
import { setTimeout as sleep } from "node:timers/promises";
import type { Fleet } from "../fleet.ts";
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.ts";
import { MEMORY_SETTLE_MS } from "../plan.ts";
import { memoryOf, type Service } from "../service.ts";

export interface HeldReport {
  requested: number;
  held: number;
  failed: number;
  errors: string[];
  rampSeconds: number;
  openingLatency: LatencySummary;
  baseline: { rssBytes: number; heapUsedBytes: number };
  loaded: { rssBytes: number; heapUsedBytes: number };
  rssBytesPerSocket: number;
  heapBytesPerSocket: number;
  serviceOpenSockets: number;
}

export async function measureHeld(fleet: Fleet, service: Service, count: number): Promise<HeldReport> {
  await sleep(MEMORY_SETTLE_MS);
  const baseline = await memoryOf(service);
  const startedAt = performance.now();
  const results = await fleet.connect(service.socketUrl, count);
  const rampSeconds = (performance.now() - startedAt) / 1000;
  await sleep(MEMORY_SETTLE_MS);
  const loaded = await memoryOf(service);
  const metrics = await service.metrics();
  const held = results.reduce((sum, part) => sum + part.opened, 0);
  const opening = new LatencyHistogram();
  for (const part of results) opening.add(part.firstMessage);
  return {
    requested: count,
    held,
    failed: results.reduce((sum, part) => sum + part.failed, 0),
    errors: results.flatMap((part) => part.errors),
    rampSeconds: Math.round(rampSeconds * 10) / 10,
    openingLatency: opening.summary(),
    baseline,
    loaded,
    rssBytesPerSocket: Math.round((loaded.rssBytes - baseline.rssBytes) / Math.max(1, held)),
    heapBytesPerSocket: Math.round((loaded.heapUsedBytes - baseline.heapUsedBytes) / Math.max(1, held)),
    serviceOpenSockets: metrics.get("auction_open_sockets") ?? Number.NaN,
  };
}
