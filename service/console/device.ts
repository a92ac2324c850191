/**
 * The operator's device cookie (OWASP, "Slow Down Online Guessing Attacks with Device Cookies";
 * docs/decisions/2026-11-27-device-cookies-for-sign-in.md): `<id>.<HMAC-SHA256 of the id>`, given to
 * a browser at each sign-in. A sign-in carrying one that holds is limited by that device's own
 * failures only, so strangers guessing from many addresses cannot keep the operator out.
 *
 * The key is derived from ADMIN_SESSION_SECRET and a digest of ADMIN_PASSWORD_HASH (the hash, never
 * the password): a new hash or secret, once the instances restart with it, leaves every device
 * cookie unsigned without a write anywhere. The id is a row in the database (storage/admin.ts),
 * which "Sign out everywhere" revokes and which holds the device's failures for every instance.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { formatPasswordHash, type PasswordHash } from "../passwordHash.ts";

/** How long a device stays trusted without signing in: a year. */
export const DEVICE_MS = 365 * 24 * 60 * 60 * 1000;

/** 16 random bytes, base64url: 22 characters. */
const DEVICE_ID = /^[\w-]{22}$/;

/** The key device cookies are signed with: apart from the sessions', and bound to the password's hash. */
export function deviceKey(secret: string, passwordHash: PasswordHash): Buffer {
  const hashDigest = createHash("sha256").update(formatPasswordHash(passwordHash)).digest();
  return createHmac("sha256", secret).update("nothing-store admin device\0").update(hashDigest).digest();
}

export function newDeviceId(): string {
  return randomBytes(16).toString("base64url");
}

function signature(key: Buffer, id: string): string {
  return createHmac("sha256", key).update(id).digest("base64url");
}

/** The cookie value of a device. */
export function deviceToken(key: Buffer, id: string): string {
  return `${id}.${signature(key, id)}`;
}

/**
 * The device id a cookie value carries, or null when it is malformed, forged or signed with
 * another key (another secret or password hash). Whether it is revoked only the database knows.
 */
export function readDevice(key: Buffer, token: string | undefined): string | null {
  const parts = token?.split(".") ?? [];
  const [id, signed] = parts;
  if (parts.length !== 2 || !id || !signed || !DEVICE_ID.test(id)) return null;
  // Compared as text, in the one spelling deviceToken writes (as session.ts does).
  const expected = Buffer.from(signature(key, id));
  const given = Buffer.from(signed);
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}
