/** A slow consumer: one socket that never reads among the others, on its own service with a small bound. */
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../../harness/childProcess.ts";
import type { PostgresCluster } from "../../harness/postgresCluster.ts";
import { Fleet } from "../fleet.ts";
import { kib, latencyText, thousands } from "../format.ts";
import type { BidResult, SlowPingsResult } from "../loadGenerator.ts";
import {
  type Backend,
  LONG_BROADCAST_FRAME_BYTES,
  LONG_NAME_CODE_POINTS,
  METRICS_POLL_MS,
  type Plan,
  PONG_FRAME_BYTES,
  SLOW_CONSUMER_MAX_BUFFERED_BYTES,
} from "../plan.ts";
import type { Generator } from "../processes.ts";
import { type Service, startService } from "../service.ts";
import { type FanOutReport, measureFanOut } from "./fanOut.ts";

export interface SlowConsumerReport {
  /** Reading sockets; the slow one comes on top. */
  sockets: number;
  /** The service's MAX_BUFFERED_BYTES for this run. */
  maxBufferedBytes: number;
  pingsPerSecond: number;
  dropped: boolean;
  /** From the slow socket's opening to the drop. */
  droppedAfterMs: number | null;
  /** "service log": the time of the service's own warning; "metrics poll": when the counter was seen (up to ~0.3 s late). */
  dropTimeFrom: "service log" | "metrics poll" | null;
  /** ws's bufferedAmount when the service dropped it (its log line): all that is not in the kernel. */
  bufferedBytesAtDrop: number | null;
  /** Sent to the slow socket until the drop (or the end): bids accepted meanwhile and pings sent, times their frame sizes. */
  broadcastsSent: number;
  pingsSent: number;
  estimatedBytesSent: { broadcasts: number; pongs: number; total: number };
  /** The others while the slow socket was there (bidding stops at the drop). */
  others: FanOutReport;
  /** The same load on the same sockets just before, without the slow one. */
  baseline: FanOutReport;
}

/** The service's first "dropping a socket" warning at or after `sinceMs` (pino lines: time in ms, bufferedBytes). */
async function dropInLog(logFile: string, sinceMs: number): Promise<{ atMs: number; bufferedBytes: number } | null> {
  const text = await readFile(logFile, "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    if (!line.includes("dropping a socket")) continue;
    try {
      const entry = JSON.parse(line) as { time?: number; bufferedBytes?: number };
      if (typeof entry.time === "number" && entry.time >= sinceMs) {
        return { atMs: entry.time, bufferedBytes: Number(entry.bufferedBytes ?? Number.NaN) };
      }
    } catch {
      // Not a JSON line (a stack trace's continuation): skip it.
    }
  }
  return null;
}

