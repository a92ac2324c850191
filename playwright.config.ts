import { defineConfig, devices } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./scripts/chromium.ts";

const PORT = Number(process.env.E2E_PORT ?? 4329);
const baseURL = `http://127.0.0.1:${PORT}`;

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
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    },
  },
  projects: [{ name: "chromium", use: devices["Desktop Chrome"] }],
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
