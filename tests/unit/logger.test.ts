import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, createServiceLogger, loggedError } from "../../service/logger.ts";
import { StorageFullError, StoreUnavailableError } from "../../service/storage/types.ts";

async function logOneLine(terminal: boolean): Promise<string> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on("data", (chunk: Buffer) => chunks.push(chunk));
  const logger = await createServiceLogger("info", { terminal, output });
  logger.info({ port: 4321 }, "The Nothing Store is open");
  logger.debug("below the level");
  // pino-pretty writes through its own stream: give it a turn to flush.
  await new Promise((resolve) => setImmediate(resolve));
  return Buffer.concat(chunks).toString("utf8");
}

describe("the service's logs", () => {
  it("are JSON lines when stdout is not a terminal (containers, CI, pipes)", async () => {
    const text = await logOneLine(false);
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      level: 30,
      service: "nothing-store",
      port: 4321,
      msg: "The Nothing Store is open",
    });
  });

  it("are readable lines for a person at a terminal", async () => {
    const text = await logOneLine(true);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: The Nothing Store is open\n {4}port: 4321\n$/);
    expect(text).not.toContain("{");
    expect(text).not.toContain("below the level");
  });
});

describe("an error in a log line", () => {
  it("is its one-line message when the database is out of reach (expected), whole with its stack otherwise", () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new PassThrough();
    sink.on("data", (chunk: Buffer) => lines.push(JSON.parse(String(chunk))));
    const logger = createLogger("info", sink);
    const outage = new StoreUnavailableError("PostgreSQL is unavailable (ECONNREFUSED: connect ECONNREFUSED)");
    expect(loggedError(outage)).toBe(
      "StoreUnavailableError: PostgreSQL is unavailable (ECONNREFUSED: connect ECONNREFUSED)",
    );
    expect(loggedError(new StorageFullError("no space left"))).toBe("StorageFullError: no space left");
    const bug = new TypeError("x is undefined");
    expect(loggedError(bug)).toBe(bug);
    logger.warn({ err: loggedError(outage) }, "expected");
    logger.error({ err: loggedError(bug) }, "unexpected");
    const [expected, unexpected] = lines;
    expect(JSON.stringify(expected)).not.toContain("stack");
    expect(unexpected?.err).toMatchObject({ type: "TypeError", stack: expect.stringContaining("TypeError") });
  });
});
