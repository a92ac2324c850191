import { describe, expect, it } from "vitest";
import { hashPassword, parsePasswordHash, verifyPassword } from "../../realtime/admin/password.ts";
import { readServiceConfig } from "../../realtime/config.ts";

// The production cost is 2^17 (about 0.1 s a hash); the tests use the smallest the parser accepts.
const CHEAP = { logN: 14, r: 8, p: 1 };
const SECRET = "s".repeat(32);

describe("the operator's password hash", () => {
  it("verifies the password it was made from and no other, and salts every hash", async () => {
    const first = await hashPassword("correct horse battery", CHEAP);
    const second = await hashPassword("correct horse battery", CHEAP);
    expect(first).toMatch(/^scrypt:14:8:1:[A-Za-z0-9+/]{22}==:[A-Za-z0-9+/]{43}=$/);
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
    expect(() => parsePasswordHash(good.replace("scrypt:14", "scrypt:4"))).toThrow("costs out of range");
    expect(() => parsePasswordHash(good.replace(":AAAAAAAAAAAAAAAAAAAAAA==:", ":AA==:"))).toThrow("salt under 16");
    expect(() => parsePasswordHash(good.replace("AAAA=", "AA*A="))).toThrow("not base64");
  });
});

describe("the console's settings", () => {
  it("leave the console off when ADMIN_PASSWORD_HASH is unset or blank", () => {
    expect(readServiceConfig({}).admin).toBeNull();
    expect(readServiceConfig({ ADMIN_PASSWORD_HASH: "  ", ADMIN_SESSION_SECRET: "x" }).admin).toBeNull();
  });

  it("turn it on with a hash and a session secret of at least 32 bytes", async () => {
    const hash = await hashPassword("correct horse battery", CHEAP);
    const config = readServiceConfig({ ADMIN_PASSWORD_HASH: hash, ADMIN_SESSION_SECRET: SECRET });
    expect(config.admin?.sessionSecret).toBe(SECRET);
    expect(await verifyPassword("correct horse battery", config.admin?.passwordHash as never)).toBe(true);
  });

  it("refuse a malformed hash or a short secret, naming the variable and not the value", async () => {
    expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: "hunter2", ADMIN_SESSION_SECRET: SECRET })).toThrow(
      /^ADMIN_PASSWORD_HASH must be a hash printed by npm run admin:hash/,
    );
    const hash = await hashPassword("correct horse battery", CHEAP);
    for (const secret of [undefined, "s".repeat(31)]) {
      expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: hash, ADMIN_SESSION_SECRET: secret })).toThrow(
        /^ADMIN_SESSION_SECRET must be at least 32 bytes when ADMIN_PASSWORD_HASH is set/,
      );
    }
    expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: "hunter2" })).not.toThrow(/hunter2/);
  });
});
