/** Long US date: "September 14, 2026". ISO dates are read as UTC so the day never shifts with the time zone. */
const longUs = new Intl.DateTimeFormat("en-US", { dateStyle: "long", timeZone: "UTC" });

export function formatLongUsDate(date: Date | string): string {
  return longUs.format(typeof date === "string" ? new Date(`${date}T00:00:00Z`) : date);
}
