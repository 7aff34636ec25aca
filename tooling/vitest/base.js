// Shared Vitest settings. Tests start real databases (PGlite in-process, or PostgreSQL when
// TEST_DATABASE_URL is set) and real servers, so hooks get generous time on a busy 2-core machine.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default"],
  },
});
