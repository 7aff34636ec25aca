// Shared Vitest settings. Tests start real databases (PGlite in-process, or PostgreSQL when
// TEST_DATABASE_URL is set) and real servers, so hooks get generous time on a busy 2-core machine.
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one file at a time on 2 cores (cores - 1), but much of a file's time is
    // spent waiting on processes it started (platforms, Node-RED, the device agent, Chromium).
    // Measured on 2 cores (clean clone, `pnpm test`, 2026-11-28): 1 worker 11 m 44 s, 2 workers
    // 7 m 50 s, 3 workers 8 m 28 s (both cores saturated).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ["default"],
  },
});
