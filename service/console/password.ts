/**
 * The operator's password, stored only as a salted scrypt hash (node:crypto) in
 * ADMIN_PASSWORD_HASH, in the form passwordHash.ts reads and writes. `npm run admin:hash` makes one
 * (scripts/admin-hash.ts); the console checks passwords against it in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import {
  DEFAULT_COST,
  formatPasswordHash,
  KEY_BYTES,
  type PasswordHash,
  SALT_BYTES,
  type ScryptCost,
  scryptMemoryBytes,
} from "../passwordHash.ts";

function derive(password: string, cost: Omit<PasswordHash, "key">, keyBytes: number): Promise<Buffer> {
  const { logN, r, p, salt } = cost;
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize("NFC"),
      salt,
      keyBytes,
      { N: 2 ** logN, r, p, maxmem: scryptMemoryBytes(cost) },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

/** A new hash at `cost`; the default is the one the service requires at least (passwordHash.ts). */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, { ...cost, salt }, KEY_BYTES);
  return formatPasswordHash({ ...cost, salt, key });
}

/** Whether `password` is the one hashed, compared in constant time. Rejects when scrypt fails. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const key = await derive(password, stored, stored.key.length);
  return timingSafeEqual(key, stored.key);
}
