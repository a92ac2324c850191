import { afterAll, describe, expect, it } from "vitest";
import { formatLongUsDate, formatShortDateTime, localCalendarDate } from "../../src/lib/dates.ts";

describe("long US dates", () => {
  it("formats ISO dates without shifting the day", () => {
    expect(formatLongUsDate("2026-09-14")).toBe("September 14, 2026");
    expect(formatLongUsDate("2026-01-01")).toBe("January 1, 2026");
  });
});

describe("the visitor's calendar date", () => {
  const originalZone = process.env.TZ;
  afterAll(() => {
    process.env.TZ = originalZone;
  });

  it("is the local day, not the UTC one, late in the evening west of Greenwich", () => {
    // 23:30 on November 21 in Los Angeles is already November 22 in UTC.
    process.env.TZ = "America/Los_Angeles";
    const lateEvening = new Date("2026-11-22T07:30:00Z");
    expect(localCalendarDate(lateEvening)).toBe("2026-11-21");
    expect(formatLongUsDate(localCalendarDate(lateEvening))).toBe("November 21, 2026");
  });

  it("is the local day early in the morning east of Greenwich", () => {
    // 06:00 on January 1 in Tokyo is still December 31 in UTC.
    process.env.TZ = "Asia/Tokyo";
    expect(localCalendarDate(new Date("2025-12-31T21:00:00Z"))).toBe("2026-01-01");
  });

  it("shows a moment, such as a round's end, with its date and time where the visitor is", () => {
    process.env.TZ = "America/Los_Angeles";
    // Intl may put a narrow no-break space before "PM".
    expect(formatShortDateTime("2026-11-22T07:30:00.000Z").replace(/\s/g, " ")).toBe("Nov 21, 2026, 11:30 PM");
  });
});
