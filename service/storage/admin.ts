/**
 * The operator console's storage (docs/design.md#9), beside the auction's and on the same
 * database: its sessions, its devices (the browsers that signed in, docs/decisions/
 * 2026-11-27-device-cookies-for-sign-in.md), and the failed sign-ins every instance counts together.
 * Both backends lend it a query function; the SQL lives here once (the reservations in
 * sql/functions/60_admin.sql and 61_admin_devices.sql).
 *
 * Every call takes the time it happens at: null is the database's own clock, one clock for every
 * instance (the service's); tests pass a time of their own.
 */
import type { Logger } from "../logger.ts";
import type { Query } from "./payments.ts";
import { type PulseRead, readPulse } from "./pulse.ts";

/** Every instance LISTENs here; the payload is the id of a revoked session, or "*" for all of them. */
export const ADMIN_SESSIONS_CHANNEL = "admin_sessions";
const EVERY_SESSION = "*";

/** The limits the console sets (service/console/signInLimits.ts), passed to every reservation. */
export interface SignInPolicy {
  windowMs: number;
  /** Failures per client key in the window before it is refused. */
  maxFailures: number;
  /** Failures per IPv6 /56 in the window before every client in it is refused. */
  subnetFailures: number;
  /** Failures per IPv6 /48 or IPv4 /24 in the window before every client in it is refused. */
  networkFailures: number;
  /** Failures in the window, from any keys, before every attempt is held back. */
  consoleFailures: number;
  /** What one network's failures count toward consoleFailures, at most. */
  consoleShare: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * Who is signing in, in the nested groups of the fair shares (service/http/fairShares.ts,
 * addressGroups): the client's limit key, its IPv6 /56 and its IPv6 /48 or IPv4 /24 (null: none).
 */
export interface SignInClient {
  client: string;
  mid: string | null;
  wide: string | null;
}

/** Which of the client's groups has its failures. */
type SignInGroup = "client" | "subnet" | "network";

export type SignInReservation =
  /** The key or one of its networks (`by`) has its failures: refused for `waitMs`. */
  | { outcome: "limited"; waitMs: number; by: SignInGroup }
  /** Too many attempts are held back already: refused for `waitMs`. */
  | { outcome: "throttled"; waitMs: number }
  /** Counted as a failure until forgotten; its password may be checked after `waitMs` (0: now). */
  | { outcome: "reserved"; attemptId: string; waitMs: number };

/** The limit of one device's own failures (service/console/signInLimits.ts). */
export interface DevicePolicy {
  windowMs: number;
  /** Failures through one device in the window before it is locked. */
  maxFailures: number;
}

export type DeviceReservation =
  /** No such device, or revoked, or expired: the attempt is an untrusted client's. */
  | { outcome: "unknown" }
  /** The device has its failures: refused for `waitMs`. */
  | { outcome: "locked"; waitMs: number }
  /** Counted as a failure of the device until forgotten; its password may be checked now. */
  | { outcome: "reserved"; attemptId: string };

interface SignInFailures {
  /** Failures in the window, from every key. */
  failures: number;
  /** Keys with a failure in the window. */
  keys: number;
}

export interface AdminStore {
  /** Records a new session `id` lasting `lifetimeMs`; returns when it expires. Deletes expired sessions. */
  openSession(id: string, lifetimeMs: number, at: Date | null): Promise<{ expiresAtMs: number }>;
  /** Whether the session exists, is not revoked and has not expired. */
  isSessionLive(id: string, at: Date | null): Promise<boolean>;
  /** Revokes one session on every instance; false when it was not live. */
  revokeSession(id: string, at: Date | null): Promise<boolean>;
  /** Revokes every live session; returns how many. */
  revokeEverySession(at: Date | null): Promise<number>;
  /** A session revoked through any instance: its id, or null for every session. Returns unsubscribe. */
  onSessionRevoked(listener: (id: string | null) => void): () => void;
  /** Reserves a sign-in attempt of `client` (see admin_reserve_sign_in). */
  reserveSignIn(client: SignInClient, policy: SignInPolicy, at: Date | null): Promise<SignInReservation>;
  /** The attempt is no failure after all. */
  forgetSignIn(attemptId: string): Promise<void>;
  /** What the window holds now, for the metrics. */
  signInFailures(windowMs: number, at: Date | null): Promise<SignInFailures>;
  /**
   * Records a new device `id` lasting `lifetimeMs`, revoking the one it replaces (null: none).
   * Deletes the devices expired or revoked before.
   */
  issueDevice(id: string, lifetimeMs: number, replacing: string | null, at: Date | null): Promise<void>;
  /** Reserves a sign-in attempt through device `id` (see admin_reserve_device_sign_in). */
  reserveDeviceSignIn(id: string, policy: DevicePolicy, at: Date | null): Promise<DeviceReservation>;
  /** The device's attempt is no failure after all. */
  forgetDeviceSignIn(attemptId: string): Promise<void>;
  /** Revokes every device; returns how many were trusted. */
  revokeEveryDevice(at: Date | null): Promise<number>;
  /** The shop's pulse for the console (pulse.ts); the sales only if `withSales` (payments on), the bids from `fromMinute`. */
  pulse(at: Date | null, withSales: boolean, fromMinute?: Date | null): Promise<PulseRead>;
}

// One time for the whole statement: statement_timestamp() is when it arrived.
const NOW = "coalesce($1::timestamptz, statement_timestamp())";

const OPEN_SESSION_SQL = `WITH pruned AS (DELETE FROM admin_sessions WHERE expires_at <= ${NOW})
  INSERT INTO admin_sessions (id, created_at, expires_at)
  VALUES ($2, ${NOW}, ${NOW} + $3::bigint * interval '1 millisecond')
  RETURNING expires_at`;

const SESSION_LIVE_SQL = `SELECT EXISTS (
  SELECT 1 FROM admin_sessions WHERE id = $2 AND revoked_at IS NULL AND expires_at > ${NOW}
) AS live`;

// The notification goes with the row it announces, at commit; none when nothing was revoked.
const REVOKE_SESSION_SQL = `UPDATE admin_sessions SET revoked_at = ${NOW}
  WHERE id = $2 AND revoked_at IS NULL AND expires_at > ${NOW}
  RETURNING id, pg_notify('${ADMIN_SESSIONS_CHANNEL}', id)`;

const REVOKE_EVERY_SESSION_SQL = `WITH revoked AS (
  UPDATE admin_sessions SET revoked_at = ${NOW} WHERE revoked_at IS NULL AND expires_at > ${NOW} RETURNING id
) SELECT count(*)::integer AS revoked, pg_notify('${ADMIN_SESSIONS_CHANNEL}', '${EVERY_SESSION}') FROM revoked`;

const RESERVE_SQL = `SELECT outcome, attempt_id::text AS attempt_id, wait_ms::float8 AS wait_ms, limited_by
  FROM admin_reserve_sign_in($1::text, $2::text, $3::text, $4::timestamptz, $5::integer, $6::integer, $7::integer,
    $8::integer, $9::integer, $10::integer, $11::integer, $12::integer)`;

const SIGN_IN_GROUPS: readonly string[] = ["client", "subnet", "network"] satisfies SignInGroup[];

const FORGET_SQL = "DELETE FROM admin_sign_in_failures WHERE id = $1::bigint";

const FAILURES_SQL = `SELECT count(*)::integer AS failures, count(DISTINCT limit_key)::integer AS keys
  FROM admin_sign_in_failures WHERE at > ${NOW} - $2::bigint * interval '1 millisecond'`;

// Both statements see the rows as they were: the device replaced now is deleted at the next issue.
const ISSUE_DEVICE_SQL = `WITH pruned AS (
    DELETE FROM admin_devices WHERE expires_at <= ${NOW} OR revoked_at IS NOT NULL
  ), replaced AS (
    UPDATE admin_devices SET revoked_at = ${NOW} WHERE id = $4 AND revoked_at IS NULL
  )
  INSERT INTO admin_devices (id, issued_at, expires_at)
  VALUES ($2, ${NOW}, ${NOW} + $3::bigint * interval '1 millisecond')`;

const RESERVE_DEVICE_SQL = `SELECT outcome, attempt_id::text AS attempt_id, wait_ms::float8 AS wait_ms
  FROM admin_reserve_device_sign_in($1::text, $2::timestamptz, $3::integer, $4::integer)`;

const FORGET_DEVICE_SQL = "DELETE FROM admin_device_failures WHERE id = $1::bigint";

const REVOKE_EVERY_DEVICE_SQL = `WITH revoked AS (
  UPDATE admin_devices SET revoked_at = ${NOW} WHERE revoked_at IS NULL AND expires_at > ${NOW} RETURNING id
) SELECT count(*)::integer AS revoked FROM revoked`;

const iso = (at: Date | null) => at?.toISOString() ?? null;

export function createAdminNotices(logger: Logger) {
  const revokedListeners = new Set<(id: string | null) => void>();
  return {
    deliver(payload: string): void {
      if (payload === "") {
        logger.error({ payload }, "unreadable session notification");
        return;
      }
      const id = payload === EVERY_SESSION ? null : payload;
      for (const listener of revokedListeners) listener(id);
    },
    onSessionRevoked(listener: (id: string | null) => void) {
      revokedListeners.add(listener);
      return () => void revokedListeners.delete(listener);
    },
    clear(): void {
      revokedListeners.clear();
    },
  };
}

type AdminNotices = ReturnType<typeof createAdminNotices>;

export function createAdminStore(query: Query, notices: AdminNotices): AdminStore {
  return {
    async openSession(id, lifetimeMs, at) {
      const [row] = await query(OPEN_SESSION_SQL, [iso(at), id, lifetimeMs]);
      return { expiresAtMs: new Date(row?.expires_at as string | Date).getTime() };
    },
    async isSessionLive(id, at) {
      return (await query(SESSION_LIVE_SQL, [iso(at), id]))[0]?.live === true;
    },
    async revokeSession(id, at) {
      return (await query(REVOKE_SESSION_SQL, [iso(at), id])).length > 0;
    },
    async revokeEverySession(at) {
      return Number((await query(REVOKE_EVERY_SESSION_SQL, [iso(at)]))[0]?.revoked ?? 0);
    },
    onSessionRevoked: notices.onSessionRevoked,
    async reserveSignIn({ client, mid, wide }, policy, at) {
      const [row] = await query(RESERVE_SQL, [
        client,
        mid,
        wide,
        iso(at),
        policy.windowMs,
        policy.maxFailures,
        policy.subnetFailures,
        policy.networkFailures,
        policy.consoleFailures,
        policy.consoleShare,
        policy.firstDelayMs,
        policy.maxDelayMs,
      ]);
      const waitMs = Number(row?.wait_ms);
      if (row?.outcome === "reserved") return { outcome: "reserved", attemptId: String(row.attempt_id), waitMs };
      if (row?.outcome === "throttled") return { outcome: "throttled", waitMs };
      if (row?.outcome === "limited" && SIGN_IN_GROUPS.includes(row.limited_by as string)) {
        return { outcome: "limited", waitMs, by: row.limited_by as SignInGroup };
      }
      throw new Error(`admin_reserve_sign_in answered ${JSON.stringify(row)}`);
    },
    async forgetSignIn(attemptId) {
      await query(FORGET_SQL, [attemptId]);
    },
    async signInFailures(windowMs, at) {
      const [row] = await query(FAILURES_SQL, [iso(at), windowMs]);
      return { failures: Number(row?.failures ?? 0), keys: Number(row?.keys ?? 0) };
    },
    async issueDevice(id, lifetimeMs, replacing, at) {
      await query(ISSUE_DEVICE_SQL, [iso(at), id, lifetimeMs, replacing]);
    },
    async reserveDeviceSignIn(id, policy, at) {
      const [row] = await query(RESERVE_DEVICE_SQL, [id, iso(at), policy.windowMs, policy.maxFailures]);
      if (row?.outcome === "unknown") return { outcome: "unknown" };
      if (row?.outcome === "locked") return { outcome: "locked", waitMs: Number(row.wait_ms) };
      if (row?.outcome === "reserved") return { outcome: "reserved", attemptId: String(row.attempt_id) };
      throw new Error(`admin_reserve_device_sign_in answered ${JSON.stringify(row)}`);
    },
    async forgetDeviceSignIn(attemptId) {
      await query(FORGET_DEVICE_SQL, [attemptId]);
    },
    async revokeEveryDevice(at) {
      return Number((await query(REVOKE_EVERY_DEVICE_SQL, [iso(at)]))[0]?.revoked ?? 0);
    },
    pulse: (at, withSales, fromMinute) => readPulse(query, at, withSales, fromMinute),
  };
}
