import { describe, expect, it } from "vitest";
import { formatLongUsDate } from "../../src/lib/dates.ts";

describe("long US dates", () => {
  it("formats ISO dates without shifting the day", () => {
    expect(formatLongUsDate("2026-09-14")).toBe("September 14, 2026");
    expect(formatLongUsDate("2026-01-01")).toBe("January 1, 2026");
  });
});
