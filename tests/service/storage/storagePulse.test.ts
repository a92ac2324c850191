/**
 * The shop's pulse on both backends (service/storage/pulse.ts): visible bids per minute and
 * confirmed sales per hour over the last 24 hours, every empty bucket a zero, the window's edges to
 * the millisecond. The rows are written past the store, with the times the test gives them, and
 * read at a time the test gives too.
 */
import { describe, expect } from "vitest";
import { PULSE_HOURS, PULSE_MINUTES } from "../../../service/storage/pulse.ts";
import {
  BACKENDS,
  type DirectQuery,
  migratedLocationTestOn,
  storeForThisTest,
  withDirectSql,
} from "../harness/stores.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** The time the pulse is read at: its minute starts at 12:34, its hour at 12:00. */
const NOW = new Date("2026-03-01T12:34:56.789Z");
/** 1439 minutes before 12:34, and 23 hours before 12:00. */
const FIRST_MINUTE = Date.parse("2026-02-28T12:35:00.000Z");
const FIRST_HOUR = Date.parse("2026-02-28T13:00:00.000Z");

/** The bids of the test, in time order as the store writes them (ids rise with time). */
const BIDS: { at: string; round?: number; hidden?: true; blocked?: true }[] = [
  { at: "2026-02-27T09:00:00.000Z" },
  { at: "2026-02-28T12:34:59.999Z" }, // a millisecond before the first minute: out
  { at: "2026-02-28T12:35:00.000Z" }, // the first minute's first millisecond: in
  { at: "2026-02-28T12:35:59.999Z" },
  { at: "2026-02-28T13:00:10.000Z", hidden: true }, // hidden: out
  { at: "2026-02-28T13:00:20.000Z", blocked: true }, // of a blocked name: out
  { at: "2026-02-28T13:00:30.000Z" },
  { at: "2026-03-01T06:00:00.000Z", round: 2 }, // another round counts as well
  { at: "2026-03-01T12:34:56.000Z", round: 2 },
  { at: "2026-03-01T12:35:00.000Z", round: 2 }, // the next minute, not yet begun: out
];

/** Payments by status and confirmation time. */
const PAYMENTS: { status: string; confirmedAt: string | null }[] = [
  { status: "confirmed", confirmedAt: "2026-02-28T12:59:59.999Z" }, // before the first hour: out
  { status: "confirmed", confirmedAt: "2026-02-28T13:00:00.000Z" },
  { status: "confirmed", confirmedAt: "2026-02-28T13:59:59.999Z" },
  { status: "confirmed", confirmedAt: "2026-03-01T12:10:00.000Z" },
  { status: "underpaid", confirmedAt: "2026-03-01T12:11:00.000Z" }, // no sale
  { status: "waiting", confirmedAt: null },
  { status: "confirmed", confirmedAt: "2026-03-01T13:00:00.000Z" }, // the next hour: out
];

const minuteOf = (iso: string) => Math.floor((Date.parse(iso) - FIRST_MINUTE) / MINUTE_MS);

async function writeRows(query: DirectQuery) {
  await query(
    "INSERT INTO auction_rounds (number, opened_at) VALUES (1, '2026-02-27T00:00:00Z'), (2, '2026-03-01T00:00:00Z')",
  );
  for (const bid of BIDS) {
    await query(
      `INSERT INTO auction_bids (bidder_name, bidder_key, amount, created_at, round_number, hidden_at, name_blocked)
       VALUES ('pulse', 'pulse', 1, $1::timestamptz, $2::bigint, $3::timestamptz, $4::boolean)`,
      [bid.at, bid.round ?? 1, bid.hidden ? bid.at : null, bid.blocked === true],
    );
  }
  for (const [index, payment] of PAYMENTS.entries()) {
    const paid = payment.confirmedAt !== null;
    await query(
      `INSERT INTO payments (reference, tier_id, price_base_units, decimals, mint, recipient, created_at, expires_at,
         status, signature, amount_received, confirmed_at)
       VALUES ($1, 1, 100, 6, 'mint', 'recipient', '2026-02-27T00:00:00Z', '2026-03-02T00:00:00Z', $2, $3, $4, $5)`,
      [
        `reference-${index}`,
        payment.status,
        paid ? `signature-${index}` : null,
        paid ? 100 : null,
        payment.confirmedAt,
      ],
    );
  }
}

