import { describe, expect, it } from "vitest";
import { CAPTCHA_HINTS } from "../../src/data/captcha.ts";
import {
  CAPTCHA_PASS_CHANCE,
  CAPTCHA_SQUARES,
  type CaptchaEvent,
  type CaptchaState,
  canTryAgain,
  canVerify,
  captchaReducer,
  INITIAL_CAPTCHA,
  selectedCount,
} from "../../src/lib/captcha.ts";

const run = (events: CaptchaEvent[], state: CaptchaState = INITIAL_CAPTCHA) => events.reduce(captchaReducer, state);
const toggle = (square: number): CaptchaEvent => ({ type: "toggle", square });
const verify: CaptchaEvent = { type: "verify" };
const pass: CaptchaEvent = { type: "resolve", random: 0 };
const fail: CaptchaEvent = { type: "resolve", random: 0.99 };
/** One failed attempt, its hint shown and then hidden after 3 s. */
const failedAttempt: CaptchaEvent[] = [verify, fail, { type: "hideHint" }];

describe("CAPTCHA", () => {
  it("has nine squares, none selected, and Verify disabled", () => {
    expect(INITIAL_CAPTCHA.selected).toHaveLength(CAPTCHA_SQUARES);
    expect(selectedCount(INITIAL_CAPTCHA)).toBe(0);
    expect(canVerify(INITIAL_CAPTCHA)).toBe(false);
    expect(run([verify])).toEqual(INITIAL_CAPTCHA);
  });

  it("toggles a square on and off, and ignores squares outside the grid", () => {
    expect(run([toggle(4)]).selected[4]).toBe(true);
    expect(run([toggle(4), toggle(4)]).selected[4]).toBe(false);
    expect(run([toggle(9), toggle(-1)])).toEqual(INITIAL_CAPTCHA);
  });

  it("Refresh clears the selection", () => {
    const state = run([toggle(0), toggle(8), { type: "refresh" }]);
    expect(selectedCount(state)).toBe(0);
  });

  it("Verify starts a verification that locks the grid and Verify", () => {
    const state = run([toggle(2), verify]);
    expect(state).toMatchObject({ phase: "verifying", attempts: 1 });
    expect(canVerify(state)).toBe(false);
    expect(run([toggle(3), { type: "refresh" }, verify], state)).toEqual(state);
  });

  it(`passes with a draw under ${CAPTCHA_PASS_CHANCE} and shows the success state`, () => {
    expect(run([toggle(0), verify, { type: "resolve", random: 0 }]).phase).toBe("solved");
    expect(run([toggle(0), verify, { type: "resolve", random: 0.6999 }]).phase).toBe("solved");
    expect(run([toggle(0), verify, { type: "resolve", random: 0.7 }]).phase).toBe("failed");
  });

  it("a failure shows the first hint, keeps the selection, and the hint goes away", () => {
    const failed = run([toggle(1), verify, fail]);
    expect(failed).toMatchObject({ phase: "failed", hint: CAPTCHA_HINTS[0] });
    expect(failed.selected[1]).toBe(true);
    expect(canTryAgain(failed)).toBe(true);
    expect(run([{ type: "hideHint" }], failed)).toMatchObject({ phase: "idle", hint: null });
  });

  it("always passes from the third attempt (two attempts already made), whatever the draw", () => {
    const twoFailed = run([toggle(0), ...failedAttempt, ...failedAttempt]);
    expect(twoFailed.attempts).toBe(2);
    expect(run([verify, { type: "resolve", random: 0.999 }], twoFailed).phase).toBe("solved");
  });

  it("the second attempt can still fail", () => {
    const oneFailed = run([toggle(0), ...failedAttempt]);
    expect(run([verify, fail], oneFailed).phase).toBe("failed");
  });

  it("rotates through the four hints, also across Try Again", () => {
    const hints: (string | null)[] = [];
    let state = run([toggle(0)]);
    for (let round = 0; round < 3; round += 1) {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        state = run([verify, fail], state);
        hints.push(state.hint);
        state = run([{ type: "hideHint" }], state);
      }
      state = run([{ type: "tryAgain" }, toggle(0)], state);
    }
    expect(hints).toEqual([...CAPTCHA_HINTS, CAPTCHA_HINTS[0], CAPTCHA_HINTS[1]]);
  });

  it("Verify again while the hint shows starts the next attempt and hides the hint", () => {
    const state = run([toggle(0), verify, fail, verify]);
    expect(state).toMatchObject({ phase: "verifying", attempts: 2, hint: null });
    // The first hint's timer firing late does not touch the new verification.
    expect(run([{ type: "hideHint" }], state)).toEqual(state);
  });

  it("Try Again resets the state and the attempt counter", () => {
    const solved = run([toggle(0), toggle(5), ...failedAttempt, ...failedAttempt, verify, fail]);
    expect(solved.phase).toBe("solved");
    expect(canTryAgain(solved)).toBe(true);
    const fresh = run([{ type: "tryAgain" }], solved);
    expect(fresh).toEqual({ ...INITIAL_CAPTCHA, hintsShown: 2 });
    expect(canTryAgain(fresh)).toBe(false);
    // With the counter reset, the next attempt can fail again.
    expect(run([toggle(0), verify, fail], fresh).phase).toBe("failed");
  });

  it("a solved CAPTCHA ignores the grid, Refresh, a late resolve and hint timers", () => {
    const solved = run([toggle(0), verify, pass]);
    expect(run([toggle(3), { type: "refresh" }, verify, fail, { type: "hideHint" }], solved)).toEqual(solved);
  });
});
