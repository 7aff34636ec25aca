// Shared Vitest settings. Tests start real databases (PGlite in-process, or PostgreSQL when
// TEST_DATABASE_URL is set) and real servers, so tests and hooks get generous time on a busy
// 2-core machine: the bounds are against a hang, never a guess at a speed. A test that took 15-23 s
// at load 19 (two suites side by side) had 30 s; CI's machine is sometimes that busy.
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // At least two files at a time: the longest files mostly wait on processes they start
    // (platforms, Node-RED, the device agent). Measured on 2 cores (clean clone, `pnpm test`,
    // 2026-11-28): 1 worker 11 m 44 s, 2 workers 7 m 50 s, 3 workers 8 m 28 s; a loaded whole
    // `.ci/run` took 23 min with two and 65 with one. The failure two once showed ("Plugin did not
    // start in time: ''") was Fastify's 10 s bound on a close that stops Node-RED, which a loaded
    // machine overran; that bound is gone (app.ts, pluginTimeout). FLOWPLANE_TEST_WORKERS sets another number.
    maxWorkers:
      Number(process.env.FLOWPLANE_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    reporters: ["default"],
  },
});
