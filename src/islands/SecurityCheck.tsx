import { useEffect, useReducer, useRef } from "react";
import { CAPTCHA_SOLVED_TEXT } from "../data/captcha.ts";
import {
  CAPTCHA_HINT_MS,
  CAPTCHA_VERIFY_MS,
  canEditSelection,
  canTryAgain,
  canVerify,
  captchaReducer,
  INITIAL_CAPTCHA,
} from "../lib/captcha.ts";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import { useHydrated } from "./useHydrated.ts";

/** The "Security Check" card: nine toggle squares over the pure CAPTCHA state machine. */
function SecurityCheck() {
  const hydrated = useHydrated();
  const [state, dispatch] = useReducer(captchaReducer, INITIAL_CAPTCHA);
  const { phase } = state;
  const editable = hydrated && canEditSelection(state);
  const verifyEnabled = canVerify(state);
  const firstSquareRef = useRef<HTMLButtonElement>(null);
  const tryAgainRef = useRef<HTMLButtonElement>(null);
  const focusAfterTryAgain = useRef(false);

  useEffect(() => {
    if (phase !== "verifying") return;
    const timer = setTimeout(() => dispatch({ type: "resolve", random: Math.random() }), CAPTCHA_VERIFY_MS);
    return () => clearTimeout(timer);
  }, [phase]);

  // Every failure passes through "verifying", so each hint gets its own full 3 s.
  useEffect(() => {
    if (phase !== "failed") return;
    const timer = setTimeout(() => dispatch({ type: "hideHint" }), CAPTCHA_HINT_MS);
    return () => clearTimeout(timer);
  }, [phase]);

  // The grid gives way to the success message. Focus that was on a control now gone (it falls back
  // to the body) follows to the one that remains; focus the visitor moved elsewhere stays there.
  useEffect(() => {
    const focusLost = document.activeElement === null || document.activeElement === document.body;
    if (phase === "solved" && focusLost) tryAgainRef.current?.focus();
  }, [phase]);

  // "Try Again" removes itself: focus goes back to the start of the grid.
  useEffect(() => {
    if (!focusAfterTryAgain.current) return;
    focusAfterTryAgain.current = false;
    firstSquareRef.current?.focus();
  });

  const tryAgain = () => {
    focusAfterTryAgain.current = true;
    dispatch({ type: "tryAgain" });
  };

  return (
    <div className="card mx-auto w-full max-w-sm" data-captcha={phase}>
      <h3 className="text-xl font-bold">Security Check</h3>
      {phase !== "solved" && (
        <fieldset className="m-0 mt-1 border-0 p-0">
          <legend className="p-0 text-sm text-ink-muted">Select all squares containing nothing.</legend>
          <div className="mt-4 grid grid-cols-3 gap-2">
            {state.selected.map((selected, index) => (
              <button
                // The squares never move: the index is their identity.
                // biome-ignore lint/suspicious/noArrayIndexKey: fixed 3x3 grid
                key={index}
                ref={index === 0 ? firstSquareRef : undefined}
                type="button"
                aria-label={`Square ${index + 1}`}
                aria-pressed={selected}
                disabled={!editable}
                onClick={() => dispatch({ type: "toggle", square: index })}
                className={`grid aspect-square place-items-center rounded-lg border-2 text-2xl font-bold transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent-strong ${
                  selected
                    ? "border-accent bg-accent/20 text-accent-strong"
                    : "border-void-600 bg-void-700 hover:border-accent"
                }`}
              >
                <span aria-hidden="true">{selected ? "✓" : ""}</span>
              </button>
            ))}
          </div>
        </fieldset>
      )}

      <div role="status" className="mt-4 min-h-7 text-center">
        {phase === "verifying" && <p className="text-ink-muted">Verifying that you are nothing...</p>}
        {phase === "failed" && <p className="font-semibold text-gold">{state.hint}</p>}
        {phase === "solved" && (
          <>
            <p className="text-2xl font-black text-accent-strong">{CAPTCHA_SOLVED_TEXT}</p>
            <p className="mt-1 text-sm text-ink-muted">You are officially human. Or nothing. Either way, welcome.</p>
          </>
        )}
      </div>

      <div className="mt-4 flex flex-wrap justify-center gap-2">
        {phase !== "solved" && (
          <>
            <button
              type="button"
              className="btn-primary aria-disabled:cursor-not-allowed aria-disabled:opacity-60"
              disabled={!hydrated}
              // aria-disabled rather than disabled: focus stays on the button through a verification.
              aria-disabled={!verifyEnabled}
              onClick={() => verifyEnabled && dispatch({ type: "verify" })}
            >
              {phase === "verifying" ? "Verifying..." : "Verify"}
            </button>
            <button
              type="button"
              className="btn-outline"
              disabled={!editable}
              onClick={() => dispatch({ type: "refresh" })}
            >
              Refresh
            </button>
          </>
        )}
        {canTryAgain(state) && (
          <button ref={tryAgainRef} type="button" className="btn-outline" disabled={!hydrated} onClick={tryAgain}>
            Try Again
          </button>
        )}
      </div>
    </div>
  );
}

export default withErrorBoundary(SecurityCheck);
