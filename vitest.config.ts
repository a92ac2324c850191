import { defineConfig } from "vitest/config";
import { CONTAINER_BUILD_MS, CONTAINER_TEST_MS, SERVICE_TEST_MS, UNIT_TEST_MS } from "./tests/harness/timeBudgets.ts";

// Three projects: `unit` is pure (no database, no processes, seconds), `service` runs against real
// PostgreSQL and PGlite, real sockets and real service processes, `container` builds the image with
// podman and runs it (as root; a few minutes). Their time budgets hold on a busy machine
// (tests/harness/timeBudgets.ts): a test sets its own only when it needs more.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.{ts,tsx}"],
          environment: "node",
          testTimeout: UNIT_TEST_MS,
          hookTimeout: UNIT_TEST_MS,
        },
      },
      {
        test: {
          name: "service",
          include: ["tests/service/**/*.test.ts"],
          environment: "node",
          testTimeout: SERVICE_TEST_MS,
          hookTimeout: SERVICE_TEST_MS,
          // One PostgreSQL cluster per run (or DATABASE_URL) and a temp root for PGlite directories.
          globalSetup: ["tests/service/harness/globalSetup.ts"],
        },
      },
      {
        test: {
          name: "container",
          include: ["tests/container/**/*.test.ts"],
          environment: "node",
          testTimeout: CONTAINER_TEST_MS,
          // beforeAll builds the image; afterAll removes it and podman's storage.
          hookTimeout: CONTAINER_BUILD_MS,
        },
      },
    ],
  },
});
