/**
 * The operator's session cookie: one spelling per session, the one sessionToken writes, signed with
 * a key bound to the secret and the password's hash.
 */
import { describe, expect, it } from "vitest";
import { deviceKey } from "../../service/console/device.ts";
import { hashPassword } from "../../service/console/password.ts";
import { newSessionId, readSession, SESSION_MS, sessionKey, sessionToken } from "../../service/console/session.ts";
import { parsePasswordHash } from "../../service/passwordHash.ts";

const CHEAP = { logN: 10, r: 8, p: 1 };
const HASH = parsePasswordHash(await hashPassword("correct horse battery", CHEAP));
const SECRET_TEXT = "a session secret of at least thirty-two bytes";
const SECRET = sessionKey(SECRET_TEXT, HASH);
const NOW = 1_800_000_000_000;

/** A token whose signature holds a "-" or "_" (about 3 in 4 do), from a bounded run of sessions. */
function tokenWithUrlSafeCharacters(): string {
  for (let i = 0; i < 100; i++) {
    const token = sessionToken(SECRET, { id: newSessionId(), expiresAtMs: NOW + SESSION_MS + i });
    if (/[-_]/.test(token.split(".")[2] as string)) return token;
  }
  throw new Error("no signature with - or _ in 100 sessions");
}

describe("the session cookie", () => {
  it("reads back what sessionToken wrote, until it expires", () => {
    const session = { id: newSessionId(), expiresAtMs: NOW + SESSION_MS };
    const token = sessionToken(SECRET, session);
    expect(token).toMatch(/^[\w-]{16}\.\d+\.[\w-]{43}$/);
    expect(readSession(SECRET, token, NOW)).toEqual(session);
    expect(readSession(SECRET, token, NOW + SESSION_MS - 1)).toEqual(session);
    expect(readSession(SECRET, token, NOW + SESSION_MS)).toBeNull();
    expect(readSession(sessionKey("another secret of at least thirty-two bytes", HASH), token, NOW)).toBeNull();
  });

  it("is refused once the password is hashed anew, and signed apart from the devices", async () => {
    const token = sessionToken(SECRET, { id: newSessionId(), expiresAtMs: NOW + SESSION_MS });
    expect(readSession(sessionKey(SECRET_TEXT, HASH), token, NOW)).not.toBeNull();
    // The same password hashed anew: another salt, another hash, no session kept.
    const rehashed = parsePasswordHash(await hashPassword("correct horse battery", CHEAP));
    expect(readSession(sessionKey(SECRET_TEXT, rehashed), token, NOW)).toBeNull();
    expect(SECRET.equals(deviceKey(SECRET_TEXT, HASH))).toBe(false);
    expect(SECRET.equals(Buffer.from(SECRET_TEXT))).toBe(false);
  });

  it("refuses every other spelling of the same signature: padding, stray characters, +/ for -_, other trailing bits", () => {
    const token = tokenWithUrlSafeCharacters();
    expect(readSession(SECRET, token, NOW)).not.toBeNull();
    const [id, expires, signature] = token.split(".") as [string, string, string];
    const signed = (spelling: string) => `${id}.${expires}.${spelling}`;
    // 32 bytes in 43 characters leave the last character's two low bits unused: flipping one
    // decodes to the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const otherBits = alphabet[alphabet.indexOf(signature.at(-1) as string) ^ 1] as string;
    const spellings = {
      padded: signed(`${signature}=`),
      "padded twice": signed(`${signature}==`),
      "stray characters": signed(`${signature}!!`),
      "a stray character inside": signed(`${signature.slice(0, 20)}!${signature.slice(20)}`),
      "standard alphabet": signed(signature.replaceAll("-", "+").replaceAll("_", "/")),
      "other trailing bits": signed(`${signature.slice(0, -1)}${otherBits}`),
    };
    for (const [name, spelling] of Object.entries(spellings)) {
      expect(spelling, name).not.toBe(token);
      // Each is the right signature to a lenient decoder: only the spelling is wrong.
      expect(Buffer.from(spelling.split(".")[2] as string, "base64url"), name).toEqual(
        Buffer.from(signature, "base64url"),
      );
      expect(readSession(SECRET, spelling, NOW), name).toBeNull();
    }
    expect(readSession(SECRET, signed(signature.slice(0, -1)), NOW)).toBeNull();
  });
});
