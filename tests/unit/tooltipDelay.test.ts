import { describe, expect, it } from "vitest";
import { tooltipOpenDelay } from "../../src/lib/tooltipDelay.ts";

describe("tooltip delay", () => {
  it("waits 700 ms for the first tooltip", () => {
    expect(tooltipOpenDelay(1000, undefined)).toBe(700);
  });

  it("opens at once within 300 ms of the last one closing", () => {
    expect(tooltipOpenDelay(1299, 1000)).toBe(0);
    expect(tooltipOpenDelay(1300, 1000)).toBe(700);
  });
});
