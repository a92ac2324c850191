/**
 * The shop's pulse for the operator console (docs/decisions/2026-11-28-the-shops-pulse.md): visible
 * bids per minute over the last 24 hours, and confirmed sales per hour, bucketed in SQL with every
 * empty bucket a zero. One statement, the same on both backends.
 *
 * auction_bids has no index on created_at: ids rise in commit order and created_at is the placing
 * transaction's time, so the day is the id range after the newest bid older than the window, read
 * by two scans of the primary key (backward to that bid, then forward over the day). A bid placed
 * while the window's first minute turns may fall a few milliseconds out of id order: it is then
 * counted in its neighbour's minute or left out, at the edge 24 hours back only.
 *
 * A read may start at a later minute (`fromMinute`): the console keeps the minutes it read and asks
 * only for the newest, a backward scan of the last seconds' bids instead of the day's.
 */
import type { Query } from "./payments.ts";

/** Minutes of bids, hours of sales: the last 24 hours, the current minute and hour last. */
export const PULSE_MINUTES = 24 * 60;
export const PULSE_HOURS = 24;

export interface PulseSeries {
  /** The window's first minute's start, in milliseconds since the epoch (UTC minutes, as every bucket). */
  firstMinuteMs: number;
  /** Visible bids (neither hidden nor of a blocked name), of every round, per minute: PULSE_MINUTES of them. */
  bidsPerMinute: number[];
  /** The first hour's start. */
  firstHourMs: number;
  /** Confirmed payments per hour by their confirmation: PULSE_HOURS of them; null while payments are off. */
  salesPerHour: number[] | null;
}

/** A read: the window's bids per minute from `fromMinuteMs` (the first minute, unless asked later) to the last. */
export interface PulseRead extends PulseSeries {
  fromMinuteMs: number;
}

// Buckets start on whole UTC minutes and hours whatever the session's time zone (date_trunc on a
// timestamptz would follow it, and half-hour zones would shift the hours).
const ORIGIN = "timestamptz '2000-01-01 00:00:00+00'";
// One time for the whole statement: statement_timestamp() is when it arrived.
const NOW = "coalesce($1::timestamptz, statement_timestamp())";
const THIS_MINUTE = `date_bin('1 minute', ${NOW}, ${ORIGIN})`;
const FIRST_MINUTE = `(${THIS_MINUTE} - interval '${PULSE_MINUTES - 1} minutes')`;
const THIS_HOUR = `date_bin('1 hour', ${NOW}, ${ORIGIN})`;
const FIRST_HOUR = `(${THIS_HOUR} - interval '${PULSE_HOURS - 1} hours')`;
// greatest() passes over a null $3: the whole window.
const FROM_MINUTE = `greatest(${FIRST_MINUTE}, date_bin('1 minute', $3::timestamptz, ${ORIGIN}))`;

/**
 * $1 the time it is (null: the database's), $2 whether to read the sales (payments on), $3 the
 * minute to count bids from (null: the window's first).
 */
const PULSE_SQL = `SELECT
  (extract(epoch FROM ${FIRST_MINUTE}) * 1000)::bigint AS first_minute_ms,
  (extract(epoch FROM ${FROM_MINUTE}) * 1000)::bigint AS from_minute_ms,
  (extract(epoch FROM ${FIRST_HOUR}) * 1000)::bigint AS first_hour_ms,
  (SELECT json_agg(coalesce(counted.bids, 0) ORDER BY slot.minute)
    FROM generate_series(${FROM_MINUTE}, ${THIS_MINUTE}, interval '1 minute') AS slot (minute)
    LEFT JOIN (
      SELECT date_bin('1 minute', created_at, ${ORIGIN}) AS minute, count(*)::integer AS bids
      FROM auction_bids
      WHERE id > coalesce(
          (SELECT id FROM auction_bids WHERE created_at < ${FROM_MINUTE} ORDER BY id DESC LIMIT 1), 0)
        AND created_at >= ${FROM_MINUTE} AND created_at < ${THIS_MINUTE} + interval '1 minute'
        AND hidden_at IS NULL AND NOT name_blocked
      GROUP BY 1
    ) AS counted ON counted.minute = slot.minute
  ) AS bids_per_minute,
  CASE WHEN $2::boolean THEN (SELECT json_agg(coalesce(counted.sales, 0) ORDER BY slot.hour)
    FROM generate_series(${FIRST_HOUR}, ${THIS_HOUR}, interval '1 hour') AS slot (hour)
    LEFT JOIN (
      SELECT date_bin('1 hour', confirmed_at, ${ORIGIN}) AS hour, count(*)::integer AS sales
      FROM payments
      WHERE status = 'confirmed' AND confirmed_at >= ${FIRST_HOUR} AND confirmed_at < ${THIS_HOUR} + interval '1 hour'
      GROUP BY 1
    ) AS counted ON counted.hour = slot.hour
  ) END AS sales_per_hour`;

/** json_agg arrives parsed from PGlite and as text from postgres.js. */
function counts(value: unknown, length: number): number[] {
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : value;
  if (!Array.isArray(parsed) || parsed.length !== length) throw new Error(`the pulse read returned ${String(value)}`);
  return parsed.map(Number);
}

/**
 * The pulse at `at` (null: the database's clock); the sales only if `withSales`; the bids from the
 * minute of `fromMinute` on (null: the whole window).
 */
export async function readPulse(
  query: Query,
  at: Date | null,
  withSales: boolean,
  fromMinute: Date | null = null,
): Promise<PulseRead> {
  const [row] = await query(PULSE_SQL, [at?.toISOString() ?? null, withSales, fromMinute?.toISOString() ?? null]);
  if (!row) throw new Error("the pulse read returned no row");
  const firstMinuteMs = Number(row.first_minute_ms);
  const fromMinuteMs = Number(row.from_minute_ms);
  return {
    firstMinuteMs,
    fromMinuteMs,
    bidsPerMinute: counts(row.bids_per_minute, PULSE_MINUTES - (fromMinuteMs - firstMinuteMs) / 60_000),
    firstHourMs: Number(row.first_hour_ms),
    salesPerHour: withSales ? counts(row.sales_per_hour, PULSE_HOURS) : null,
  };
}
