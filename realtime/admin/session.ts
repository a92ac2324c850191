/**
 * The operator's session: a cookie value `<id>.<expires at, ms>.<HMAC-SHA256 of both>` signed with
 * ADMIN_SESSION_SECRET, so every instance accepts the sessions of every other and no session is
 * stored. The id names the session in the audit trail.
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

export function signSession(secret: string, nowMs: number): { session: Session; token: string } {
  const session = { id: randomBytes(12).toString("base64url"), expiresAtMs: nowMs + SESSION_MS };
  const payload = `${session.id}.${session.expiresAtMs}`;
  return { session, token: `${payload}.${signature(secret, payload).toString("base64url")}` };
}

/** The session a cookie value carries, or null when it is malformed, forged, signed with another secret or expired. */
export function readSession(secret: string, token: string | undefined, nowMs: number): Session | null {
  const parts = token?.split(".") ?? [];
  const [id, expires, signed] = parts;
  if (parts.length !== 3 || !id || !expires || !signed || !/^\d+$/.test(expires)) return null;
  // The signature as signSession spells it, compared as text: decoding base64url would also take
  // padding, "+/" for "-_", other trailing bits and stray characters, so one cookie had many spellings.
  const expected = Buffer.from(signature(secret, `${id}.${expires}`).toString("base64url"));
  const given = Buffer.from(signed);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const expiresAtMs = Number(expires);
  return nowMs < expiresAtMs ? { id, expiresAtMs } : null;
}
