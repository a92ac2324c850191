/**
 * The shop's pulse on the console (docs/decisions/2026-11-28-the-shops-pulse.md): bids per minute
 * and sales per hour over the last 24 hours, as plain SVG bars drawn here, with their text
 * equivalent (a summary under each chart and an hour-by-hour table). No script draws anything: the
 * console's live script swaps the section in like the lists.
 *
 * The series is read once for every console of this instance and kept REFRESH_MS: a page asks
 * for it, and while an event stream is open a timer reads it again when a bid landed or a minute
 * has turned since, and announces it on the streams if it changed. Many open consoles cost one
 * query every REFRESH_MS at most; none cost nothing. After the first, a read asks only for the
 * minutes from the one before the last kept (a bid's transaction may straddle a minute), the
 * older minutes kept as they were; a moderation, which may change any minute, makes the next read whole.
 */
import { formatCount } from "../../src/lib/format.ts";
import { PULSE_HOURS, PULSE_MINUTES, type PulseRead, type PulseSeries } from "../storage/pulse.ts";
import { type Html, html } from "./page.ts";

/** How long a series read serves every console, and how often open streams look for a new one. */
export const REFRESH_MS = 10_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** The charts' drawing box: one unit a minute across, bars up to CHART_HEIGHT. */
const CHART_HEIGHT = 100;

type Subscribe = (listener: () => void) => () => void;

interface PulseOptions {
  /**
   * Reads the series (store.admin.pulse at the console's time, with sales while payments are on),
   * its bids from `fromMinute` on (null: the whole window).
   */
  read: (fromMinute: Date | null) => Promise<PulseRead>;
  now: () => number;
  /** What may change it: the store's bids. */
  changes: Subscribe[];
  /**
   * What makes the series kept wrong at once: a moderation (rare, the operator's own), so that the
   * console an action redirects to never counts a bid just hidden.
   */
  invalidations?: Subscribe[];
  refreshMs?: number;
}

export function createPulse({ read, now, changes, invalidations = [], refreshMs = REFRESH_MS }: PulseOptions) {
  let kept: { series: PulseSeries; readAtMs: number; invalidated: number } | null = null;
  /** The time until which `kept` serves a page: REFRESH_MS after its read, or no more once invalidated. */
  let freshUntilMs = 0;
  /** Counts invalidations: a read that began before the last one is no answer after it. */
  let invalidated = 0;
  let reading: { promise: Promise<PulseSeries>; invalidated: number } | null = null;
  let changedSinceRead = false;
  const listeners = new Set<() => void>();
  let stopWatching: (() => void) | null = null;

  function readAgain(): Promise<PulseSeries> {
    if (reading?.invalidated === invalidated) return reading.promise;
    const readAtMs = now();
    const base = kept?.invalidated === invalidated ? kept.series : null;
    const fromMinute = base ? new Date(base.firstMinuteMs + (PULSE_MINUTES - 2) * MINUTE_MS) : null;
    const started = { invalidated, promise: read(fromMinute).then((read) => merged(base ?? read, read)) };
    reading = started;
    changedSinceRead = false;
    started.promise.then(
      (series) => {
        if (reading === started) reading = null;
        // A later read (after an invalidation) has the last word.
        if (kept && kept.readAtMs > readAtMs) return;
        kept = { series, readAtMs, invalidated: started.invalidated };
        if (started.invalidated === invalidated) freshUntilMs = readAtMs + refreshMs;
      },
      () => {
        if (reading === started) reading = null;
        changedSinceRead = true;
      },
    );
    return started.promise;
  }

  async function lookAgain() {
    const minuteTurned = kept !== null && Math.floor(now() / MINUTE_MS) !== Math.floor(kept.readAtMs / MINUTE_MS);
    if (kept !== null && !changedSinceRead && !minuteTurned) return;
    const before = kept && JSON.stringify(kept.series);
    try {
      const series = await readAgain();
      if (JSON.stringify(series) !== before) for (const listener of listeners) listener();
    } catch {
      // The database out of reach: the consoles keep what they show, and the next look tries again.
    }
  }

  function watch(): () => void {
    const unsubscribes = changes.map((subscribe) =>
      subscribe(() => {
        changedSinceRead = true;
      }),
    );
    const timer = setInterval(lookAgain, refreshMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
    };
  }

  // For the console's lifetime: one listener each, however many consoles are open.
  for (const subscribe of invalidations) {
    subscribe(() => {
      invalidated += 1;
      freshUntilMs = 0;
      changedSinceRead = true;
    });
  }

  return {
    /** The series, read again if the one kept is REFRESH_MS old or was invalidated. */
    current(): Promise<PulseSeries> {
      return kept && now() < freshUntilMs ? Promise.resolve(kept.series) : readAgain();
    },
    /** Calls `listener` whenever the series changed; returns unsubscribe. */
    onChange(listener: () => void): () => void {
      listeners.add(listener);
      stopWatching ??= watch();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && stopWatching) {
          stopWatching();
          stopWatching = null;
        }
      };
    },
  };
}

