import { useReducer } from "react";
import { CALC_KEYPAD, type CalcKey, calculatorReducer, INITIAL_CALC } from "../lib/calculator.ts";
import { withErrorBoundary } from "./IslandErrorBoundary.tsx";
import { useHydrated } from "./useHydrated.ts";

const KEY_STYLE: Record<CalcKey["type"], string> = {
  number: "bg-void-700 text-ink hover:bg-void-600",
  decimal: "bg-void-700 text-ink hover:bg-void-600",
  operation: "bg-void-600 text-accent-strong hover:bg-void-700",
  clear: "bg-void-600 text-danger hover:bg-void-700",
  equals: "bg-accent text-void hover:bg-accent-strong",
};

/** NothingCalc Pro: a keypad over the pure reducer; the verdict of "=" is announced politely. */
function NothingCalculator() {
  const hydrated = useHydrated();
  const [state, dispatch] = useReducer(calculatorReducer, INITIAL_CALC);

  return (
    <div className="card mx-auto w-full max-w-sm">
      <div className="flex items-center justify-between">
        <h3 className="text-xl font-bold">NothingCalc Pro</h3>
        <button
          type="button"
          className="btn-outline min-h-9 px-3 py-1 text-sm"
          disabled={!hydrated}
          onClick={() => dispatch({ type: "reset" })}
        >
          Reset
        </button>
      </div>
      <div className="mt-4 rounded-xl bg-void p-4 text-right font-mono">
        <p className="min-h-5 text-sm text-ink-muted" data-calc-pending>
          {state.operator && `${state.previous} ${state.operator}`}
        </p>
        <p className="overflow-hidden text-4xl font-bold tabular-nums text-ink">
          <span className="sr-only">Display: </span>
          <span data-calc-display>{state.display}</span>
        </p>
      </div>
      <div className="mt-4 grid grid-cols-4 gap-2">
        {CALC_KEYPAD.map((key) => (
          <button
            key={key.value}
            type="button"
            disabled={!hydrated}
            onClick={() => dispatch(key)}
            className={`min-h-14 rounded-xl text-xl font-bold transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent-strong ${KEY_STYLE[key.type]} ${key.value === "0" ? "col-span-2" : ""}`}
          >
            {key.value}
          </button>
        ))}
      </div>
      <p role="status" className="mt-4 min-h-12 text-center text-ink-muted" data-calc-message>
        {state.message}
      </p>
    </div>
  );
}

export default withErrorBoundary(NothingCalculator);
