/**
 * The operator's password, stored only as a salted scrypt hash (node:crypto) in
 * ADMIN_PASSWORD_HASH, in one line: `scrypt:<log2 N>:<r>:<p>:<salt, base64>:<key, base64>` (colons,
 * not dollar signs: a shell would expand those in an unquoted assignment).
 * `npm run admin:hash` makes one (scripts/admin-hash.ts); the console checks passwords against it
 * in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export interface PasswordHash {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

/** OWASP's scrypt minimum is N=2^17, r=8, p=1: about 128 MiB and a tenth of a second per check. */
const DEFAULT_COST = { logN: 17, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;

function derive(password: string, { logN, r, p, salt }: Omit<PasswordHash, "key">, keyBytes: number): Promise<Buffer> {
  const N = 2 ** logN;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, keyBytes, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string, cost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, { ...cost, salt }, KEY_BYTES);
  return ["scrypt", cost.logN, cost.r, cost.p, salt.toString("base64"), key.toString("base64")].join(":");
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The parts of a stored hash; throws with what is wrong (never echoing the value). */
export function parsePasswordHash(text: string): PasswordHash {
  const parts = text.trim().split(":");
  const [scheme, logN, r, p, salt, key] = parts;
  if (parts.length !== 6 || scheme !== "scrypt") {
    throw new Error("must be a hash printed by npm run admin:hash (scrypt:N:r:p:salt:key)");
  }
  const numbers = [logN, r, p].map(Number);
  const [n, rr, pp] = numbers as [number, number, number];
  if (!numbers.every(Number.isInteger) || n < 14 || n > 22 || rr < 1 || rr > 32 || pp < 1 || pp > 16) {
    throw new Error("has scrypt costs out of range (log2 N 14 to 22, r 1 to 32, p 1 to 16)");
  }
  if (!BASE64.test(salt ?? "") || !BASE64.test(key ?? "")) throw new Error("has a salt or key that is not base64");
  const decoded = { salt: Buffer.from(salt as string, "base64"), key: Buffer.from(key as string, "base64") };
  if (decoded.salt.length < 16 || decoded.key.length < 32)
    throw new Error("has a salt under 16 or a key under 32 bytes");
  return { logN: n, r: rr, p: pp, ...decoded };
}

/** Whether `password` is the one hashed, compared in constant time. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const key = await derive(password, stored, stored.key.length);
  return timingSafeEqual(key, stored.key);
}
