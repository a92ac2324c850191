/**
 * The Dockerfile's build arguments are every PUBLIC_* setting the build reads, no fewer (an
 * operator's --build-arg would be dropped with a warning and the page keep its placeholder) and no
 * more. What the build reads is taken from the parsers themselves, by watching which keys they look
 * up, so a new setting fails this test until the Dockerfile declares it. That the arguments reach
 * the built pages is tests/container/image.test.ts's part.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSiteConfig, parseSiteUrl } from "../../src/lib/siteConfig.ts";

const REPO = resolve(import.meta.dirname, "../..");

/** The keys `parse` reads from the environment it is given (all unset). */
function keysRead(parse: (env: Record<string, string | undefined>) => unknown): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_target, key) {
      if (typeof key === "string") read.add(key);
      return undefined;
    },
  });
  parse(env);
  return [...read];
}

/** The ARG names of the stage named `stage` (from its FROM line to the next). */
function stageArgs(dockerfile: string, stage: string): string[] {
  const lines = dockerfile.split("\n").map((line) => line.trim());
  const start = lines.findIndex((line) => new RegExp(`^FROM \\S+ AS ${stage}$`, "i").test(line));
  expect(start, `a stage named ${stage}`).toBeGreaterThan(-1);
  const end = lines.findIndex((line, index) => index > start && line.startsWith("FROM "));
  return lines
    .slice(start + 1, end === -1 ? undefined : end)
    .filter((line) => line.startsWith("ARG "))
    .map((line) => (line.slice(4).split("=")[0] as string).trim());
}

describe("Dockerfile build arguments", () => {
  it("declares exactly the PUBLIC_* settings the build reads, in the stage that builds", () => {
    const read = [...keysRead(parseSiteConfig), ...keysRead(parseSiteUrl)].filter((key) => key.startsWith("PUBLIC_"));
    // The parsers' own count, so a parser that stopped reading would not pass as an empty list.
    expect(read).toContain("PUBLIC_SITE_URL");
    expect(read).toContain("PUBLIC_REALTIME_URL");
    expect(read.length).toBeGreaterThanOrEqual(17);
    const declared = stageArgs(readFileSync(join(REPO, "Dockerfile"), "utf8"), "build");
    expect([...declared].sort()).toEqual([...new Set(read)].sort());
  });
});
