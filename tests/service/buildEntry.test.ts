/**
 * `npm run build` itself stops on a bad PUBLIC_* setting before Astro builds anything: exit 2 and
 * one line naming the variable, the value and what is expected (src/lib/buildSettings.ts, run by
 * astro.config.mjs when it loads; docs/settings.md "Building the pages"). The config is all that runs, so
 * each case takes a second or two, not a build's minutes.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "nothing-build-entry-"));
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** Runs `npm run build` with `settings` over a clean PUBLIC_* environment; never throws. */
function build(settings: Record<string, string>): Promise<{ code: number | null; stderr: string; outDir: string }> {
  const outDir = join(workDir, `site-${Object.keys(settings).join("-")}`);
  const env: NodeJS.ProcessEnv = { ...process.env, ASTRO_OUT_DIR: outDir, ...settings };
  for (const key of Object.keys(env)) if (key.startsWith("PUBLIC_") && !(key in settings)) delete env[key];
  return new Promise((resolve) => {
    execFile("npm", ["run", "build"], { env, timeout: 60_000 }, (error, _stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, stderr, outDir });
    });
  });
}

describe("npm run build with a bad setting", () => {
  it.each([
    [
      "PUBLIC_REALTIME_URL",
      "wss://api.example/",
      'PUBLIC_REALTIME_URL must end in /realtime, e.g. wss://api.example/realtime, got "wss://api.example/"',
    ],
    [
      "PUBLIC_REALTIME_URL",
      "https://api.example/realtime",
      'PUBLIC_REALTIME_URL must use ws:// or wss://, e.g. wss://api.example/realtime, got "https://api.example/realtime"',
    ],
    [
      "PUBLIC_SITE_URL",
      "https://nothing example",
      'PUBLIC_SITE_URL must be an absolute URL, got "https://nothing example"',
    ],
    [
      "PUBLIC_CHART_URL",
      "dexscreener.com/solana/zn",
      'PUBLIC_CHART_URL must be an absolute URL, got "dexscreener.com/solana/zn"',
    ],
  ])(
    "%s=%s stops with exit 2, naming it, before anything is built",
    async (key, value, message) => {
      const { code, stderr, outDir } = await build({ [key]: value });
      expect(stderr).toContain(`[nothing-store] ${message}\n`);
      expect(stderr).not.toMatch(/Invalid URL|Stack trace/);
      expect(code).toBe(2);
      expect(existsSync(outDir)).toBe(false);
    },
    60_000,
  );
});
