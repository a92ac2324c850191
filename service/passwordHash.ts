/**
 * The operator's password hash as ADMIN_PASSWORD_HASH holds it, and the scrypt cost the service
 * requires of it. Below both config.ts (which refuses a bad one at start) and admin/password.ts
 * (which makes hashes and checks passwords against them), so the configuration needs nothing of
 * the console.
 *
 * One line: `scrypt:<log2 N>:<r>:<p>:<salt, base64>:<key, base64>` (colons, not dollar signs: a
 * shell would expand those in an unquoted assignment).
 */

export interface ScryptCost {
  logN: number;
  r: number;
  p: number;
}

export interface PasswordHash extends ScryptCost {
  salt: Buffer;
  key: Buffer;
}

/** OWASP's scrypt minimum, N=2^17, r=8, p=1: 128 MiB and about a quarter of a second per check here. */
export const DEFAULT_COST: ScryptCost = { logN: 17, r: 8, p: 1 };
const MIN_LOG_N = 17;
const MIN_R = 8;
/** Two checks run at once (docs/design.md#11): 512 MiB at most between them. */
const MAX_MEMORY_BYTES = 256 * 1024 ** 2;
/** Each unit of p is one more full pass of the memory-hard function, on the same thread. */
const MAX_P = 4;

export const SALT_BYTES = 16;
export const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The array scrypt's cost chooses, 128·N·r bytes: what the policy bounds. */
function costMemoryBytes({ logN, r }: ScryptCost): number {
  return 128 * 2 ** logN * r;
}

/** All scrypt allocates, as OpenSSL counts it (128·r·(N+2) plus 128·r·p): the maxmem to pass it. */
export function scryptMemoryBytes({ logN, r, p }: ScryptCost): number {
  return 128 * r * (2 ** logN + 2 + p);
}

export function formatPasswordHash({ logN, r, p, salt, key }: PasswordHash): string {
  return ["scrypt", logN, r, p, salt.toString("base64"), key.toString("base64")].join(":");
}

/**
 * The parts of a stored hash; throws with what is wrong (never echoing the value). Checks the form
 * only: the cost is costProblems()'s, so code may build a cheap hash for a test on purpose.
 */
export function parsePasswordHash(text: string): PasswordHash {
  const parts = text.trim().split(":");
  const [scheme, logN, r, p, salt, key] = parts;
  if (parts.length !== 6 || scheme !== "scrypt") {
    throw new Error("must be a hash printed by npm run admin:hash (scrypt:N:r:p:salt:key)");
  }
  const [n, rr, pp] = [logN, r, p].map((part) => (/^\d{1,10}$/.test(part ?? "") ? Number(part) : 0)) as [
    number,
    number,
    number,
  ];
  // N = 2^logN must stay an exact number; scrypt itself refuses N below 2.
  if (n < 1 || n > 62 || rr < 1 || pp < 1) {
    throw new Error("has scrypt costs that are not numbers (log2 N from 1 to 62, r and p from 1)");
  }
  if (!BASE64.test(salt ?? "") || !BASE64.test(key ?? "")) throw new Error("has a salt or key that is not base64");
  const decoded = { salt: Buffer.from(salt as string, "base64"), key: Buffer.from(key as string, "base64") };
  if (decoded.salt.length < SALT_BYTES || decoded.key.length < KEY_BYTES) {
    throw new Error(`has a salt under ${SALT_BYTES} or a key under ${KEY_BYTES} bytes`);
  }
  return { logN: n, r: rr, p: pp, ...decoded };
}

function mebibytes(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${bytes / 1024 ** 2} MiB`;
}

/**
 * What is wrong with a hash's cost for the service (docs/design.md#11), each to follow "has scrypt";
 * empty when nothing is. Too cheap falls to offline guessing should the hash leak; too dear lets
 * every sign-in attempt take the process's memory, or a thread for seconds.
 */
export function costProblems(cost: ScryptCost): string[] {
  const problems: string[] = [];
  if (cost.logN < MIN_LOG_N || cost.r < MIN_R) {
    problems.push(
      `costs below the minimum (log2 N at least ${MIN_LOG_N} and r at least ${MIN_R}; this one has log2 N ${cost.logN}, r ${cost.r})`,
    );
  }
  const memory = costMemoryBytes(cost);
  if (memory > MAX_MEMORY_BYTES) {
    problems.push(
      `costs that take ${mebibytes(memory)} per check (128 × N × r; at most ${mebibytes(MAX_MEMORY_BYTES)})`,
    );
  }
  if (cost.p > MAX_P) problems.push(`parallelism p ${cost.p} (at most ${MAX_P})`);
  return problems;
}
