/** The CAPTCHA's rotating failure hints, exactly as docs/product-reference.md#8 gives them. */
export const CAPTCHA_HINTS = [
  "Hint: Look more carefully at the empty spaces!",
  "Tip: Nothing is hiding in plain sight.",
  "Remember: Absence is presence in the void!",
  "Try again: The nothing is everywhere and nowhere.",
] as const;

export const CAPTCHA_SOLVED_TEXT = "CAPTCHA Solved!";
