import { defineConfig, devices } from "@playwright/test";

const PORT = Number(process.env.E2E_PORT ?? 4329);
const baseURL = `http://127.0.0.1:${PORT}`;

// Debian's Chromium: Playwright cannot download its own browser here. The flags keep it from
// reaching for Google's services, which this machine's closed network refuses.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export default defineConfig({
  testDir: "tests/e2e",
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  workers: 2,
  retries: 0,
  reporter: process.env.CI ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], channel: undefined } }],
  webServer: {
    // The same entry point as `npm start`, on the site that `npm run build` left in dist/.
    command: "node realtime/main.ts",
    url: baseURL,
    env: { PORT: String(PORT), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    reuseExistingServer: !process.env.CI,
    stdout: "pipe",
    timeout: 30_000,
  },
});
