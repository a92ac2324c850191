/**
 * The operator console's storage, on both backends (docs/design.md#9): sessions that sign-out revokes
 * for every store on the database, and the sign-in failures every store counts together (per client
 * key, and for the console as a whole with its growing delay), reserved atomically, pruned to the
 * window; the devices that signed in, each limited by its own failures. Times are passed in, as the service passes its clock in tests: nothing sleeps.
 */
import { describe, expect } from "vitest";
import {
  CONSOLE_FAILURES_BEFORE_DELAY,
  DEVICE_POLICY,
  FAILURE_WINDOW_MS,
  MAX_DELAY_MS,
  MAX_FAILURES,
  NETWORK_FAILURES,
  SIGN_IN_POLICY,
  SUBNET_FAILURES,
} from "../../../service/console/signInLimits.ts";
import { addressGroups } from "../../../service/http/fairShares.ts";
import type { DeviceReservation, SignInClient, SignInReservation } from "../../../service/storage/admin.ts";
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

/** A client counted in no network but its own, as the previous release's failures are. */
const alone = (client: string): SignInClient => ({ client, mid: null, wide: null });

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
          expect(await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(minute * 60_000))).toMatchObject({
            outcome: "reserved",
            waitMs: 0,
          });
        }
        // The first failure was 5 minutes ago: 10 minutes to wait.
        expect(await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(5 * 60_000))).toEqual({
          outcome: "limited",
          waitMs: FAILURE_WINDOW_MS - 5 * 60_000,
          by: "client",
        });
        expect(reserved(await store.admin.reserveSignIn(alone("b"), SIGN_IN_POLICY, at(5 * 60_000))).waitMs).toBe(0);
        expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(FAILURE_WINDOW_MS - 1))).outcome).toBe(
          "limited",
        );
        expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(FAILURE_WINDOW_MS))).outcome).toBe(
          "reserved",
        );
        expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(FAILURE_WINDOW_MS))).outcome).toBe(
          "limited",
        );
      },
    );

    storeTest("forgets a reservation (a right password): the key may try once more", async ({ store }) => {
      const attempts = [];
      for (let i = 0; i < MAX_FAILURES; i++)
        attempts.push(reserved(await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(i))));
      expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(10))).outcome).toBe("limited");
      await store.admin.forgetSignIn(attempts[2]?.attemptId as string);
      await store.admin.forgetSignIn(attempts[2]?.attemptId as string);
      expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(11))).outcome).toBe("reserved");
      expect((await store.admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(12))).outcome).toBe("limited");
    });

    storeTest(
      "reserves 30 attempts of one key sent at once (through two stores on PostgreSQL): exactly 5 pass",
      async ({ location, store }) => {
        const other = backend === "postgres" ? await storeForThisTest(location) : store;
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? other : store).admin.reserveSignIn(alone("a"), SIGN_IN_POLICY, at(0)),
          ),
        );
        expect(outcomes.filter((outcome) => outcome.outcome === "reserved")).toHaveLength(MAX_FAILURES);
        expect(outcomes.filter((outcome) => outcome.outcome === "limited")).toHaveLength(30 - MAX_FAILURES);
      },
    );

    storeTest(
      "after 20 failures from any keys holds every attempt back, 1 s doubling to 60 s, and refuses one whose turn is further off",
      async ({ store }) => {
        for (let n = 0; n < 20; n++) {
          expect(reserved(await store.admin.reserveSignIn(alone(key(n)), SIGN_IN_POLICY, at(0))).waitMs).toBe(0);
        }
        // Each attempt comes when the one before it had its turn: the delays themselves.
        let now = 0;
        const delays: number[] = [];
        for (let n = 20; n < 29; n++) {
          const { waitMs } = reserved(await store.admin.reserveSignIn(alone(key(n)), SIGN_IN_POLICY, at(now)));
          delays.push(waitMs);
          now += waitMs;
        }
        expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);

        // At the last turn, the next is a minute off: within the bound. Another at once would be
        // two minutes off: refused until a turn within a minute is free, when the last one comes.
        expect(reserved(await store.admin.reserveSignIn(alone(key(29)), SIGN_IN_POLICY, at(now))).waitMs).toBe(
          MAX_DELAY_MS,
        );
        expect(await store.admin.reserveSignIn(alone(key(30)), SIGN_IN_POLICY, at(now))).toEqual({
          outcome: "throttled",
          waitMs: MAX_DELAY_MS,
        });
        expect(
          reserved(await store.admin.reserveSignIn(alone(key(30)), SIGN_IN_POLICY, at(now + MAX_DELAY_MS))).waitMs,
        ).toBe(MAX_DELAY_MS);
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
        for (let n = 0; n < 20; n++) reserved(await store.admin.reserveSignIn(alone(key(n)), SIGN_IN_POLICY, at(0)));
        const outcomes = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? other : store).admin.reserveSignIn(alone(key(100 + i)), SIGN_IN_POLICY, at(0)),
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
        for (let n = 0; n < 3; n++) reserved(await store.admin.reserveSignIn(alone(key(n)), SIGN_IN_POLICY, at(0)));
        reserved(await store.admin.reserveSignIn(alone(key(0)), SIGN_IN_POLICY, at(60_000)));
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(60_000))).toEqual({ failures: 4, keys: 3 });
        expect(await store.admin.signInFailures(FAILURE_WINDOW_MS, at(FAILURE_WINDOW_MS))).toEqual({
          failures: 1,
          keys: 1,
        });
        reserved(await store.admin.reserveSignIn(alone(key(9)), SIGN_IN_POLICY, at(FAILURE_WINDOW_MS + 60_000)));
        const rows = await rowsOf(location, store, "SELECT limit_key FROM admin_sign_in_failures ORDER BY id");
        expect(rows.map((row) => row.limit_key)).toEqual([key(9)]);
      },
    );
  });

  describe("sign-in failures of nested networks", () => {
    /** The /64 numbered `n` of one /48, in the /56 numbered `subnet`. */
    const inSubscriber = (subnet: number, n: number) =>
      addressGroups(`2001:db8:4800:${(subnet * 256 + n).toString(16)}::1`);

    storeTest(
      "refuses a /56 after 10 failures, a /48 after 20 and a /24 after 20, each client after 5, others untouched",
      async ({ store }) => {
        const reserve = (client: SignInClient, ms = 0) => store.admin.reserveSignIn(client, SIGN_IN_POLICY, at(ms));
        // Two /64s of /56 0 fail 5 times each, a minute apart: the /56 has its 10.
        for (let n = 0; n < SUBNET_FAILURES; n++) reserved(await reserve(inSubscriber(0, n % 2), n * 60_000));
        expect(await reserve(inSubscriber(0, 2), 10 * 60_000)).toEqual({
          outcome: "limited",
          waitMs: FAILURE_WINDOW_MS - 10 * 60_000,
          by: "subnet",
        });
        // The client's own 5 outlast its /56's 10: the later release wins.
        expect(await reserve(inSubscriber(0, 1), 10 * 60_000)).toEqual({
          outcome: "limited",
          waitMs: FAILURE_WINDOW_MS + 60_000 - 10 * 60_000,
          by: "client",
        });
        // Other /56s of the /48 bring it to 20.
        for (let n = 0; n < NETWORK_FAILURES - SUBNET_FAILURES; n++) {
          reserved(await reserve(inSubscriber(1 + Math.floor(n / MAX_FAILURES), n), 10 * 60_000));
        }
        expect(await reserve(inSubscriber(9, 0), 10 * 60_000)).toEqual({
          outcome: "limited",
          waitMs: FAILURE_WINDOW_MS - 10 * 60_000,
          by: "network",
        });
        // Another /48, and IPv4 addresses: their own counts.
        reserved(await reserve(addressGroups("2001:db8:4801::1"), 10 * 60_000));
        for (let n = 0; n < NETWORK_FAILURES; n++)
          reserved(await reserve(addressGroups(`10.9.9.${n >> 2}`), 10 * 60_000));
        expect(await reserve(addressGroups("10.9.9.200"), 10 * 60_000)).toMatchObject({
          outcome: "limited",
          by: "network",
        });
        expect(reserved(await reserve(addressGroups("10.9.10.1"), 10 * 60_000)).waitMs).toBe(0);
        // Once its oldest failures leave the window, the /48 may try again.
        expect((await reserve(inSubscriber(9, 0), 20 * 60_000)).outcome).toBe("reserved");
      },
    );

    storeTest(
      "counts one network's failures toward the console's turn up to 5: a /48's 20 hold no one back, three more networks' do",
      async ({ store }) => {
        const reserve = (client: SignInClient) => store.admin.reserveSignIn(client, SIGN_IN_POLICY, at(0));
        for (let n = 0; n < NETWORK_FAILURES; n++) reserved(await reserve(inSubscriber(n % 8, n)));
        // 20 failures, 5 of them counted: a stranger is checked at once.
        expect(reserved(await reserve(addressGroups("192.0.2.1"))).waitMs).toBe(0);
        for (let n = 1; n < 10; n++) reserved(await reserve(addressGroups(`198.51.${n}.1`)));
        // 5 + 1 + 9 counted, of 30: 5 more networks of one failure each make 20.
        for (let n = 0; n < 5; n++) expect(reserved(await reserve(addressGroups(`203.0.${n}.1`))).waitMs).toBe(0);
        // Every failure counts toward the delay once the turn is on: 2^(35 - 20) s, at most a minute.
        expect(reserved(await reserve(addressGroups("203.0.113.1"))).waitMs).toBe(MAX_DELAY_MS);
        expect(await reserve(addressGroups("203.0.114.1"))).toEqual({ outcome: "throttled", waitMs: MAX_DELAY_MS });
      },
    );

    storeTest(
      "answers the previous release's call as it expects: per key, every failure toward the console's turn",
      async ({ location, store }) => {
        for (let n = 0; n < CONSOLE_FAILURES_BEFORE_DELAY - 1; n++)
          reserved(await store.admin.reserveSignIn(inSubscriber(n % 4, n), SIGN_IN_POLICY, at(0)));
        if (location.backend === "pglite") await store.close();
        const outcomes = await withDirectSql(location, async (query) => {
          const call = (client: string) =>
            query(
              "SELECT * FROM admin_reserve_sign_in($1::text, $2::timestamptz, $3::integer, $4::integer, $5::integer, $6::integer, $7::integer)",
              [client, at(0).toISOString(), FAILURE_WINDOW_MS, MAX_FAILURES, 20, 1_000, MAX_DELAY_MS],
            );
          const rows = [];
          for (let n = 0; n < MAX_FAILURES + 1; n++) rows.push(...(await call("192.0.2.7")));
          return rows.map((row) => [row.outcome, Number(row.wait_ms), Object.keys(row).length]);
        });
        // 19 of the /48's failures counted in full by the previous release: its 20th holds back.
        expect(outcomes).toEqual([
          ["reserved", 0, 4],
          ["reserved", 1_000, 4],
          ["reserved", 3_000, 4],
          ["reserved", 7_000, 4],
          ["reserved", 15_000, 4],
          ["limited", FAILURE_WINDOW_MS, 4],
        ]);
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
