/** NothingCalc Pro's rotating verdicts, one per press of "=" (docs/product-reference.md#9: 6 messages; the words are ours). */
export const CALCULATOR_MESSAGES = [
  "Calculated. The answer is nothing, as predicted.",
  "Our quantum abacus has spoken: nothing. Again.",
  "Result rounded to the nearest nothing.",
  "Whoa, too much something in there. Converted it to nothing for you.",
  "The math checks out. Nothing carries over.",
  "Those numbers added up to exactly nothing, man.",
] as const;
