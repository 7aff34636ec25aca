// Test configuration: which database the tests' schemas live in.
// - TEST_DATABASE_URL: a PostgreSQL server of yours (.ci/run's second pass), a schema per file.
// - TEST_DATABASE=embedded-postgres: the platform's own embedded PostgreSQL, one server per test
//   run started by the run's global setup (global-setup.ts), a schema per file.
// - Otherwise: in-memory PGlite, one per file (in-process, proven under load; `pnpm start`'s own
//   default is the embedded PostgreSQL, which the passes above and main.test.ts cover).
/** A PostgreSQL server of the operator's. */
export const testDatabaseUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined;
/** The run's embedded PostgreSQL server (set by global-setup.ts for the test processes). */
export const embeddedTestDatabaseUrl: string | undefined =
  process.env.FLOWPLANE_EMBEDDED_TEST_DATABASE_URL || undefined;
/** Whether the run asks for the embedded PostgreSQL server. */
export const testOnEmbeddedPostgres = process.env.TEST_DATABASE === "embedded-postgres";
/** The PostgreSQL server test files make their schemas in, if the run has one. */
export const testServerUrl: string | undefined =
  testDatabaseUrl ?? (testOnEmbeddedPostgres ? embeddedTestDatabaseUrl : undefined);

/** In CI (.ci/run), where tests that need bubblewrap must run rather than skip. */
export const testInCI = process.env.CI === "true";

/** The search path the run's embedded server gets. */
export const testPath: string | undefined = process.env.PATH;

/** Hands the run's embedded server to the test processes (forked after the global setup). */
export function shareEmbeddedTestDatabaseUrl(url: string): void {
  process.env.FLOWPLANE_EMBEDDED_TEST_DATABASE_URL = url;
}
