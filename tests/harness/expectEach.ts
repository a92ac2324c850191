import { expect } from "vitest";

/** Checks `read` on each `[input, expected]` row of a table; a failure names its input. */
export function expectEach<Input, Output>(
  read: (input: Input) => Output,
  rows: readonly (readonly [Input, Output])[],
): void {
  for (const [input, expected] of rows) expect(read(input), String(input)).toEqual(expected);
}
