import { randomBytes, scrypt } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readServiceConfig } from "../../service/config.ts";
import { hashPassword, verifyPassword } from "../../service/console/password.ts";
import {
  costProblems,
  DEFAULT_COST,
  formatPasswordHash,
  parsePasswordHash,
  type ScryptCost,
  scryptMemoryBytes,
} from "../../service/passwordHash.ts";

// The production cost is 2^17 (a quarter second a hash here); tests that only need a hash that
// verifies use a cheap one, passed in code: the environment's check would refuse it.
const CHEAP = { logN: 10, r: 8, p: 1 };
const SECRET = "s".repeat(32);

/** A well-formed hash at `cost` that no password matches: what the settings read, without hashing. */
const hashAt = (cost: ScryptCost) => formatPasswordHash({ ...cost, salt: randomBytes(16), key: randomBytes(32) });

describe("the operator's password hash", () => {
  it("verifies the password it was made from and no other, and salts every hash", async () => {
    const first = await hashPassword("correct horse battery", CHEAP);
    const second = await hashPassword("correct horse battery", CHEAP);
    expect(first).toMatch(/^scrypt:10:8:1:[A-Za-z0-9+/]{22}==:[A-Za-z0-9+/]{43}=$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword("correct horse battery", parsePasswordHash(first))).toBe(true);
    expect(await verifyPassword("correct horse batterY", parsePasswordHash(first))).toBe(false);
    expect(await verifyPassword("", parsePasswordHash(first))).toBe(false);
  });

  it("treats the same password in another Unicode normalisation as the same", async () => {
    const stored = parsePasswordHash(await hashPassword("Zoe\u0308 nothing 2026", CHEAP));
    expect(await verifyPassword("Zo\u00eb nothing 2026", stored)).toBe(true);
  });

  it("refuses a malformed hash with what is wrong, never echoing it", () => {
    const good = "scrypt:14:8:1:AAAAAAAAAAAAAAAAAAAAAA==:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    expect(() => parsePasswordHash(good)).not.toThrow();
    expect(() => parsePasswordHash("hunter2")).toThrow("must be a hash printed by npm run admin:hash");
    for (const costs of ["scrypt:0:8:1", "scrypt:x:8:1", "scrypt:14:0:1", "scrypt:14:8:-1", "scrypt:63:8:1"]) {
      expect(() => parsePasswordHash(good.replace("scrypt:14:8:1", costs)), costs).toThrow(
        "has scrypt costs that are not numbers",
      );
    }
    expect(() => parsePasswordHash(good.replace(":AAAAAAAAAAAAAAAAAAAAAA==:", ":AA==:"))).toThrow("salt under 16");
    expect(() => parsePasswordHash(good.replace("AAAA=", "AA*A="))).toThrow("not base64");
  });

  it("passes scrypt exactly the memory it needs: a byte less is refused", async () => {
    const cost = { logN: 10, r: 8, p: 3 };
    const derive = (maxmem: number) =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt("x", "salt", 32, { N: 2 ** cost.logN, r: cost.r, p: cost.p, maxmem }, (error, key) =>
          error ? reject(error) : resolve(key),
        ),
      );
    await expect(derive(scryptMemoryBytes(cost))).resolves.toHaveLength(32);
    await expect(derive(scryptMemoryBytes(cost) - 1)).rejects.toThrow(/memory limit exceeded/i);
  });
});

describe("the cost ADMIN_PASSWORD_HASH must have (docs/design.md#11)", () => {
  it("is met by what npm run admin:hash makes, and by costs up to 256 MiB a check", () => {
    expect(costProblems(DEFAULT_COST)).toEqual([]);
    expect(costProblems({ logN: 18, r: 8, p: 1 })).toEqual([]);
    expect(costProblems({ logN: 17, r: 16, p: 4 })).toEqual([]);
  });

  it("refuses a cost below OWASP's, one that takes too much memory a check, and too many passes, saying which", () => {
    expect(costProblems({ logN: 14, r: 1, p: 1 })).toEqual([
      "costs below the minimum (log2 N at least 17 and r at least 8; this one has log2 N 14, r 1)",
    ]);
    expect(costProblems({ logN: 16, r: 8, p: 1 })).toHaveLength(1);
    expect(costProblems({ logN: 17, r: 7, p: 1 })).toHaveLength(1);
    expect(costProblems({ logN: 18, r: 9, p: 1 })).toEqual([
      "costs that take 288 MiB per check (128 × N × r; at most 256 MiB)",
    ]);
    expect(costProblems({ logN: 22, r: 32, p: 16 })).toEqual([
      "costs that take 16 GiB per check (128 × N × r; at most 256 MiB)",
      "parallelism p 16 (at most 4)",
    ]);
    expect(costProblems({ logN: 17, r: 8, p: 5 })).toEqual(["parallelism p 5 (at most 4)"]);
  });
});

describe("the console's settings", () => {
  it("leave the console off when ADMIN_PASSWORD_HASH is unset or blank", () => {
    expect(readServiceConfig({}).admin).toBeNull();
    expect(readServiceConfig({ ADMIN_PASSWORD_HASH: "  ", ADMIN_SESSION_SECRET: "x" }).admin).toBeNull();
  });

  it("turn it on with a hash as npm run admin:hash makes it and a session secret of at least 32 bytes", async () => {
    const hash = await hashPassword("correct horse battery");
    const config = readServiceConfig({ ADMIN_PASSWORD_HASH: hash, ADMIN_SESSION_SECRET: SECRET });
    expect(config.admin?.sessionSecret).toBe(SECRET);
    expect(await verifyPassword("correct horse battery", config.admin?.passwordHash as never)).toBe(true);
  });

  it("refuse a malformed hash or a short secret, naming the variable and not the value", () => {
    expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: "hunter2", ADMIN_SESSION_SECRET: SECRET })).toThrow(
      /^ADMIN_PASSWORD_HASH must be a hash printed by npm run admin:hash/,
    );
    const hash = hashAt(DEFAULT_COST);
    for (const secret of [undefined, "s".repeat(31)]) {
      expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: hash, ADMIN_SESSION_SECRET: secret })).toThrow(
        /^ADMIN_SESSION_SECRET must be at least 32 bytes when ADMIN_PASSWORD_HASH is set/,
      );
    }
    expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: "hunter2" })).not.toThrow(/hunter2/);
  });

  it("refuse a hash whose cost is too low or too high, naming the variable and what is wrong", () => {
    const settings = (cost: ScryptCost) => () =>
      readServiceConfig({ ADMIN_PASSWORD_HASH: hashAt(cost), ADMIN_SESSION_SECRET: SECRET });
    expect(settings({ logN: 14, r: 1, p: 1 })).toThrow(
      "ADMIN_PASSWORD_HASH has scrypt costs below the minimum (log2 N at least 17 and r at least 8; this one has log2 N 14, r 1): make a new one with npm run admin:hash",
    );
    expect(settings({ logN: 22, r: 32, p: 16 })).toThrow(
      "ADMIN_PASSWORD_HASH has scrypt costs that take 16 GiB per check (128 × N × r; at most 256 MiB), and parallelism p 16 (at most 4): make a new one with npm run admin:hash",
    );
    expect(settings(DEFAULT_COST)).not.toThrow();
  });
});
