import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./scripts/chromium.ts";
import { LIFTED_LIMITS_ENV } from "./scripts/harness/liftedLimits.ts";
import { E2E_EXPECT_MS, E2E_SERVER_START_MS, E2E_TEST_MS } from "./tests/harness/timeBudgets.ts";

const PORT = Number(process.env.E2E_PORT ?? 4329);
const baseURL = `http://127.0.0.1:${PORT}`;
// The auction starts empty on every run: a PGlite directory of its own, wiped before the server starts.
// Named for the user too: another user's run left its own, which this one may not remove.
const DATA_DIR = join(tmpdir(), `nothing-store-e2e-${process.getuid?.() ?? "user"}-${PORT}`);

export default defineConfig({
  testDir: "tests/e2e",
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  workers: 2,
  retries: 0,
  // Budgets that hold on a busy two-core machine (tests/harness/timeBudgets.ts).
  timeout: E2E_TEST_MS,
  expect: { timeout: E2E_EXPECT_MS },
  reporter: process.env.CI ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    },
  },
  // The bidding specs share the server's one auction and read the highest bid before bidding (the
  // console's too: it bids, then hides its bid): the auction project's files run one after the
  // other (one worker), and the CSP walk-through waits for them instead of bidding in the middle of one.
  projects: [
    { name: "chromium", use: devices["Desktop Chrome"], testIgnore: /(auction(-clock|-maximum)?|admin|csp)\.spec\.ts/ },
    {
      name: "auction",
      use: devices["Desktop Chrome"],
      testMatch: /(auction(-clock|-maximum)?|admin)\.spec\.ts/,
      workers: 1,
    },
    { name: "csp", use: devices["Desktop Chrome"], testMatch: /csp\.spec\.ts/, dependencies: ["auction"] },
  ],
  webServer: {
    // The same entry point as `npm start`, on the site that `npm run build` left in dist/.
    command: `rm -rf "${DATA_DIR}" && node service/main.ts`,
    url: baseURL,
    env: {
      PORT: String(PORT),
      HOST: "127.0.0.1",
      // /metrics has a listener of its own (docs/design.md#9): a free port, so a service running
      // beside the suite (on the default 9464) and the specs' own services never collide with it.
      METRICS_PORT: "0",
      LOG_LEVEL: "warn",
      DATA_DIR,
      // Every browser of the suite bids and connects from 127.0.0.1.
      ...LIFTED_LIMITS_ENV,
      // The operator console, for tests/e2e/admin.spec.ts: the hash of ADMIN_E2E_PASSWORD there, as
      // npm run admin:hash printed it (a test password, nothing else). The service refuses any
      // cheaper cost at start, so the suite signs in at the production cost, a quarter second each.
      ADMIN_PASSWORD_HASH: "scrypt:17:8:1:/h8aILUxtJlc9Fh5jmfejw==:zNoA3tcLWd3LWnWrPCAL8AOGBVMGbwizObqyqeuQWZM=",
      ADMIN_SESSION_SECRET: "the e2e suite's session secret, 32 bytes or more",
    },
    reuseExistingServer: !process.env.CI,
    // SIGTERM lets the service close its sockets and release the data directory's lock.
    gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
    stdout: "pipe",
    timeout: E2E_SERVER_START_MS,
  },
});
