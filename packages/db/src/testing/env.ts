// Test configuration: TEST_DATABASE_URL selects PostgreSQL; without it tests use in-memory PGlite.
export const testDatabaseUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined;
