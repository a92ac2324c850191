/** `npm run admin:hash` as an operator runs it: the password on standard input, the hash on standard output. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../../realtime/admin/password.ts";
import { readServiceConfig } from "../../realtime/config.ts";
import { parsePasswordHash } from "../../realtime/passwordHash.ts";

async function adminHash(input: string, args: string[] = []) {
  const child = spawn(process.execPath, ["scripts/admin-hash.ts", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(input);
  // "close", not "exit": the pipes may still hold output when the process exits.
  const [code] = await once(child, "close");
  return { code, stdout, stderr };
}

describe("npm run admin:hash", () => {
  it("prints a hash of the password piped in (one trailing line break is the pipe's) that verifies, at a cost the service takes", async () => {
    const { code, stdout, stderr } = await adminHash("correct horse battery\n");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/^scrypt:17:8:1:\S+\n$/);
    const settings = { ADMIN_PASSWORD_HASH: stdout, ADMIN_SESSION_SECRET: "s".repeat(32) };
    expect(readServiceConfig(settings).admin?.passwordHash).toEqual(parsePasswordHash(stdout));
    const stored = parsePasswordHash(stdout);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse battery\n", stored)).toBe(false);
  }, 30_000);

  it("takes no password from the command line, and refuses a short one", async () => {
    expect(await adminHash("", ["correct horse battery"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "admin:hash takes no arguments: it reads the password from standard input.\n",
    });
    expect(await adminHash("short")).toEqual({
      code: 2,
      stdout: "",
      stderr: "admin:hash: the password must have at least 12 characters\n",
    });
  }, 30_000);
});
