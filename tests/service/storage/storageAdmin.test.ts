/**
 * The operator console's storage, on both backends (docs/design.md#9): sessions that sign-out revokes
 * for every store on the database, and the sign-in failures every store counts together (per client
 * key, and for the console as a whole with its growing delay), reserved atomically, pruned to the
 * window; the devices that signed in, each limited by its own failures. Times are passed in, as the service passes its clock in tests: nothing sleeps.
 */
import { describe, expect } from "vitest";
import {
  DEVICE_POLICY,
  FAILURE_WINDOW_MS,
  MAX_DELAY_MS,
  MAX_FAILURES,
  SIGN_IN_POLICY,
} from "../../../service/console/signInLimits.ts";
import type { DeviceReservation, SignInReservation } from "../../../service/storage/admin.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import {
  BACKENDS,
  type DirectQuery,
  storeForThisTest,
  storeTestOn,
  type TestLocation,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

const T0 = Date.parse("2026-03-01T12:00:00.000Z");
/** The time `ms` after T0. */
const at = (ms: number) => new Date(T0 + ms);
const HOUR_MS = 60 * 60 * 1000;

/** The n-th of many client keys. */
const key = (n: number) => `10.0.${(n >> 8) & 255}.${n & 255}`;

function reserved(reservation: SignInReservation) {
  if (reservation.outcome !== "reserved") throw new Error(`not reserved: ${JSON.stringify(reservation)}`);
  return reservation;
}

function deviceReserved(reservation: DeviceReservation) {
  if (reservation.outcome !== "reserved") throw new Error(`not reserved: ${JSON.stringify(reservation)}`);
  return reservation;
}

const YEAR_MS = 365 * 24 * HOUR_MS;

/** Rows of the console's tables, read past the store (PGlite: with the store closed). */
async function rowsOf(location: TestLocation, store: BidStore, sql: string): Promise<Record<string, unknown>[]> {
  if (location.backend === "pglite") await store.close();
  return withDirectSql(location, (query: DirectQuery) => query(sql));
}

