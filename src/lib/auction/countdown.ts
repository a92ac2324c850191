/**
 * A round's clock as the page shows it (docs/design.md#6b), with no DOM: the service's time now, the
 * phase a round is in at a moment of it, the time left as the countdown reads, and the highest bid a
 * new one must beat. The service's time is its `now` at the last message that carried one plus the
 * time elapsed since on the page's monotonic clock (docs/design.md#9), so the page's wall clock,
 * wrong or moved while the page is open, changes nothing. The monotonic clock is passed in.
 */
import type { WireRound } from "./protocol.ts";

/**
 * - none: no round yet (before the first snapshot, or before the first bid opens round 1);
 * - endless: rounds are off, one auction as docs/product-behaviour.md#4-auction has it;
 * - open: counting down; going: inside the soft-close window;
 * - closing: the time is up here, but the service's end message has not arrived yet;
 * - ended: the service has recorded the end; the next bid opens a new round.
 */
export type RoundPhase = "none" | "endless" | "open" | "going" | "closing" | "ended";

const SECOND_MS = 1_000;

/**
 * The service's time at `monotonicNowMs` on this page's monotonic clock (performance.now()), given
 * `serviceOffsetMs`: the `now` of the last message that carried one minus the monotonic clock's
 * reading when it arrived. So it is that `now` plus the monotonic time elapsed since.
 */
export function serviceNowMs(serviceOffsetMs: number, monotonicNowMs: number): number {
  return serviceOffsetMs + monotonicNowMs;
}

/** Milliseconds from `serviceNowMs` to the round's end (negative once past); null without an end. */
export function timeLeftMs(round: WireRound | null, serviceNowMs: number): number | null {
  return round?.endsAt ? Date.parse(round.endsAt) - serviceNowMs : null;
}

export function roundPhase(round: WireRound | null, serviceNowMs: number): RoundPhase {
  if (round === null || round.number === 0) return "none";
  if (round.ended) return "ended";
  const left = timeLeftMs(round, serviceNowMs);
  if (left === null) return "endless";
  if (left <= 0) return "closing";
  return left < round.softCloseSeconds * SECOND_MS ? "going" : "open";
}

/**
 * The phase and time left at `monotonicNowMs`. Without the service's time (before the first
 * message, which is also the first to carry a round) there is no round to time: none.
 */
export function readRound(
  round: WireRound | null,
  serviceOffsetMs: number | null,
  monotonicNowMs: number,
): { phase: RoundPhase; msLeft: number } {
  if (serviceOffsetMs === null) return { phase: "none", msLeft: 0 };
  const serviceNow = serviceNowMs(serviceOffsetMs, monotonicNowMs);
  return { phase: roundPhase(round, serviceNow), msLeft: timeLeftMs(round, serviceNow) ?? 0 };
}

/** Both of this page's clocks, read at once. */
export interface ClockReading {
  monotonicMs: number;
  wallMs: number;
}

/** A leap of the wall clock past the monotonic one beyond this between two readings is noticed. */
export const WALL_CLOCK_LEAP_MS = 1_000;

/**
 * Whether the page's wall clock ran ahead of its monotonic clock by more than WALL_CLOCK_LEAP_MS
 * between two readings. Either the machine slept (Chrome's monotonic clock stands still in sleep on
 * Linux and macOS, so the countdown is behind by the sleep) or the wall clock was stepped forward:
 * only the service can tell which, so the page asks it again. A wall clock set back is no sign of
 * sleep, and the monotonic clock is right: nothing to ask.
 */
export function wallClockLeapt(earlier: ClockReading, later: ClockReading): boolean {
  return later.wallMs - earlier.wallMs - (later.monotonicMs - earlier.monotonicMs) > WALL_CLOCK_LEAP_MS;
}

const twoDigits = (value: number) => String(value).padStart(2, "0");

/**
 * "Ends in 4:05" below one hour, "Ends in 1:00:00" from one hour. Whole seconds round up, so
 * "0:00" shows only once the time is up; never below it.
 */
export function formatTimeLeft(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / SECOND_MS) || 0);
  const hours = Math.floor(total / 3_600);
  const minutes = Math.floor((total % 3_600) / 60);
  const seconds = twoDigits(total % 60);
  return hours > 0 ? `Ends in ${hours}:${twoDigits(minutes)}:${seconds}` : `Ends in ${minutes}:${seconds}`;
}

/**
 * The highest bid a new one must beat, for the form's check and placeholder. None once the round
 * is over (ended, or its time up here): the next bid opens a new round at any amount.
 */
export function highestToBeat(phase: RoundPhase, highestCents: number | null): number | null {
  return phase === "ended" || phase === "closing" ? null : highestCents;
}
