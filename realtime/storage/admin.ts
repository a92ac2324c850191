/**
 * The operator console's storage (docs/design.md#9), beside the auction's and on the same
 * database: its sessions, and the failed sign-ins every instance counts together. Both backends
 * lend it a query function; the SQL lives here once (the reservation in sql/functions/60_admin.sql).
 *
 * Every call takes the time it happens at: null is the database's own clock, one clock for every
 * instance (the service's); tests pass a time of their own.
 */
import type { Logger } from "../logger.ts";
import type { Query } from "./payments.ts";

/** Every instance LISTENs here; the payload is the id of a revoked session, or "*" for all of them. */
export const ADMIN_SESSIONS_CHANNEL = "admin_sessions";
const EVERY_SESSION = "*";

/** The limits the console sets (realtime/admin/signInLimits.ts), passed to every reservation. */
export interface SignInPolicy {
  windowMs: number;
  /** Failures per client key in the window before it is refused. */
  maxFailures: number;
  /** Failures in the window, from any keys, before every attempt is held back. */
  consoleFailures: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export type SignInReservation =
  /** The key has its failures: refused for `waitMs`. */
  | { outcome: "limited"; waitMs: number }
  /** Too many attempts are held back already: refused for `waitMs`. */
  | { outcome: "throttled"; waitMs: number }
  /** Counted as a failure until forgotten; its password may be checked after `waitMs` (0: now). */
  | { outcome: "reserved"; attemptId: string; waitMs: number };

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
  /** Reserves a sign-in attempt of `key` (see admin_reserve_sign_in). */
  reserveSignIn(key: string, policy: SignInPolicy, at: Date | null): Promise<SignInReservation>;
  /** The attempt is no failure after all. */
  forgetSignIn(attemptId: string): Promise<void>;
  /** What the window holds now, for the metrics. */
  signInFailures(windowMs: number, at: Date | null): Promise<SignInFailures>;
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

const RESERVE_SQL = `SELECT outcome, attempt_id::text AS attempt_id, wait_ms::float8 AS wait_ms
  FROM admin_reserve_sign_in($1::text, $2::timestamptz, $3::integer, $4::integer, $5::integer, $6::integer, $7::integer)`;

const FORGET_SQL = "DELETE FROM admin_sign_in_failures WHERE id = $1::bigint";

const FAILURES_SQL = `SELECT count(*)::integer AS failures, count(DISTINCT limit_key)::integer AS keys
  FROM admin_sign_in_failures WHERE at > ${NOW} - $2::bigint * interval '1 millisecond'`;

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
    async reserveSignIn(key, policy, at) {
      const [row] = await query(RESERVE_SQL, [
        key,
        iso(at),
        policy.windowMs,
        policy.maxFailures,
        policy.consoleFailures,
        policy.firstDelayMs,
        policy.maxDelayMs,
      ]);
      const waitMs = Number(row?.wait_ms);
      if (row?.outcome === "reserved") return { outcome: "reserved", attemptId: String(row.attempt_id), waitMs };
      if (row?.outcome === "limited" || row?.outcome === "throttled") return { outcome: row.outcome, waitMs };
      throw new Error(`admin_reserve_sign_in answered ${JSON.stringify(row)}`);
    },
    async forgetSignIn(attemptId) {
      await query(FORGET_SQL, [attemptId]);
    },
    async signInFailures(windowMs, at) {
      const [row] = await query(FAILURES_SQL, [iso(at), windowMs]);
      return { failures: Number(row?.failures ?? 0), keys: Number(row?.keys ?? 0) };
    },
  };
}
