import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/unit/**/*.test.{ts,tsx}", "tests/realtime/**/*.test.ts"],
    environment: "node",
    // One PostgreSQL cluster per run (or DATABASE_URL) and a temp root for PGlite directories.
    globalSetup: ["tests/realtime/support/globalSetup.ts"],
  },
});
