import { useEffect, useState } from "react";
import { formatCount } from "../lib/format.ts";
import {
  consult,
  FORTUNE_DELAY_MS,
  FORTUNE_TEXT,
  fortuneButtonLabel,
  INITIAL_FORTUNE,
  reveal,
} from "../lib/fortune.ts";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import { useHydrated } from "./useHydrated.ts";

/** The crystal ball: swirls while consulting (not under reduced motion), then reveals the one fortune. */
function FortuneTeller() {
  const hydrated = useHydrated();
  const [state, setState] = useState(INITIAL_FORTUNE);
  const consulting = state.phase === "consulting";

  useEffect(() => {
    if (!consulting) return;
    const timer = setTimeout(() => setState(reveal), FORTUNE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [consulting]);

  return (
    <div className="card flex flex-col items-center gap-6 text-center" data-fortune={state.phase}>
      <CrystalBall consulting={consulting} revealed={state.phase === "revealed"} />
      {/* Polite live region, present from the start, so the result is announced when it changes. */}
      <p role="status" className="min-h-14 text-xl font-bold text-ink text-balance">
        {consulting && <span className="text-ink-muted">The spirits are consulting the void...</span>}
        {state.phase === "revealed" && FORTUNE_TEXT}
        {state.phase === "idle" && <span className="text-ink-muted">Ask, and the void shall answer.</span>}
      </p>
      <button
        type="button"
        className="btn-primary min-w-60 aria-disabled:cursor-wait aria-disabled:opacity-70"
        disabled={!hydrated}
        // aria-disabled rather than disabled while consulting: a keyboard user keeps focus on the button.
        aria-disabled={consulting}
        onClick={() => setState(consult)}
      >
        {fortuneButtonLabel(state)}
      </button>
      <p className="text-sm text-ink-muted">
        Fortunes told:{" "}
        <span className="font-bold text-ink tabular-nums" data-fortunes-told>
          {formatCount(state.told)}
        </span>
      </p>
    </div>
  );
}

function CrystalBall({ consulting, revealed }: { consulting: boolean; revealed: boolean }) {
  return (
    <svg viewBox="0 0 160 170" className="h-44 w-44" aria-hidden="true" data-crystal-ball>
      <defs>
        <radialGradient id="fortune-glass" cx="40%" cy="35%" r="70%">
          <stop offset="0" className="[stop-color:var(--c-ink)]" stopOpacity="0.9" />
          <stop offset="0.35" className="[stop-color:var(--c-accent)]" stopOpacity="0.55" />
          <stop offset="1" className="[stop-color:var(--c-void-600)]" />
        </radialGradient>
      </defs>
      <ellipse cx="80" cy="152" rx="46" ry="10" className="fill-void-600" />
      <path d="M44 150 L56 122 H104 L116 150 Z" className="fill-void-700 stroke-accent" strokeWidth="2" />
      <circle cx="80" cy="75" r="62" fill="url(#fortune-glass)" className="stroke-accent-strong" strokeWidth="2" />
      <g
        className={consulting ? "motion-safe:animate-spin" : ""}
        style={{ transformOrigin: "80px 75px", animationDuration: "1.5s" }}
        opacity={consulting ? 1 : revealed ? 0.35 : 0.6}
      >
        <path
          d="M50 75 C50 50 80 45 90 60 S100 95 80 95 S60 80 75 72"
          fill="none"
          className="stroke-gold"
          strokeWidth="3"
          strokeLinecap="round"
        />
        <path
          d="M110 80 C110 100 85 110 72 98"
          fill="none"
          className="stroke-accent-strong"
          strokeWidth="2.5"
          strokeLinecap="round"
        />
      </g>
      <ellipse cx="58" cy="48" rx="14" ry="8" className="fill-white" opacity="0.35" transform="rotate(-30 58 48)" />
    </svg>
  );
}

export default withErrorBoundary(FortuneTeller);
