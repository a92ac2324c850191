/**
 * NothingCalc Pro (docs/product-behaviour.md#4), a calculator that never computes, as a reducer:
 * an operation stores the display and the operator and resets the display to 0; "=" resets to 0,
 * clears the operator and advances the counter that picks one of the rotating messages.
 */
import { CALCULATOR_MESSAGES } from "../data/calculator.ts";

export const CALC_OPERATIONS = ["+", "−", "×", "÷", "±", "%"] as const;
type CalcOperation = (typeof CALC_OPERATIONS)[number];

/** The product's calculator key (docs/product.md#3): the symbol it shows (also its accessible name) and what it does. */
export type CalcKey =
  | { type: "number"; value: "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" }
  | { type: "operation"; value: CalcOperation }
  | { type: "clear"; value: "C" }
  | { type: "decimal"; value: "." }
  | { type: "equals"; value: "=" };

/** A key press, or the Reset control that also forgets how many calculations were made. */
export type CalcAction = CalcKey | { type: "reset" };

/** Long enough for any number worth entering, short enough to fit the display. */
export const DISPLAY_MAX_LENGTH = 12;

export interface CalcState {
  display: string;
  previous: string | null;
  operator: CalcOperation | null;
  /** Presses of "=" so far: selects the next message. */
  calculations: number;
  /** The verdict of the last "=", until the display is cleared. */
  message: string | null;
}

export const INITIAL_CALC: CalcState = { display: "0", previous: null, operator: null, calculations: 0, message: null };

const digit = (value: string) => ({ type: "number", value }) as CalcKey;
const op = (value: CalcOperation): CalcKey => ({ type: "operation", value });

/** The keypad, row by row, as it is laid out on screen (4 columns; "0" spans two). */
export const CALC_KEYPAD: readonly CalcKey[] = [
  { type: "clear", value: "C" },
  op("±"),
  op("%"),
  op("÷"),
  ...["7", "8", "9"].map(digit),
  op("×"),
  ...["4", "5", "6"].map(digit),
  op("−"),
  ...["1", "2", "3"].map(digit),
  op("+"),
  digit("0"),
  { type: "decimal", value: "." },
  { type: "equals", value: "=" },
];

export function calculatorReducer(state: CalcState, action: CalcAction): CalcState {
  switch (action.type) {
    case "number": {
      if (state.display.length >= DISPLAY_MAX_LENGTH) return state;
      const display = state.display === "0" ? action.value : state.display + action.value;
      return { ...state, display };
    }
    case "decimal":
      if (state.display.includes(".") || state.display.length >= DISPLAY_MAX_LENGTH) return state;
      return { ...state, display: `${state.display}.` };
    case "operation":
      return { ...state, previous: state.display, operator: action.value, display: "0" };
    case "equals":
      return {
        ...state,
        display: "0",
        operator: null,
        calculations: state.calculations + 1,
        message: calculatorMessage(state.calculations),
      };
    case "clear":
      return { ...INITIAL_CALC, calculations: state.calculations };
    case "reset":
      return INITIAL_CALC;
  }
}

/** The message for the calculation numbered `index` (0 for the first "="), rotating through all six. */
function calculatorMessage(index: number): string {
  return CALCULATOR_MESSAGES[index % CALCULATOR_MESSAGES.length] ?? CALCULATOR_MESSAGES[0];
}
