/**
 * The crystal ball (docs/product-behaviour.md#4): idle -> consulting for FORTUNE_DELAY_MS -> revealed.
 * Pure: the island owns the timer and calls `reveal` when it fires.
 */

export const FORTUNE_DELAY_MS = 2_000;
/** The only fortune there is. The ellipsis is one character, as in docs/product-behaviour.md#4-fortune. */
export const FORTUNE_TEXT = "The future holds… nothing.";

type FortunePhase = "idle" | "consulting" | "revealed";

export interface FortuneState {
  phase: FortunePhase;
  /** Fortunes told: rises on every consultation, at the click. */
  told: number;
}

export const INITIAL_FORTUNE: FortuneState = { phase: "idle", told: 0 };

/** A click on the button. Ignored while the ball is still consulting, so one click is one fortune. */
export function consult(state: FortuneState): FortuneState {
  if (state.phase === "consulting") return state;
  return { phase: "consulting", told: state.told + 1 };
}

/** The FORTUNE_DELAY_MS timer fired. */
export function reveal(state: FortuneState): FortuneState {
  return state.phase === "consulting" ? { ...state, phase: "revealed" } : state;
}

/** The button's text, which is also its accessible name (docs/design.md#3a). */
export function fortuneButtonLabel(state: FortuneState): string {
  if (state.phase === "consulting") return "Consulting...";
  return state.told === 0 ? "Consult the Crystal Ball" : "Consult Again";
}
