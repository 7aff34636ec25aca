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
    // Vitest's default: one file at a time on 2 cores (cores - 1). Two at a time measured faster on
    // 2 cores (clean clone, `pnpm test`, 2026-11-28: 1 worker 11 m 44 s, 2 workers 7 m 50 s, 3
    // workers 8 m 28 s), but with two, a platform start in `instance-races.test.ts` failed in 2 of
    // 4 clean-clone runs ("Plugin did not start in time: ''", cause not yet found) where one
    // worker has not failed it since 2026-11-28's fix; set FLOWPLANE_TEST_WORKERS=2 to try it.
    maxWorkers:
      Number(process.env.FLOWPLANE_TEST_WORKERS) || Math.max(1, availableParallelism() - 1),
    reporters: ["default"],
  },
});
