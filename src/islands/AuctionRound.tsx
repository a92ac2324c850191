import { useEffect, useRef, useState } from "react";
import {
  type ClockReading,
  formatTimeLeft,
  type RoundPhase,
  readRound,
  wallClockLeapt,
} from "../lib/auction/countdown.ts";
import type { WireRound } from "../lib/auction/protocol.ts";
import { resyncAuction } from "../stores/auction.ts";

const TICK_MS = 1_000;

const readClocks = (): ClockReading => ({ monotonicMs: performance.now(), wallMs: Date.now() });

/**
 * The round's phase and time left by the service's clock (its last `now` plus this page's monotonic
 * time since, docs/design.md#9). It re-renders once a second only while a timed round counts down;
 * otherwise nothing ticks. Each tick also watches the wall clock: one that leapt ahead of the
 * monotonic clock (a wake from sleep, or a step) makes the page ask the service for its time again.
 */
export function useRoundClock(round: WireRound | null, serviceOffsetMs: number | null) {
  const [, setTick] = useState(0);
  // Kept across countdowns: a sleep between two rounds is still noticed at the next one's first tick.
  const lastReading = useRef<ClockReading | null>(null);
  // Read at render: before the first snapshot (and in the server's HTML) there is no clock, so the
  // time never reaches the markup that hydration compares.
  const { phase, msLeft } = readRound(round, serviceOffsetMs, performance.now());
  const counting = phase === "open" || phase === "going";
  useEffect(() => {
    if (!counting) return;
    lastReading.current ??= readClocks();
    const timer = setInterval(() => {
      const reading = readClocks();
      if (lastReading.current && wallClockLeapt(lastReading.current, reading)) resyncAuction();
      lastReading.current = reading;
      setTick((tick) => tick + 1);
    }, TICK_MS);
    return () => clearInterval(timer);
  }, [counting]);
  return { phase, msLeft };
}

/**
 * The line under the leader's: the countdown, "Going, going…" near the end, and after the end
 * the invitation to open the next round. Nothing when rounds are off or none has opened yet.
 * role="timer" is not live: screen readers read it when asked, not every second; the end is
 * announced once, by the "Sold!" toast. Inside the soft-close window it says what a late bid does.
 */
export function RoundStatus({
  phase,
  msLeft,
  softCloseSeconds,
}: {
  phase: RoundPhase;
  msLeft: number;
  softCloseSeconds: number;
}) {
  if (phase === "ended") return <p className="font-semibold text-accent-strong">The next bid opens a new round</p>;
  if (phase !== "open" && phase !== "going" && phase !== "closing") return null;
  return (
    <div className="flex flex-wrap items-baseline gap-x-3">
      <p role="timer" className="font-mono tabular-nums">
        {formatTimeLeft(msLeft)}
      </p>
      {phase !== "open" && <p className="font-semibold text-gold">Going, going…</p>}
      {phase === "going" && (
        <p className="w-full text-sm text-ink-muted">
          Late bids extend the round: it ends {softCloseSeconds} s after the latest bid.
        </p>
      )}
    </div>
  );
}
