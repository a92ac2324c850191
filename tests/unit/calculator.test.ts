import { describe, expect, it } from "vitest";
import { CALCULATOR_MESSAGES } from "../../src/data/calculator.ts";
import {
  CALC_KEYPAD,
  CALC_OPERATIONS,
  type CalcAction,
  type CalcState,
  calculatorReducer,
  DISPLAY_MAX_LENGTH,
  INITIAL_CALC,
} from "../../src/lib/calculator.ts";

/** Presses keys by the symbol they show, as a visitor would. */
function press(symbols: string, state: CalcState = INITIAL_CALC): CalcState {
  return [...symbols].reduce((current, symbol) => {
    const key = CALC_KEYPAD.find((candidate) => candidate.value === symbol);
    if (!key) throw new Error(`no key ${symbol}`);
    return calculatorReducer(current, key);
  }, state);
}

const RESET: CalcAction = { type: "reset" };

describe("NothingCalc Pro", () => {
  it("has the keys 0-9, + − × ÷ ± %, C, . and =", () => {
    expect(CALC_KEYPAD.map((key) => key.value).sort()).toEqual(
      [..."0123456789", ...CALC_OPERATIONS, "C", ".", "="].sort(),
    );
    expect(CALCULATOR_MESSAGES).toHaveLength(6);
  });

  it("starts at 0 and replaces the leading 0 with digits", () => {
    expect(INITIAL_CALC.display).toBe("0");
    expect(press("7").display).toBe("7");
    expect(press("0070").display).toBe("70");
    expect(press("123").display).toBe("123");
  });

  it("adds a decimal point only if none is present", () => {
    expect(press(".").display).toBe("0.");
    expect(press("1.5").display).toBe("1.5");
    expect(press("1.5.2.").display).toBe("1.52");
  });

  it(`stops at ${DISPLAY_MAX_LENGTH} characters`, () => {
    expect(press("1234567890123456").display).toBe("123456789012");
  });

  for (const operation of CALC_OPERATIONS) {
    it(`${operation} stores the display as the previous value with the operator and resets the display to 0`, () => {
      const state = press(`12${operation}`);
      expect(state).toMatchObject({ display: "0", previous: "12", operator: operation });
    });
  }

  it("a second operation stores the current display again", () => {
    expect(press("12+34×")).toMatchObject({ display: "0", previous: "34", operator: "×" });
  });

  it("= resets the display to 0, clears the operator and shows the next message", () => {
    const state = press("12+34=");
    expect(state).toMatchObject({ display: "0", operator: null, calculations: 1, message: CALCULATOR_MESSAGES[0] });
  });

  it("= rotates through the six messages and starts over", () => {
    let state = INITIAL_CALC;
    const seen: (string | null)[] = [];
    for (let index = 0; index < 7; index += 1) {
      state = press("2×2=", state);
      seen.push(state.message);
    }
    expect(seen).toEqual([...CALCULATOR_MESSAGES, CALCULATOR_MESSAGES[0]]);
    expect(state.calculations).toBe(7);
  });

  it("= without an operation still counts as a calculation", () => {
    expect(press("5=")).toMatchObject({ display: "0", calculations: 1, message: CALCULATOR_MESSAGES[0] });
  });

  it("C returns to 0 and forgets the pending operation and message, but the messages keep rotating", () => {
    const cleared = press("9+8=7−6C");
    expect(cleared).toMatchObject({ display: "0", previous: null, operator: null, message: null, calculations: 1 });
    expect(press("=", cleared).message).toBe(CALCULATOR_MESSAGES[1]);
  });

  it("Reset returns to 0 and starts the messages over", () => {
    const state = calculatorReducer(press("1+2=3×"), RESET);
    expect(state).toEqual(INITIAL_CALC);
    expect(press("=", state).message).toBe(CALCULATOR_MESSAGES[0]);
  });

  it("never mutates the state it is given", () => {
    const before = press("4.2÷");
    const copy = structuredClone(before);
    press("9=C", before);
    expect(before).toEqual(copy);
  });
});
