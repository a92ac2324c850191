import { defineConfig } from "vitest/config";

// Three projects: `unit` is pure (no database, no processes, seconds), `service` runs against real
// PostgreSQL and PGlite, real sockets and real service processes, `container` builds the image with
// podman and runs it (as root; a few minutes).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.{ts,tsx}"],
          environment: "node",
        },
      },
      {
        test: {
          name: "service",
          include: ["tests/realtime/**/*.test.ts"],
          environment: "node",
          // One PostgreSQL cluster per run (or DATABASE_URL) and a temp root for PGlite directories.
          globalSetup: ["tests/realtime/support/globalSetup.ts"],
        },
      },
      {
        test: {
          name: "container",
          include: ["tests/container/**/*.test.ts"],
          environment: "node",
        },
      },
    ],
  },
});