async function measureSlowConsumer(fleet: Fleet, service: Service, plan: Plan): Promise<SlowConsumerReport> {
  const load = { nameLength: LONG_NAME_CODE_POINTS };
  const baseline = await measureFanOut(fleet, service, null, "saturation", plan.slowConsumerBaselineMs, load);

  const droppedBefore = (await service.metrics()).get("auction_slow_sockets_dropped_total") ?? 0;
  // The first receiving generator holds the paused socket and sends its pings.
  const slowGenerator = fleet.receivers[0] as Generator;
  await fleet.connect(service.socketUrl, 1, true);
  const startedAt = Date.now();
  let polledDropAt: number | null = null;
  let polling = true;
  const poll = (async () => {
    while (polling && Date.now() - startedAt < plan.slowConsumerMaxMs + 10_000) {
      await sleep(METRICS_POLL_MS);
      const dropped = (await service.metrics().catch(() => new Map<string, number>())).get(
        "auction_slow_sockets_dropped_total",
      );
      if (dropped !== undefined && dropped > droppedBefore) {
        polledDropAt = Date.now();
        // The phase is about the time to the drop: end it there.
        fleet.bidder.post({ type: "stopBidding" });
        slowGenerator.post({ type: "stopBidding" });
        return;
      }
    }
  })();
  const pinging = slowGenerator.run<SlowPingsResult>(
    { type: "slowPings", perSecond: plan.slowConsumerPingsPerSecond, durationMs: plan.slowConsumerMaxMs },
    plan.slowConsumerMaxMs + 30_000,
  );
  let bids: BidResult | null = null;
  const others = await measureFanOut(fleet, service, null, "saturation", plan.slowConsumerMaxMs, load, (result) => {
    bids = result;
  });
  polling = false;
  await poll;
  // Ends with the bidding (stopBidding) or its own deadline, whichever first.
  slowGenerator.post({ type: "stopBidding" });
  const pings = await pinging;

  const logged = polledDropAt === null ? null : await dropInLog(service.logFile, startedAt);
  const dropAt: number | null = logged?.atMs ?? polledDropAt;
  const until = dropAt ?? Number.POSITIVE_INFINITY;
  const accepts = (bids as BidResult | null)?.accepts ?? [];
  const broadcastsSent = accepts.filter(([, , ackAtMs]) => ackAtMs <= until).length;
  const pingsSent = pings.ticks.filter(([atMs]) => atMs <= until).at(-1)?.[1] ?? 0;
  const broadcastBytes = broadcastsSent * LONG_BROADCAST_FRAME_BYTES;
  const pongBytes = pingsSent * PONG_FRAME_BYTES;
  return {
    sockets: others.sockets,
    maxBufferedBytes: SLOW_CONSUMER_MAX_BUFFERED_BYTES,
    pingsPerSecond: plan.slowConsumerPingsPerSecond,
    dropped: dropAt !== null,
    droppedAfterMs: dropAt === null ? null : dropAt - startedAt,
    dropTimeFrom: logged ? "service log" : polledDropAt === null ? null : "metrics poll",
    bufferedBytesAtDrop: logged?.bufferedBytes ?? null,
    broadcastsSent,
    pingsSent,
    estimatedBytesSent: { broadcasts: broadcastBytes, pongs: pongBytes, total: broadcastBytes + pongBytes },
    others,
    baseline,
  };
}

function slowConsumerLine(name: string, report: SlowConsumerReport): string {
  const sent = report.estimatedBytesSent;
  const seconds = (Number(report.droppedAfterMs) / 1000).toFixed(1);
  return (
    `${name} slow consumer among ${thousands(report.sockets)} (MAX_BUFFERED_BYTES ${thousands(report.maxBufferedBytes)}, ` +
    `${thousands(report.others.bidsPerSecond)} bids/s of ${LONG_BROADCAST_FRAME_BYTES} B + ${thousands(report.pingsPerSecond)} pings/s): ` +
    (report.dropped
      ? `dropped after ${seconds} s (${report.dropTimeFrom}), bufferedAmount ${thousands(Number(report.bufferedBytesAtDrop))} B at the drop; `
      : `not dropped within ${report.droppedAfterMs === null ? "the limit" : `${seconds} s`}; `) +
    `~${kib(sent.total)} sent to it (${thousands(report.broadcastsSent)} broadcasts ${kib(sent.broadcasts)}, ` +
    `${thousands(report.pingsSent)} pongs ${kib(sent.pongs)}); the others send→socket ${latencyText(report.others.latencyFromSend)} ` +
    `vs ${latencyText(report.baseline.latencyFromSend)} without it (${thousands(report.baseline.bidsPerSecond)} bids/s)`
  );
}

/**
 * Its own service instance, started with the small bound; the slow socket comes on top of
 * plan.slowConsumerSockets reading ones.
 */
export async function runSlowConsumer(
  backend: Backend,
  plan: Plan,
  tempDir: string,
  cluster: PostgresCluster | null,
): Promise<SlowConsumerReport> {
  const service = await startService(tempDir, cluster?.url ?? null, {
    label: "-slow",
    extraEnv: { MAX_BUFFERED_BYTES: String(SLOW_CONSUMER_MAX_BUFFERED_BYTES) },
  });
  const fleet = new Fleet(plan.generators);
  const name = backend === "postgres" ? "PostgreSQL" : "PGlite";
  try {
    await fleet.connect(service.socketUrl, plan.slowConsumerSockets);
    const report = await measureSlowConsumer(fleet, service, plan);
    console.log(slowConsumerLine(name, report));
    return report;
  } catch (error) {
    const log = await readFile(service.logFile, "utf8").catch(() => "");
    throw new Error(`${name} slow consumer: ${errorMessage(error)}\nservice log (tail):\n${log.slice(-2_000)}`);
  } finally {
    await fleet.stop();
    await service.stop();
  }
}
