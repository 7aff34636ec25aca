// One way to open the database: PostgreSQL through `pg`, or embedded PGlite (the zero-setup
// default). Both speak the same SQL and run the same migrations; the type parsers agree
// (timestamptz → Date, json → objects, text[] → arrays; counts are cast to int in queries).
import { PGlite } from "@electric-sql/pglite";
import { Kysely, Migrator, PostgresDialect, sql } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import { migrations } from "./migrations/index";
import type { Database } from "./schema";

export type Db = Kysely<Database>;

export type DbConfig =
  | {
      kind: "postgres";
      url: string;
      /** Connections in the pool (default 10). */
      poolSize?: number;
      /** The schema to work in (default: the server's search_path, normally `public`). */
      schema?: string;
      /** Called for errors of idle pooled connections, which have no request to fail. */
      onIdleError?: (error: Error) => void;
    }
  | {
      kind: "pglite";
      /** A directory for the data, or undefined for an in-memory database. */
      dataDir?: string;
    };

export async function createDb(config: DbConfig): Promise<Db> {
  if (config.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
    });
    pool.on("error", (error) => config.onIdleError?.(error));
    return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  }
  const pglite = await PGlite.create(config.dataDir);
  return new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely locks). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Resolves when the database answers. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Holds a transaction-scoped advisory lock: concurrent holders of the same key wait in turn. */
export async function lockForTransaction(trx: Db, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}
