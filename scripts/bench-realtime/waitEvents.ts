/**
 * What PostgreSQL's client backends are waiting on during a phase: pg_stat_activity sampled every
 * SAMPLE_MS through a connection of its own, as the mean number of active backends in each wait
 * ("running" when active with no wait, that is on a CPU). The evidence for what limits a rate:
 * commit flushes (IO:WALSync, LWLock:WALWrite), the auction's row lock (Lock:transactionid,
 * Lock:tuple), the notify queue's lock (Lock:object), or nothing (backends mostly idle).
 */
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";

const SAMPLE_MS = 50;
/** A sampler nobody stopped ends here anyway. */
const MAX_SAMPLING_MS = 600_000;

export interface WaitSamples {
  samples: number;
  /** Mean active client backends per wait event over the samples (other backends and this one excluded). */
  meanBackends: Record<string, number>;
}

export async function startWaitSampling(databaseUrl: string): Promise<() => Promise<WaitSamples>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const startedAt = Date.now();
  const loop = (async () => {
    while (running && Date.now() - startedAt < MAX_SAMPLING_MS) {
      const rows = await sql<{ wait: string; backends: number }[]>`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'running') AS wait, count(*)::int AS backends
        FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
        GROUP BY 1`;
      samples += 1;
      for (const row of rows) counts.set(row.wait, (counts.get(row.wait) ?? 0) + row.backends);
      await sleep(SAMPLE_MS);
    }
  })();
  return async () => {
    running = false;
    try {
      await loop;
    } finally {
      await sql.end({ timeout: 5 });
    }
    const meanBackends = Object.fromEntries(
      [...counts]
        .sort((a, b) => b[1] - a[1])
        .map(([wait, total]) => [wait, Math.round((total / Math.max(1, samples)) * 100) / 100]),
    );
    return { samples, meanBackends };
  };
}

/** The waits as a report line prints them: "IO:WALSync 0.61, running 0.2". */
export function waitsText(waits: WaitSamples | null): string {
  if (!waits) return "";
  const entries = Object.entries(waits.meanBackends).filter(([, mean]) => mean >= 0.01);
  return entries.length === 0 ? "none active" : entries.map(([wait, mean]) => `${wait} ${mean}`).join(", ");
}
