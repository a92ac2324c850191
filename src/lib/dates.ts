/** Long US date: "September 14, 2026". Calendar dates are read as UTC so the day never shifts. */
const longUs = new Intl.DateTimeFormat("en-US", { dateStyle: "long", timeZone: "UTC" });

/** A calendar date ("2026-09-14"), e.g. a review's, as "September 14, 2026". */
export function formatLongUsDate(calendarDate: string): string {
  return longUs.format(new Date(`${calendarDate}T00:00:00Z`));
}

/** The calendar date of `moment` where the visitor is ("2026-11-21" late on the 21st in Los Angeles). */
export function localCalendarDate(moment: Date): string {
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${moment.getFullYear()}-${pad(moment.getMonth() + 1)}-${pad(moment.getDate())}`;
}

/** A moment (ISO 8601) where the visitor is, e.g. a round's end: "Nov 21, 2026, 12:00 PM". */
export function formatShortDateTime(moment: string): string {
  return new Date(moment).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });
}
