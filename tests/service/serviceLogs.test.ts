/**
 * `npm run serve` as a person and as a machine see it: readable lines in a terminal (a real
 * pseudo-terminal through util-linux `script`), JSON lines through a pipe, and a bad LOG_LEVEL
 * refused like every other setting.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it, onTestFinished } from "vitest";
import { stopChild } from "../../scripts/harness/childProcess.ts";
import { serviceProcessEnv } from "./harness/serviceProcess.ts";
import { dataDirForThisTest } from "./harness/stores.ts";

/** What the open line says without pages (service/startLine.ts), whichever way it is printed. */
const OPEN_LINE = "The Nothing Store's auction service is open at";

async function serviceEnv(extra: Record<string, string> = {}) {
  const data = await dataDirForThisTest();
  return serviceProcessEnv({ dataDir: data.dir, env: extra });
}

/** Starts the service with `stdio` and collects stdout lines until the open line, then stops it. */
async function linesUntilOpen(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string[]> {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  onTestFinished(() => stopChild(child));
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line);
    if (line.includes(OPEN_LINE)) break;
  }
  return lines;
}

describe("the service's log output", () => {
  it("prints JSON lines when stdout is a pipe", async () => {
    const lines = await linesUntilOpen(process.execPath, ["service/main.ts"], await serviceEnv());
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({
      level: 30,
      service: "nothing-store",
      backend: "pglite",
    });
  });

  it("prints readable lines when stdout is a terminal", async () => {
    // `script` gives the service a pseudo-terminal as stdout and copies what it prints to ours.
    const command = `exec "${process.execPath}" service/main.ts`;
    const lines = await linesUntilOpen("script", ["-qfec", command, "/dev/null"], await serviceEnv());
    const text = lines.join("\n");
    expect(text).toMatch(
      /\[\d\d:\d\d:\d\d\] .*INFO.*: .*The Nothing Store's auction service is open at http:\/\/localhost:\d+/,
    );
    expect(text).not.toContain('"level"');
  });

  it("refuses an unknown LOG_LEVEL with exit code 2 and a message naming it", async () => {
    const child = spawn(process.execPath, ["service/main.ts"], {
      env: await serviceEnv({ LOG_LEVEL: "loud" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, "close"); // once its output is all read
    expect(code).toBe(2);
    expect(stderr).toContain(
      'Configuration error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
  });
});
