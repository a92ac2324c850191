/**
 * The database's own ceiling for the realtime benchmark (docs/design.md#6c): plain INSERTs, one row per
 * statement in autocommit, into a table of its own whose trigger NOTIFYs every row on a channel of
 * its own, with one connection LISTENing, at a fixed concurrency for a fixed time. No row lock, no
 * rules, no sockets: what a durable commit with a notification costs on this cluster. The table,
 * the trigger and its function are dropped before it exits, so the service's phases never see them.
 *
 * Usage (by scripts/bench-realtime.ts): node insertLoad.ts '<json options>'; prints one JSON line.
 *   { "databaseUrl": "postgres://…", "concurrency": 16, "durationMs": 8000 }
 *   { "dataDir": "/tmp/…", "concurrency": 16, "durationMs": 8000 }   (PGlite in a directory of its own)
 */
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { startWaitSampling, type WaitSamples } from "./waitEvents.ts";

interface Options {
  databaseUrl?: string;
  dataDir?: string;
  concurrency: number;
  durationMs: number;
}

export interface InsertLoadResult {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** Notifications the listening connection received (every row's, once they all arrived). */
  notified: number;
  /** PostgreSQL only: what the inserting backends waited on meanwhile. */
  waits: WaitSamples | null;
}

const CHANNEL = "bench_plain_inserts";
const SETUP = `
DROP TABLE IF EXISTS bench_plain_inserts;
CREATE TABLE bench_plain_inserts (
  id bigserial PRIMARY KEY,
  bidder_name text NOT NULL,
  amount numeric(12, 2) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION bench_plain_inserts_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${CHANNEL}', json_build_object(
    'id', NEW.id, 'bidderName', NEW.bidder_name, 'amount', NEW.amount::text, 'createdAt', NEW.created_at
  )::text);
  RETURN NULL;
END;
$$;
CREATE TRIGGER bench_plain_inserts_notify AFTER INSERT ON bench_plain_inserts
  FOR EACH ROW EXECUTE FUNCTION bench_plain_inserts_notify();
`;
const TEARDOWN = "DROP TABLE IF EXISTS bench_plain_inserts; DROP FUNCTION IF EXISTS bench_plain_inserts_notify();";
const INSERT_SQL = "INSERT INTO bench_plain_inserts (bidder_name, amount) VALUES ($1, $2)";
const NOTIFY_DRAIN_MS = 5_000;

const options = JSON.parse(process.argv[2] ?? "{}") as Options;

/** `concurrency` loops, each inserting one row at a time until the time is up. */
async function insertFor(insert: (name: string, amount: string) => Promise<unknown>) {
  let rows = 0;
  const startedAt = performance.now();
  const endAt = startedAt + options.durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, index) => {
      const name = `Plain Inserter ${index}`;
      while (performance.now() < endAt) {
        rows += 1;
        await insert(name, (rows / 100).toFixed(2));
      }
    }),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  return { rows, seconds: Math.round(seconds * 100) / 100, rowsPerSecond: Math.round(rows / seconds) };
}

/** Until every row's notification arrived, or the drain's bound. */
async function drained(rows: number, heard: () => number): Promise<number> {
  const deadline = performance.now() + NOTIFY_DRAIN_MS;
  while (heard() < rows && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return heard();
}

async function onPostgres(databaseUrl: string): Promise<InsertLoadResult> {
  const sql = postgres(databaseUrl, { max: options.concurrency, onnotice: () => {} });
  let heard = 0;
  try {
    await sql.unsafe(SETUP).simple();
    const listening = await sql.listen(CHANNEL, () => {
      heard += 1;
    });
    try {
      const stopSampling = await startWaitSampling(databaseUrl);
      const measured = await insertFor((name, amount) => sql.unsafe(INSERT_SQL, [name, amount]));
      const waits = await stopSampling();
      return { ...measured, notified: await drained(measured.rows, () => heard), waits };
    } finally {
      await listening.unlisten();
    }
  } finally {
    await sql.unsafe(TEARDOWN).simple();
    await sql.end({ timeout: 5 });
  }
}

async function onPglite(dataDir: string): Promise<InsertLoadResult> {
  const db = await PGlite.create({ dataDir });
  let heard = 0;
  try {
    await db.exec(SETUP);
    const unlisten = await db.listen(CHANNEL, () => {
      heard += 1;
    });
    const measured = await insertFor((name, amount) => db.query(INSERT_SQL, [name, amount]));
    const notified = await drained(measured.rows, () => heard);
    await unlisten();
    await db.exec(TEARDOWN);
    return { ...measured, notified, waits: null };
  } finally {
    await db.close();
  }
}

async function main() {
  if (options.databaseUrl) console.log(JSON.stringify(await onPostgres(options.databaseUrl)));
  else if (options.dataDir) console.log(JSON.stringify(await onPglite(options.dataDir)));
  else throw new Error("insertLoad needs databaseUrl or dataDir");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
