/** The operator's device cookie: signed with a key bound to the secret and the password's hash. */
import { describe, expect, it } from "vitest";
import { deviceKey, deviceToken, newDeviceId, readDevice } from "../../service/console/device.ts";
import { hashPassword } from "../../service/console/password.ts";
import { parsePasswordHash } from "../../service/passwordHash.ts";

const SECRET = "a session secret of at least thirty-two bytes";
const CHEAP = { logN: 10, r: 8, p: 1 };
const HASH = parsePasswordHash(await hashPassword("correct horse battery", CHEAP));

describe("the device cookie", () => {
  it("reads back the id deviceToken wrote, with the same secret and password hash only", async () => {
    const key = deviceKey(SECRET, HASH);
    const id = newDeviceId();
    const token = deviceToken(key, id);
    expect(token).toMatch(/^[\w-]{22}\.[\w-]{43}$/);
    expect(readDevice(key, token)).toBe(id);
    expect(readDevice(deviceKey(SECRET, HASH), token)).toBe(id);
    expect(readDevice(deviceKey("another secret of at least thirty-two bytes", HASH), token)).toBeNull();
    // The same password hashed anew: another salt, another hash, no device trusted.
    const rehashed = parsePasswordHash(await hashPassword("correct horse battery", CHEAP));
    expect(readDevice(deviceKey(SECRET, rehashed), token)).toBeNull();
  });

  it("refuses a tampered, re-spelled or malformed token", () => {
    const key = deviceKey(SECRET, HASH);
    const id = newDeviceId();
    const token = deviceToken(key, id);
    const [, signature] = token.split(".") as [string, string];
    for (const forged of [
      `${newDeviceId()}.${signature}`,
      `${id}.${signature}=`,
      `${id}.${signature.slice(0, -1)}`,
      `${id}.${signature}.x`,
      `${id}x.${signature}`,
      id,
      "",
      undefined,
    ]) {
      expect(readDevice(key, forged), String(forged)).toBeNull();
    }
  });

  it("is signed apart from the sessions: the key is never the session secret itself", () => {
    expect(deviceKey(SECRET, HASH).equals(Buffer.from(SECRET))).toBe(false);
    expect(deviceKey(SECRET, HASH)).toHaveLength(32);
  });
});