describe.each(BACKENDS)("the shop's pulse on %s", (backend) => {
  const locationTest = migratedLocationTestOn(backend);

  locationTest(
    "counts visible bids of every round per minute and confirmed sales per hour, zeros between",
    async ({ location }) => {
      await withDirectSql(location, writeRows);
      const store = await storeForThisTest(location);

      const pulse = await store.admin.pulse(NOW, true);

      expect(new Date(pulse.firstMinuteMs).toISOString()).toBe(new Date(FIRST_MINUTE).toISOString());
      expect(new Date(pulse.firstHourMs).toISOString()).toBe(new Date(FIRST_HOUR).toISOString());
      const bids = new Array<number>(PULSE_MINUTES).fill(0);
      bids[0] = 2;
      bids[minuteOf("2026-02-28T13:00:30.000Z")] = 1;
      bids[minuteOf("2026-03-01T06:00:00.000Z")] = 1;
      bids[PULSE_MINUTES - 1] = 1;
      expect(pulse.bidsPerMinute).toEqual(bids);
      const sales = new Array<number>(PULSE_HOURS).fill(0);
      sales[0] = 2;
      sales[PULSE_HOURS - 1] = 1;
      expect(pulse.salesPerHour).toEqual(sales);

      // A minute later the window has moved on by one: the first minute's bids are out.
      const later = await store.admin.pulse(new Date(NOW.getTime() + MINUTE_MS), false);
      expect(later.salesPerHour).toBeNull();
      expect(later.bidsPerMinute).toEqual([...bids.slice(1), 1]);
      // From a later minute: only the minutes from it to the last, counted alike.
      const newest = await store.admin.pulse(NOW, false, new Date("2026-03-01T06:00:30.000Z"));
      expect(newest.firstMinuteMs).toBe(FIRST_MINUTE);
      expect(new Date(newest.fromMinuteMs).toISOString()).toBe("2026-03-01T06:00:00.000Z");
      expect(newest.bidsPerMinute).toEqual(bids.slice(minuteOf("2026-03-01T06:00:00.000Z")));
      // From before the window: the whole window.
      const whole = await store.admin.pulse(NOW, false, new Date(FIRST_MINUTE - HOUR_MS));
      expect(whole.fromMinuteMs).toBe(FIRST_MINUTE);
      expect(whole.bidsPerMinute).toEqual(bids);
      // An hour later the first hour's sales are out, and the 13:00 sale is in the last hour.
      const hourLater = await store.admin.pulse(new Date(NOW.getTime() + HOUR_MS), true);
      expect(hourLater.salesPerHour).toEqual([...sales.slice(1), 1]);
    },
  );

  locationTest(
    "without a time given, the database's clock decides, and an empty shop is all zeros",
    async ({ location }) => {
      const store = await storeForThisTest(location);
      const before = Date.now();
      const pulse = await store.admin.pulse(null, true);
      const after = Date.now();

      // The first minute starts 1439 whole minutes before the one the database is in.
      const firstMinute = (ms: number) => Math.floor(ms / MINUTE_MS) * MINUTE_MS - (PULSE_MINUTES - 1) * MINUTE_MS;
      expect(pulse.firstMinuteMs).toBeGreaterThanOrEqual(firstMinute(before));
      expect(pulse.firstMinuteMs).toBeLessThanOrEqual(firstMinute(after));
      expect(pulse.bidsPerMinute).toEqual(new Array(PULSE_MINUTES).fill(0));
      expect(pulse.salesPerHour).toEqual(new Array(PULSE_HOURS).fill(0));
    },
  );
});
