/**
 * Latencies in milliseconds, counted in fixed buckets so that the load generators can merge theirs:
 * 0.02 ms wide from -1 s to +1 s (a broadcast can reach a socket before the bidder reads its
 * acknowledgement, so negative values are real), then 1 ms wide up to two minutes. The exact
 * minimum and maximum are kept beside the buckets.
 */

const FINE_LOW_MS = -1_000;
const FINE_HIGH_MS = 1_000;
const FINE_STEP_MS = 0.02;
const COARSE_HIGH_MS = 120_000;
const COARSE_STEP_MS = 1;
const FINE_BUCKETS = Math.round((FINE_HIGH_MS - FINE_LOW_MS) / FINE_STEP_MS);
const BUCKETS = FINE_BUCKETS + Math.round((COARSE_HIGH_MS - FINE_HIGH_MS) / COARSE_STEP_MS);

/** What a generator sends back: the non-empty buckets only. */
export interface SparseHistogram {
  buckets: [index: number, count: number][];
  count: number;
  minMs: number;
  maxMs: number;
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function bucketOf(ms: number): number {
  if (ms < FINE_LOW_MS) return 0;
  if (ms < FINE_HIGH_MS) return Math.floor((ms - FINE_LOW_MS) / FINE_STEP_MS);
  return Math.min(BUCKETS - 1, FINE_BUCKETS + Math.floor((ms - FINE_HIGH_MS) / COARSE_STEP_MS));
}

/** The upper edge of a bucket: a percentile is never reported below the true value. */
function upperEdgeOf(index: number): number {
  if (index < FINE_BUCKETS) return FINE_LOW_MS + (index + 1) * FINE_STEP_MS;
  return FINE_HIGH_MS + (index - FINE_BUCKETS + 1) * COARSE_STEP_MS;
}

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  minMs = Number.POSITIVE_INFINITY;
  maxMs = Number.NEGATIVE_INFINITY;

  record(ms: number): void {
    const index = bucketOf(ms);
    this.counts[index] = (this.counts[index] ?? 0) + 1;
    this.count += 1;
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  toSparse(): SparseHistogram {
    const buckets: [number, number][] = [];
    for (let index = 0; index < BUCKETS; index += 1) {
      const count = this.counts[index] ?? 0;
      if (count > 0) buckets.push([index, count]);
    }
    return { buckets, count: this.count, minMs: this.minMs, maxMs: this.maxMs };
  }

  add(sparse: SparseHistogram): void {
    for (const [index, count] of sparse.buckets) this.counts[index] = (this.counts[index] ?? 0) + count;
    this.count += sparse.count;
    if (sparse.count > 0) {
      this.minMs = Math.min(this.minMs, sparse.minMs);
      this.maxMs = Math.max(this.maxMs, sparse.maxMs);
    }
  }

  percentile(fraction: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(fraction * this.count));
    let seen = 0;
    for (let index = 0; index < BUCKETS; index += 1) {
      seen += this.counts[index] ?? 0;
      if (seen >= rank) return Math.min(upperEdgeOf(index), this.maxMs);
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    const round = (ms: number) => Math.round(ms * 100) / 100;
    return {
      count: this.count,
      p50Ms: round(this.percentile(0.5)),
      p99Ms: round(this.percentile(0.99)),
      maxMs: this.count === 0 ? Number.NaN : round(this.maxMs),
    };
  }
}
