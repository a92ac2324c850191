/**
 * The operator's session cookie: `<id>.<expires at, ms>.<HMAC-SHA256 of both>` signed with a key
 * derived from ADMIN_SESSION_SECRET and a digest of ADMIN_PASSWORD_HASH (the hash, never the
 * password), as device.ts does: a new secret or a new password hash, once an instance restarts with
 * it, leaves every cookie signed under the old ones unsigned there, though its row is live. The signature lets any instance refuse a forged, re-signed or expired cookie
 * without asking the database; the session itself is a row there (storage/admin.ts), which sign-out
 * revokes on every instance at once, so a cookie opens the console only while its row is live too
 * (docs/design.md#9). The id names the session in the audit trail.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { formatPasswordHash, type PasswordHash } from "../passwordHash.ts";

/** docs/design.md#6a: a session lasts 8 hours. */
export const SESSION_MS = 8 * 60 * 60 * 1000;

export interface Session {
  id: string;
  expiresAtMs: number;
}

/** The key session cookies are signed with: apart from the devices', and bound to the password's hash. */
export function sessionKey(secret: string, passwordHash: PasswordHash): Buffer {
  const hashDigest = createHash("sha256").update(formatPasswordHash(passwordHash)).digest();
  return createHmac("sha256", secret).update("nothing-store admin session\0").update(hashDigest).digest();
}

function signature(key: Buffer, payload: string): Buffer {
  return createHmac("sha256", key).update(payload).digest();
}

/** 12 random bytes, base64url: 16 characters. */
export function newSessionId(): string {
  return randomBytes(12).toString("base64url");
}

/** The cookie value of a session. */
export function sessionToken(key: Buffer, session: Session): string {
  const payload = `${session.id}.${session.expiresAtMs}`;
  return `${payload}.${signature(key, payload).toString("base64url")}`;
}

/**
 * The session a cookie value carries, or null when it is malformed, forged, signed with another
 * key (another secret or password hash) or expired. Whether it was revoked only the database knows.
 */
export function readSession(key: Buffer, token: string | undefined, nowMs: number): Session | null {
  const parts = token?.split(".") ?? [];
  const [id, expires, signed] = parts;
  if (parts.length !== 3 || !id || !expires || !signed || !/^\d+$/.test(expires)) return null;
  // The signature as sessionToken spells it, compared as text: decoding base64url would also take
  // padding, "+/" for "-_", other trailing bits and stray characters, so one cookie had many spellings.
  const expected = Buffer.from(signature(key, `${id}.${expires}`).toString("base64url"));
  const given = Buffer.from(signed);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const expiresAtMs = Number(expires);
  return nowMs < expiresAtMs ? { id, expiresAtMs } : null;
}
