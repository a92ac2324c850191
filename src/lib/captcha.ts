/**
 * The mock CAPTCHA (docs/product-behaviour.md#4 and docs/product-reference.md#9) as a state machine. Pure: the island runs the
 * timers and passes the random draw in when verification ends.
 *
 * idle --verify--> verifying --resolve--> solved | failed --hideHint (3 s)--> idle
 */
import { CAPTCHA_HINTS } from "../data/captcha.ts";

export const CAPTCHA_SQUARES = 9;
export const CAPTCHA_VERIFY_MS = 2_000;
export const CAPTCHA_PASS_CHANCE = 0.7;
/** From the third attempt on, the CAPTCHA lets everyone through. */
const CAPTCHA_FORCED_PASS_AFTER = 2;
export const CAPTCHA_HINT_MS = 3_000;

type CaptchaPhase = "idle" | "verifying" | "failed" | "solved";

export interface CaptchaState {
  phase: CaptchaPhase;
  /** One flag per square, in reading order. */
  selected: readonly boolean[];
  /** Verifications started since the last "Try Again". */
  attempts: number;
  /** Hints shown so far, never reset, so the four hints keep rotating across "Try Again". */
  hintsShown: number;
  /** The hint on screen while failed. */
  hint: string | null;
}

export type CaptchaEvent =
  | { type: "toggle"; square: number }
  | { type: "refresh" }
  | { type: "verify" }
  /** Verification time is up; `random` is a draw in [0, 1). */
  | { type: "resolve"; random: number }
  | { type: "hideHint" }
  | { type: "tryAgain" };

export const INITIAL_CAPTCHA: CaptchaState = {
  phase: "idle",
  selected: Array<boolean>(CAPTCHA_SQUARES).fill(false),
  attempts: 0,
  hintsShown: 0,
  hint: null,
};

export const selectedCount = (state: CaptchaState) => state.selected.filter(Boolean).length;

/** Verify needs a selection and no verification under way (docs/product-behaviour.md#5). */
export const canVerify = (state: CaptchaState) =>
  (state.phase === "idle" || state.phase === "failed") && selectedCount(state) > 0;

/** Squares and Refresh work until the check starts or is won. */
export const canEditSelection = (state: CaptchaState) => state.phase === "idle" || state.phase === "failed";

/** "Try Again" is offered after a failure or a success (docs/product.md#2). */
export const canTryAgain = (state: CaptchaState) =>
  state.phase === "solved" || (state.phase !== "verifying" && state.attempts > 0);

export function captchaReducer(state: CaptchaState, event: CaptchaEvent): CaptchaState {
  switch (event.type) {
    case "toggle": {
      if (!canEditSelection(state) || event.square < 0 || event.square >= CAPTCHA_SQUARES) return state;
      const selected = state.selected.map((on, index) => (index === event.square ? !on : on));
      return { ...state, selected };
    }
    case "refresh":
      return canEditSelection(state) ? { ...state, selected: INITIAL_CAPTCHA.selected } : state;
    case "verify":
      return canVerify(state) ? { ...state, phase: "verifying", attempts: state.attempts + 1, hint: null } : state;
    case "resolve": {
      if (state.phase !== "verifying") return state;
      // `attempts` already counts this one: the attempts made before the click are one fewer.
      const forced = state.attempts - 1 >= CAPTCHA_FORCED_PASS_AFTER;
      if (forced || event.random < CAPTCHA_PASS_CHANCE) return { ...state, phase: "solved" };
      const hint = CAPTCHA_HINTS[state.hintsShown % CAPTCHA_HINTS.length] ?? CAPTCHA_HINTS[0];
      return { ...state, phase: "failed", hint, hintsShown: state.hintsShown + 1 };
    }
    case "hideHint":
      return state.phase === "failed" ? { ...state, phase: "idle", hint: null } : state;
    case "tryAgain":
      return { ...INITIAL_CAPTCHA, hintsShown: state.hintsShown };
  }
}