describe.each(BACKENDS)("the operator console's storage on %s", (backend) => {
  const storeTest = storeTestOn(backend);

  describe("sessions", () => {
    storeTest("a session is live from its opening until it is revoked or expires", async ({ store }) => {
      const { expiresAtMs } = await store.admin.openSession("session-a", 8 * HOUR_MS, at(0));
      expect(expiresAtMs).toBe(T0 + 8 * HOUR_MS);
      await store.admin.openSession("session-b", 8 * HOUR_MS, at(0));
      expect(await store.admin.isSessionLive("session-a", at(8 * HOUR_MS - 1))).toBe(true);
      expect(await store.admin.isSessionLive("session-a", at(8 * HOUR_MS))).toBe(false);
      expect(await store.admin.isSessionLive("never opened", at(0))).toBe(false);

      expect(await store.admin.revokeSession("session-a", at(1))).toBe(true);
      expect(await store.admin.revokeSession("session-a", at(2))).toBe(false);
      expect(await store.admin.isSessionLive("session-a", at(3))).toBe(false);
      expect(await store.admin.isSessionLive("session-b", at(3))).toBe(true);
      // Past its expiry a session cannot be revoked: it is over already.
      expect(await store.admin.revokeSession("session-b", at(8 * HOUR_MS))).toBe(false);
    });

    storeTest("without a time given, the database's clock decides", async ({ store }) => {
      const before = Date.now();
      const { expiresAtMs } = await store.admin.openSession("session-now", 60_000, null);
      expect(expiresAtMs).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
      expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + 60_000 + 1_000);
      expect(await store.admin.isSessionLive("session-now", null)).toBe(true);
      expect(await store.admin.revokeSession("session-now", null)).toBe(true);
      expect(await store.admin.isSessionLive("session-now", null)).toBe(false);
    });

    storeTest(
      "revokes every live session at once, and announces each revocation to every store on the database",
      async ({ location, store }) => {
        const other = backend === "postgres" ? await storeForThisTest(location) : store;
        const heard: (string | null)[] = [];
        other.admin.onSessionRevoked((id) => heard.push(id));
        for (const id of ["one", "two", "three"]) await store.admin.openSession(id, 8 * HOUR_MS, at(0));
        await store.admin.revokeSession("one", at(1));
        await waitFor("the revocation of one", () => heard.length === 1);
        expect(await store.admin.revokeEverySession(at(2))).toBe(2);
        await waitFor("the revocation of every session", () => heard.length === 2);
        expect(heard).toEqual(["one", null]);
        for (const id of ["one", "two", "three"]) expect(await other.admin.isSessionLive(id, at(3))).toBe(false);
        expect(await store.admin.revokeEverySession(at(4))).toBe(0);
      },
    );

    storeTest("deletes expired sessions, revoked ones included, when a session opens", async ({ location, store }) => {
      await store.admin.openSession("old", 8 * HOUR_MS, at(0));
      await store.admin.openSession("old-revoked", 8 * HOUR_MS, at(0));
      await store.admin.revokeSession("old-revoked", at(1));
      await store.admin.openSession("recent", 8 * HOUR_MS, at(HOUR_MS));
      await store.admin.openSession("new", 8 * HOUR_MS, at(8 * HOUR_MS));
      const rows = await rowsOf(location, store, "SELECT id FROM admin_sessions ORDER BY id");
      expect(rows.map((row) => row.id)).toEqual(["new", "recent"]);
    });
  });

  describe("sign-in failures", () => {
    storeTest(
      "refuses a key's sixth attempt within 15 minutes until its fifth-newest failure leaves the window",
      async ({ store }) => {
        for (let minute = 0; minute < MAX_FAILURES; minute++) {
          expect(await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(minute * 60_000))).toMatchObject({
            outcome: "reserved",
            waitMs: 0,
          });
        }
        // The first failure was 5 minutes ago: 10 minutes to wait.
        expect(await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(5 * 60_000))).toEqual({
          outcome: "limited",
          waitMs: FAILURE_WINDOW_MS - 5 * 60_000,
        });
        expect(reserved(await store.admin.reserveSignIn("b", SIGN_IN_POLICY, at(5 * 60_000))).waitMs).toBe(0);
        expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(FAILURE_WINDOW_MS - 1))).outcome).toBe(
          "limited",
        );
        expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(FAILURE_WINDOW_MS))).outcome).toBe("reserved");
        expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(FAILURE_WINDOW_MS))).outcome).toBe("limited");
      },
    );

    storeTest("forgets a reservation (a right password): the key may try once more", async ({ store }) => {
      const attempts = [];
      for (let i = 0; i < MAX_FAILURES; i++)
        attempts.push(reserved(await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(i))));
      expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(10))).outcome).toBe("limited");
      await store.admin.forgetSignIn(attempts[2]?.attemptId as string);
      await store.admin.forgetSignIn(attempts[2]?.attemptId as string);
      expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(11))).outcome).toBe("reserved");
      expect((await store.admin.reserveSignIn("a", SIGN_IN_POLICY, at(12))).outcome).toBe("limited");
    });

    storeTest(
      "reserves 30 attempts of one key sent at once (through two stores on PostgreSQL): exactly 5 pass",
      async ({ location, store }) => {
        const other = backend === "postgres" ? await storeForThisTest(location) : store;
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) => (i % 2 ? other : store).admin.reserveSignIn("a", SIGN_IN_POLICY, at(0))),
        );
        expect(outcomes.filter((outcome) => outcome.outcome === "reserved")).toHaveLength(MAX_FAILURES);
        expect(outcomes.filter((outcome) => outcome.outcome === "limited")).toHaveLength(30 - MAX_FAILURES);
      },
    );

    storeTest(
      "after 20 failures from any keys holds every attempt back, 1 s doubling to 60 s, and refuses one whose turn is further off",
      async ({ store }) => {
        for (let n = 0; n < 20; n++) {
          expect(reserved(await store.admin.reserveSignIn(key(n), SIGN_IN_POLICY, at(0))).waitMs).toBe(0);
        }
        // Each attempt comes when the one before it had its turn: the delays themselves.
        let now = 0;
        const delays: number[] = [];
        for (let n = 20; n < 29; n++) {
          const { waitMs } = reserved(await store.admin.reserveSignIn(key(n), SIGN_IN_POLICY, at(now)));
          delays.push(waitMs);
          now += waitMs;
        }
        expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);

        // At the last turn, the next is a minute off: within the bound. Another at once would be
        // two minutes off: refused until a turn within a minute is free, when the last one comes.
        expect(reserved(await store.admin.reserveSignIn(key(29), SIGN_IN_POLICY, at(now))).waitMs).toBe(MAX_DELAY_MS);
        expect(await store.admin.reserveSignIn(key(30), SIGN_IN_POLICY, at(now))).toEqual({
          outcome: "throttled",
          waitMs: MAX_DELAY_MS,
        });
        expect(reserved(await store.admin.reserveSignIn(key(30), SIGN_IN_POLICY, at(now + MAX_DELAY_MS))).waitMs).toBe(
          MAX_DELAY_MS,
        );
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(now + MAX_DELAY_MS))).toEqual({
          failures: 31,
          keys: 31,
        });
      },
    );

    storeTest(
      "holds back at most 5 attempts sent at once after the 20th failure: their turns are a minute's worth",
      async ({ location, store }) => {
        const other = backend === "postgres" ? await storeForThisTest(location) : store;
        for (let n = 0; n < 20; n++) reserved(await store.admin.reserveSignIn(key(n), SIGN_IN_POLICY, at(0)));
        const outcomes = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? other : store).admin.reserveSignIn(key(100 + i), SIGN_IN_POLICY, at(0)),
          ),
        );
        const waits = outcomes
          .filter((outcome) => outcome.outcome === "reserved")
          .map((outcome) => outcome.waitMs)
          .sort((a, b) => a - b);
        // 1, 1+2, 1+2+4, ... s: the sixth would be 63 s off.
        expect(waits).toEqual([1_000, 3_000, 7_000, 15_000, 31_000]);
        expect(outcomes.filter((outcome) => outcome.outcome === "throttled")).toHaveLength(7);
      },
    );

    storeTest(
      "counts the failures in the window, and keeps none older than the window once an attempt comes",
      async ({ location, store }) => {
        for (let n = 0; n < 3; n++) reserved(await store.admin.reserveSignIn(key(n), SIGN_IN_POLICY, at(0)));
        reserved(await store.admin.reserveSignIn(key(0), SIGN_IN_POLICY, at(60_000)));
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(60_000))).toEqual({ failures: 4, keys: 3 });
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(FAILURE_WINDOW_MS))).toEqual({
          failures: 1,
          keys: 1,
        });
        reserved(await store.admin.reserveSignIn(key(9), SIGN_IN_POLICY, at(FAILURE_WINDOW_MS + 60_000)));
        const rows = await rowsOf(location, store, "SELECT limit_key FROM admin_sign_in_failures ORDER BY id");
        expect(rows.map((row) => row.limit_key)).toEqual([key(9)]);
      },
    );
  });

  describe("devices", () => {
    storeTest("a device is trusted from its issue until it is revoked, replaced or expires", async ({ store }) => {
      await store.admin.issueDevice("device-a", YEAR_MS, null, at(0));
      await store.admin.issueDevice("device-b", YEAR_MS, null, at(0));
      const attempt = deviceReserved(await store.admin.reserveDeviceSignIn("device-a", DEVICE_POLICY, at(1)));
      await store.admin.forgetDeviceSignIn(attempt.attemptId);
      expect(await store.admin.reserveDeviceSignIn("never issued", DEVICE_POLICY, at(1))).toEqual({
        outcome: "unknown",
      });
      // Signing in through device-a replaces it.
      await store.admin.issueDevice("device-c", YEAR_MS, "device-a", at(2));
      expect(await store.admin.reserveDeviceSignIn("device-a", DEVICE_POLICY, at(3))).toEqual({ outcome: "unknown" });
      expect((await store.admin.reserveDeviceSignIn("device-c", DEVICE_POLICY, at(3))).outcome).toBe("reserved");
      expect((await store.admin.reserveDeviceSignIn("device-b", DEVICE_POLICY, at(YEAR_MS - 1))).outcome).toBe(
        "reserved",
      );
      expect(await store.admin.reserveDeviceSignIn("device-b", DEVICE_POLICY, at(YEAR_MS))).toEqual({
        outcome: "unknown",
      });
      // Every device still trusted at 4 ms: b and c (a was replaced).
      expect(await store.admin.revokeEveryDevice(at(4))).toBe(2);
      for (const id of ["device-b", "device-c"]) {
        expect(await store.admin.reserveDeviceSignIn(id, DEVICE_POLICY, at(5))).toEqual({ outcome: "unknown" });
      }
      expect(await store.admin.revokeEveryDevice(at(6))).toBe(0);
    });

    storeTest(
      "locks a device after 5 failures within 15 minutes until its fifth-newest leaves the window, other devices and keys untouched",
      async ({ store }) => {
        for (const id of ["mine", "other"]) await store.admin.issueDevice(id, YEAR_MS, null, at(0));
        for (let minute = 0; minute < MAX_FAILURES; minute++) {
          deviceReserved(await store.admin.reserveDeviceSignIn("mine", DEVICE_POLICY, at(minute * 60_000)));
        }
        expect(await store.admin.reserveDeviceSignIn("mine", DEVICE_POLICY, at(5 * 60_000))).toEqual({
          outcome: "locked",
          waitMs: FAILURE_WINDOW_MS - 5 * 60_000,
        });
        expect((await store.admin.reserveDeviceSignIn("other", DEVICE_POLICY, at(5 * 60_000))).outcome).toBe(
          "reserved",
        );
        // Not the console's failures, nor any key's.
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(5 * 60_000))).toEqual({ failures: 0, keys: 0 });
        expect((await store.admin.reserveDeviceSignIn("mine", DEVICE_POLICY, at(FAILURE_WINDOW_MS - 1))).outcome).toBe(
          "locked",
        );
        expect((await store.admin.reserveDeviceSignIn("mine", DEVICE_POLICY, at(FAILURE_WINDOW_MS))).outcome).toBe(
          "reserved",
        );
      },
    );

    storeTest(
      "reserves 30 attempts through one device sent at once (through two stores on PostgreSQL): exactly 5 pass",
      async ({ location, store }) => {
        const other = backend === "postgres" ? await storeForThisTest(location) : store;
        await store.admin.issueDevice("mine", YEAR_MS, null, at(0));
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? other : store).admin.reserveDeviceSignIn("mine", DEVICE_POLICY, at(0)),
          ),
        );
        expect(outcomes.filter((outcome) => outcome.outcome === "reserved")).toHaveLength(MAX_FAILURES);
        expect(outcomes.filter((outcome) => outcome.outcome === "locked")).toHaveLength(30 - MAX_FAILURES);
      },
    );

    storeTest(
      "deletes the devices expired or revoked, and their failures, when a device is issued",
      async ({ location, store }) => {
        await store.admin.issueDevice("expiring", HOUR_MS, null, at(0));
        await store.admin.issueDevice("replaced", YEAR_MS, null, at(0));
        await store.admin.issueDevice("kept", YEAR_MS, null, at(0));
        deviceReserved(await store.admin.reserveDeviceSignIn("replaced", DEVICE_POLICY, at(1)));
        deviceReserved(await store.admin.reserveDeviceSignIn("kept", DEVICE_POLICY, at(1)));
        await store.admin.issueDevice("replacing", YEAR_MS, "replaced", at(2));
        await store.admin.issueDevice("new", YEAR_MS, null, at(HOUR_MS));
        const devices = await rowsOf(location, store, "SELECT id FROM admin_devices ORDER BY id");
        expect(devices.map((row) => row.id)).toEqual(["kept", "new", "replacing"]);
        const failures = await withDirectSql(location, (query) =>
          query("SELECT device_id FROM admin_device_failures ORDER BY id"),
        );
        expect(failures.map((row) => row.device_id)).toEqual(["kept"]);
      },
    );
  });
});
