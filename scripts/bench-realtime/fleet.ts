/** The load-generator processes as one fleet: receivers hold the sockets, the last one bids. */
import { setTimeout as sleep } from "node:timers/promises";
import type { BidCommand, BidResult, CollectResult, ConnectResult } from "./loadGenerator.ts";
import { CONNECT_CONCURRENCY, DRAIN_TIMEOUT_MS, GENERATOR_FILE, ROOT } from "./plan.ts";
import { Generator } from "./processes.ts";

export class Fleet {
  readonly generators: Generator[];
  /** The last generator places the bids; the others hold the receiving sockets. */
  readonly bidder: Generator;
  readonly receivers: Generator[];
  private lastFloor = 0;

  constructor(count: number) {
    this.generators = Array.from(
      { length: count + 1 },
      () => new Generator(GENERATOR_FILE, ROOT, () => this.onProgress()),
    );
    this.bidder = this.generators[count] as Generator;
    this.receivers = this.generators.slice(0, count);
  }

  get pids(): number[] {
    return this.generators.map((generator) => generator.child.pid ?? 0);
  }

  private onProgress(): void {
    const floor = Math.min(...this.receivers.map((generator) => generator.lowestLastId));
    if (floor <= this.lastFloor) return;
    this.lastFloor = floor;
    this.bidder.post({ type: "floor", id: floor });
  }

  /**
   * Spreads `count` new receiving sockets over the receiving generators; `watch`: watchers, which
   * keep what their page would show (loadGenerator.ts).
   */
  async connect(url: string, count: number, pauseFirst = false, watch = false): Promise<ConnectResult[]> {
    const share = (index: number) =>
      Math.floor(count / this.receivers.length) + (index < count % this.receivers.length ? 1 : 0);
    return Promise.all(
      this.receivers.map((generator, index) =>
        generator.run<ConnectResult>(
          {
            type: "connect",
            url,
            count: share(index),
            concurrency: CONNECT_CONCURRENCY,
            pauseFirst: pauseFirst && index === 0,
            watch,
          },
          180_000,
        ),
      ),
    );
  }

  /** Closes receiving sockets until `keep` remain (spread evenly). */
  async shrinkTo(keep: number): Promise<void> {
    const statuses = await Promise.all(
      this.receivers.map((generator) => generator.run<{ receivers: number }>({ type: "status" }, 10_000)),
    );
    await Promise.all(
      this.receivers.map((generator, index) => {
        const target = Math.floor(keep / this.receivers.length) + (index < keep % this.receivers.length ? 1 : 0);
        const excess = Math.max(0, (statuses[index]?.receivers ?? 0) - target);
        return generator.run<number>({ type: "closeReceivers", count: excess }, 60_000);
      }),
    );
  }

  /** Bids while every receiving socket records arrivals; returns the bids and what arrived. */
  async bidAndCollect(
    bid: Omit<BidCommand, "type" | "returnAccepts">,
    warmupMs: number,
  ): Promise<{ bids: BidResult; collected: CollectResult[] }> {
    await Promise.all(this.receivers.map((generator) => generator.run({ type: "startRecording" }, 10_000)));
    this.lastFloor = 0;
    const bids = await this.bidder.run<BidResult>(
      { type: "bid", returnAccepts: true, ...bid },
      bid.durationMs + 60_000,
    );
    const lastId = Math.max(0, ...bids.accepts.map(([id]) => id));
    // Let every socket read the last broadcast before collecting.
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (Date.now() < deadline && Math.min(...this.receivers.map((generator) => generator.lowestLastId)) < lastId) {
      await sleep(50);
    }
    const windowStartMs = bids.startedAtMs + warmupMs;
    const collected = await Promise.all(
      this.receivers.map((generator) =>
        generator.run<CollectResult>(
          { type: "collect", accepts: bids.accepts, windowStartMs, windowEndMs: bids.endedAtMs },
          60_000,
        ),
      ),
    );
    return { bids, collected };
  }

  async stop(): Promise<void> {
    await Promise.all(this.generators.map((generator) => generator.stop()));
  }
}