/** The window `read` ends, its minutes before `read.fromMinuteMs` taken from `kept` (zero if older). */
export function merged(kept: PulseSeries, read: PulseRead): PulseSeries {
  const bidsPerMinute = Array.from({ length: PULSE_MINUTES }, (_, index) => {
    const minuteMs = read.firstMinuteMs + index * MINUTE_MS;
    const source = minuteMs >= read.fromMinuteMs ? read : kept;
    const from = source === read ? read.fromMinuteMs : kept.firstMinuteMs;
    return source.bidsPerMinute[(minuteMs - from) / MINUTE_MS] ?? 0;
  });
  return {
    firstMinuteMs: read.firstMinuteMs,
    bidsPerMinute,
    firstHourMs: read.firstHourMs,
    salesPerHour: read.salesPerHour,
  };
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** HH:MM in UTC, in a <time> carrying the whole instant. */
function clockTime(ms: number): Html {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(11, 16)} UTC</time>`;
}

/** The busiest bucket: its index and count (the first of equals); null when all are zero. */
function busiest(values: readonly number[]): { index: number; count: number } | null {
  let best: { index: number; count: number } | null = null;
  for (const [index, count] of values.entries()) if (count > (best?.count ?? 0)) best = { index, count };
  return best;
}

/** One bar per bucket, `width` units apart, scaled to the busiest; one path for them all. */
function bars(values: readonly number[], width: number, gap: number): string {
  const peak = Math.max(1, ...values);
  return values
    .map((count, index) => {
      if (count === 0) return "";
      const height = Math.max(2, (count / peak) * CHART_HEIGHT);
      return `M${index * width + gap / 2} ${CHART_HEIGHT}v-${height.toFixed(1)}h${width - gap}V${CHART_HEIGHT}z`;
    })
    .join("");
}

function chart(id: string, label: string, path: string, caption: Html): Html {
  const width = PULSE_MINUTES;
  return html`<figure id="${id}"><svg role="img" aria-label="${label}" viewBox="0 0 ${width} ${CHART_HEIGHT}" preserveAspectRatio="none" width="100%" height="80" focusable="false"><path d="${path}" fill="currentColor"/><path d="M0 ${CHART_HEIGHT}H${width}" stroke="currentColor" vector-effect="non-scaling-stroke"/></svg><p class="pulse-axis" aria-hidden="true"><span>24 h ago</span><span>12 h ago</span><span>now</span></p><figcaption>${caption}</figcaption></figure>`;
}

function bidsSummary(series: PulseSeries): Html {
  const perMinute = series.bidsPerMinute;
  const total = sum(perMinute);
  if (total === 0) return html`Bids per minute: <strong id="pulse-bids-hour">no bids</strong> in the last 24 hours.`;
  const peak = busiest(perMinute);
  const latest = perMinute.findLastIndex((count) => count > 0);
  const minuteAt = (index: number) => series.firstMinuteMs + index * MINUTE_MS;
  return html`Bids per minute: <strong id="pulse-bids-hour">${formatCount(sum(perMinute.slice(-60)))} in the last hour</strong>, ${formatCount(total)} in 24 hours; the busiest minute ${peak ? clockTime(minuteAt(peak.index)) : ""} with ${formatCount(peak?.count ?? 0)}; the latest bid in the minute of ${clockTime(minuteAt(latest))}.`;
}

function salesSummary(series: PulseSeries, perHour: readonly number[]): Html {
  const total = sum(perHour);
  if (total === 0) return html`Sales per hour: <strong id="pulse-sales-hour">no sales</strong> in the last 24 hours.`;
  const peak = busiest(perHour);
  return html`Sales per hour: <strong id="pulse-sales-hour">${formatCount(perHour.at(-1) ?? 0)} this hour</strong>, ${formatCount(total)} in 24 hours; the busiest hour from ${peak ? clockTime(series.firstHourMs + peak.index * HOUR_MS) : ""} with ${formatCount(peak?.count ?? 0)}.`;
}

/** The 24 clock hours of the sales, with the bids of each (the minutes before the first hour aside). */
function hourTable(series: PulseSeries): Html {
  const bidsPerHour = new Array<number>(PULSE_HOURS).fill(0);
  series.bidsPerMinute.forEach((count, index) => {
    const hour = Math.floor((series.firstMinuteMs + index * MINUTE_MS - series.firstHourMs) / HOUR_MS);
    if (hour >= 0 && hour < PULSE_HOURS) bidsPerHour[hour] = (bidsPerHour[hour] ?? 0) + count;
  });
  const sales = series.salesPerHour;
  const rows = bidsPerHour.map(
    (bids, hour) =>
      html`<tr><th scope="row">${clockTime(series.firstHourMs + hour * HOUR_MS)}</th><td>${formatCount(bids)}</td>${sales ? html`<td>${formatCount(sales[hour] ?? 0)}</td>` : ""}</tr>`,
  );
  return html`<details id="pulse-hours"><summary>Hour by hour</summary><table><caption>Bids${sales ? " and sales" : ""} per hour, the hour's start in UTC, oldest first</caption><thead><tr><th scope="col">Hour</th><th scope="col">Bids</th>${sales ? html`<th scope="col">Sales</th>` : ""}</tr></thead><tbody>${rows}</tbody></table></details>`;
}

/** The console's pulse section; `series.salesPerHour` null: payments are off, and it says so. */
export function pulseSection(series: PulseSeries): Html {
  const bidsChart = chart(
    "pulse-bids",
    `Bar chart of bids per minute over the last 24 hours, at most ${formatCount(Math.max(0, ...series.bidsPerMinute))} a minute`,
    bars(series.bidsPerMinute, 1, 0),
    bidsSummary(series),
  );
  const perHour = series.salesPerHour;
  const salesChart = perHour
    ? chart(
        "pulse-sales",
        `Bar chart of sales per hour over the last 24 hours, at most ${formatCount(Math.max(0, ...perHour))} an hour`,
        bars(perHour, PULSE_MINUTES / PULSE_HOURS, 12),
        salesSummary(series, perHour),
      )
    : html`<p id="pulse-sales">Sales per hour: payments are off.</p>`;
  return html`<section id="pulse" aria-labelledby="pulse-heading"><h2 id="pulse-heading">Pulse</h2>${bidsChart}${salesChart}${hourTable(series)}</section>`;
}
