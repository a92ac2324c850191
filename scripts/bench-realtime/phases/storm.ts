/** A reconnect storm: every socket cut and reopened at once, with `?after=` or with a snapshot. */

import { parseServerMessage } from "../../../src/lib/auction/protocol.ts";
import type { Fleet } from "../fleet.ts";
import { LatencyHistogram, type LatencySummary } from "../latencyHistogram.ts";
import type { ConnectResult, ResumeStanding } from "../loadGenerator.ts";
import { cpuSeconds } from "../processes.ts";
import { openRawSocket } from "../rawSocket.ts";
import type { Service } from "../service.ts";

export interface StormReport {
  sockets: number;
  kind: "resume" | "snapshot";
  seconds: number;
  /** CPU the service spent on the storm: handshakes, opening reads, JSON. */
  serviceCpuSeconds: number;
  resumes: number;
  failed: number;
  openingLatency: LatencySummary;
}

/**
 * The moderation version and round a resume must name to be answered with the missed bids (any
 * other gets a snapshot): read once from a snapshot before the storm, outside its timing.
 */
async function currentStanding(service: Service): Promise<ResumeStanding> {
  const opened = await openRawSocket(service.socketUrl, {}, 30_000);
  try {
    const parsed = parseServerMessage(opened.first);
    if (!parsed.ok || parsed.message.type !== "snapshot") throw new Error("the service opened without a snapshot");
    return { moderation: parsed.message.moderation, round: parsed.message.round.number };
  } finally {
    await opened.socket.close();
  }
}

export async function measureStorm(fleet: Fleet, service: Service, resume: boolean): Promise<StormReport> {
  const standing = resume ? await currentStanding(service) : null;
  const cpuBefore = await cpuSeconds(service.pid);
  const startedAt = performance.now();
  const results = await Promise.all(
    fleet.receivers.map((generator) =>
      generator.run<ConnectResult>(
        { type: "reconnectAll", url: service.socketUrl, resume: standing, concurrency: 100_000 },
        180_000,
      ),
    ),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  const serviceCpuSeconds = (await cpuSeconds(service.pid)) - cpuBefore;
  const opening = new LatencyHistogram();
  for (const part of results) opening.add(part.firstMessage);
  return {
    sockets: results.reduce((sum, part) => sum + part.opened, 0),
    kind: resume ? "resume" : "snapshot",
    seconds: Math.round(seconds * 100) / 100,
    serviceCpuSeconds: Math.round(serviceCpuSeconds * 100) / 100,
    resumes: results.reduce((sum, part) => sum + part.resumes, 0),
    failed: results.reduce((sum, part) => sum + part.failed, 0),
    openingLatency: opening.summary(),
  };
}
