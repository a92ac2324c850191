/**
 * The operator's session cookie: `<id>.<expires at, ms>.<HMAC-SHA256 of both>` signed with
 * ADMIN_SESSION_SECRET. The signature lets any instance refuse a forged, re-signed or expired cookie
 * without asking the database; the session itself is a row there (storage/admin.ts), which sign-out
 * revokes on every instance at once, so a cookie opens the console only while its row is live too
 * (docs/design.md#9). The id names the session in the audit trail.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** docs/design.md#6a: a session lasts 8 hours. */
export const SESSION_MS = 8 * 60 * 60 * 1000;

export interface Session {
  id: string;
  expiresAtMs: number;
}

function signature(secret: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(payload).digest();
}

/** 12 random bytes, base64url: 16 characters. */
export function newSessionId(): string {
  return randomBytes(12).toString("base64url");
}

/** The cookie value of a session. */
export function sessionToken(secret: string, session: Session): string {
  const payload = `${session.id}.${session.expiresAtMs}`;
  return `${payload}.${signature(secret, payload).toString("base64url")}`;
}

/**
 * The session a cookie value carries, or null when it is malformed, forged, signed with another
 * secret or expired. Whether it was revoked only the database knows.
 */
export function readSession(secret: string, token: string | undefined, nowMs: number): Session | null {
  const parts = token?.split(".") ?? [];
  const [id, expires, signed] = parts;
  if (parts.length !== 3 || !id || !expires || !signed || !/^\d+$/.test(expires)) return null;
  // The signature as sessionToken spells it, compared as text: decoding base64url would also take
  // padding, "+/" for "-_", other trailing bits and stray characters, so one cookie had many spellings.
  const expected = Buffer.from(signature(secret, `${id}.${expires}`).toString("base64url"));
  const given = Buffer.from(signed);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const expiresAtMs = Number(expires);
  return nowMs < expiresAtMs ? { id, expiresAtMs } : null;
}
