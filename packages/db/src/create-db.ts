// One way to open the database: PostgreSQL through `pg` — a server of the operator's, or one the
// platform starts for itself (embedded-postgres.ts) — or PGlite in-process. All speak the same SQL
// and run the same migrations; the type parsers agree (timestamptz → Date, json → objects,
// text[] → arrays; counts are cast to int in queries).
import { PGlite } from "@electric-sql/pglite";
import { createHash } from "node:crypto";
import { Kysely, Migrator, PostgresDialect, type PostgresPool, sql } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import { closeFeeds, registerFeedTarget } from "./access-changes";
import { type EmbeddedPostgresOptions, startEmbeddedPostgres } from "./embedded-postgres";
import { ownSchemaIntrospection } from "./introspection";
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
      kind: "embedded-postgres";
      /** The cluster's directory (DATA_DIR/postgres). */
      dir: string;
      /** Connections in the pool (default 10); the server accepts a few more. */
      poolSize?: number;
      onIdleError?: (error: Error) => void;
      log?: EmbeddedPostgresOptions["log"];
      env?: EmbeddedPostgresOptions["env"];
    }
  | {
      kind: "pglite";
      /** A directory for the data, or undefined for an in-memory database. */
      dataDir?: string;
      /** Starts from this saved data directory (PGlite's dump) instead of an empty database. */
      loadDataDir?: Blob;
    };

/** Each PostgreSQL database's pool, for its figures (metrics); PGlite has none. */
const pools = new WeakMap<Db, pg.Pool>();

/** The pool's connections now: open, idle, and requests waiting for one; undefined on PGlite. */
export function poolStats(db: Db): { total: number; idle: number; waiting: number } | undefined {
  const pool = pools.get(db);
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

export async function createDb(config: DbConfig): Promise<Db> {
  if (config.kind === "postgres") {
    const options = config.schema ? `-c search_path=${config.schema}` : undefined;
    const pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      ...(options ? { options } : {}),
    });
    pool.on("error", (error) => config.onIdleError?.(error));
    return postgresDb(pool, { connectionString: config.url, options });
  }
  if (config.kind === "embedded-postgres") {
    const poolSize = config.poolSize ?? 10;
    const server = await startEmbeddedPostgres({
      dir: config.dir,
      // The pool, and a few for migrations', tools' and access feeds' own connections.
      maxConnections: poolSize + 6,
      log: config.log,
      env: config.env,
    });
    const pool = new pg.Pool({ connectionString: server.url, max: poolSize });
    pool.on("error", (error) => config.onIdleError?.(error));
    // Destroying the Kysely instance stops the server once the connections are closed.
    return postgresDb(pool, { connectionString: server.url }, () => server.stop());
  }
  const pglite = await PGlite.create({ dataDir: config.dataDir, loadDataDir: config.loadDataDir });
  return new Kysely<Database>({ dialect: ownSchemaIntrospection(new PGliteDialect(pglite)) });
}

/**
 * A database over a PostgreSQL pool, whose access feeds (access-changes.ts) connect to `target`.
 * Destroying it closes the feeds, then the pool, then runs `after` (whatever else happens).
 */
function postgresDb(
  pool: pg.Pool,
  target: { connectionString: string; options?: string },
  after?: () => Promise<void>,
): Db {
  const preparedPool = preparing(pool);
  const db = new Kysely<Database>({
    dialect: ownSchemaIntrospection(new PostgresDialect({ pool: preparedPool })),
  });
  const feeds = registerFeedTarget(db, target);
  pools.set(db, pool);
  const end = preparedPool.end;
  preparedPool.end = async () => {
    try {
      await closeFeeds(feeds);
      await end();
    } finally {
      await after?.();
    }
  };
  return db;
}

/** Statements with more parameters vary in shape (value lists) and are not worth keeping. */
const MAX_PREPARED_PARAMETERS = 16;
const statementNames = new Map<string, string>();

/**
 * Names each parameterized statement after its text, so that PostgreSQL parses and plans it once
 * per connection instead of on every request (node-postgres keeps named statements per client).
 */
function preparing(pool: pg.Pool): PostgresPool {
  const nameOf = (text: string) => {
    let name = statementNames.get(text);
    if (!name) {
      name = `fp_${createHash("sha1").update(text).digest("base64url")}`;
      if (statementNames.size < 10_000) statementNames.set(text, name);
    }
    return name;
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      return {
        query: ((text: unknown, values?: readonly unknown[]) =>
          typeof text === "string" &&
          values &&
          values.length > 0 &&
          values.length <= MAX_PREPARED_PARAMETERS
            ? client.query({ name: nameOf(text), text, values: [...values] })
            : client.query(text as string, values ? [...values] : undefined)) as never,
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}

/** Brings the schema up to date. Safe to run from several processes at once (Kysely locks). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely looks for its migration tables by name in every schema unless told which one; another
  // schema's tables (another app, or a parallel test) would make it skip creating ours.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: rows[0]!.schema,
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
