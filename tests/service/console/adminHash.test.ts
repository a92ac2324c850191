/** `npm run admin:hash` as an operator runs it: the password on standard input, the hash on standard output. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { readServiceConfig } from "../../../service/config.ts";
import { verifyPassword } from "../../../service/console/password.ts";
import { type PasswordHash, parsePasswordHash } from "../../../service/passwordHash.ts";

const SECRET = "s".repeat(32);

/** `command args` with `input` on standard input: its exit code and both outputs. */
async function run(command: string, args: string[], input: string, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env });
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

const adminHash = (input: string, args: string[] = []) =>
  run(process.execPath, ["scripts/admin-hash.ts", ...args], input);

/** A shell script as an operator's deploy script runs it, the password in $PASSWORD. */
const inShell = (script: string) =>
  run("sh", ["-c", script], "", { ...process.env, PASSWORD: "correct horse battery" });

describe("npm run admin:hash", () => {
  it("prints a hash of the password piped in (one trailing line break is the pipe's) that verifies, at a cost the service takes", async () => {
    const { code, stdout, stderr } = await adminHash("correct horse battery\n");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/^scrypt:17:8:1:\S+\n$/);
    const settings = { ADMIN_PASSWORD_HASH: stdout, ADMIN_SESSION_SECRET: SECRET };
    expect(readServiceConfig(settings).admin?.passwordHash).toEqual(parsePasswordHash(stdout));
    const stored = parsePasswordHash(stdout);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse battery\n", stored)).toBe(false);
  });

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
  });

  it("captured in a script as docs/deploying.md writes it (npm run -s), gives the hash alone, which verifies", async () => {
    // The documented line, with the password piped in as a script would.
    const { code, stdout, stderr } = await inShell(
      'ADMIN_PASSWORD_HASH="$(printf %s "$PASSWORD" | npm run -s admin:hash)" && printf %s "$ADMIN_PASSWORD_HASH"',
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/^scrypt:17:8:1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    const config = readServiceConfig({ ADMIN_PASSWORD_HASH: stdout, ADMIN_SESSION_SECRET: SECRET });
    expect(await verifyPassword("correct horse battery", config.admin?.passwordHash as PasswordHash)).toBe(true);
  });

  it("captured without -s, holds npm's banner too, and the service refuses it saying to add -s", async () => {
    const { code, stdout } = await inShell(
      'ADMIN_PASSWORD_HASH="$(printf %s "$PASSWORD" | npm run admin:hash)" && printf %s "$ADMIN_PASSWORD_HASH"',
    );
    expect(code).toBe(0);
    expect(stdout).toContain("> nothing-store@");
    expect(() => readServiceConfig({ ADMIN_PASSWORD_HASH: stdout, ADMIN_SESSION_SECRET: SECRET })).toThrow(
      "ADMIN_PASSWORD_HASH holds npm's banner lines besides the hash: capture it with npm run -s admin:hash",
    );
  });
});
