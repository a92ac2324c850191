import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/unit/**/*.test.{ts,tsx}", "tests/realtime/**/*.test.ts"],
    environment: "node",
  },
});
