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
import { asDatabaseError } from "./errors";
import type { EmbeddedPostgresOptions } from "./embedded-postgres";
import { superviseEmbeddedPostgres } from "./embedded-postgres-supervisor";
import { ownSchemaIntrospection } from "./introspection";
import { migrations } from "./migrations/index";
import type { Database } from "./schema";

export type Db = Kysely<Database>;

/**
 * How long a request waits for a connection (a new one, or the pool's next free one) before it
 * fails with DatabaseUnavailableError: a server that is down refuses at once (the 503 comes from
 * that refusal, not from this bound), but one that hangs (a lost network, a full pool under a
 * stalled server) must not hold requests for ever. Not shorter: a pool that is merely busy (a
 * burst on a loaded machine) must queue, not shed its requests as 503.
 */
const CONNECT_TIMEOUT_MS = 15_000;

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
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // TCP keepalive: a connection whose network went away (a server moved, a dropped route)
      // fails and leaves the pool instead of waiting for ever. No statement timeout: migrations
      // and backups run long.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(options ? { options } : {}),
    });
    pool.on("error", (error) => config.onIdleError?.(error));
    return postgresDb(pool, { connectionString: config.url, options });
  }
  if (config.kind === "embedded-postgres") {
    const poolSize = config.poolSize ?? 10;
    const server = await superviseEmbeddedPostgres({
      dir: config.dir,
      // The pool, and a few for migrations', tools' and access feeds' own connections.
      maxConnections: poolSize + 6,
      log: config.log,
      env: config.env,
    });
    const pool = new pg.Pool({
      connectionString: server.url,
      max: poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
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

const ignore = () => {};

function rethrowAsDatabaseError(error: unknown): never {
  throw asDatabaseError(error);
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
      const client = await pool.connect().catch(rethrowAsDatabaseError);
      // The server gone between two statements of a checked-out client (its connection ended, an
      // administrator's shutdown) is an `error` event with no query to fail, which nothing else
      // listens to while the client is out of the pool: the next statement fails instead (not
      // queryable), and the pool drops the client when it comes back.
      client.on("error", ignore);
      return {
        query: ((text: unknown, values?: readonly unknown[]) => {
          const result: unknown =
            typeof text === "string" &&
            values &&
            values.length > 0 &&
            values.length <= MAX_PREPARED_PARAMETERS
              ? client.query({ name: nameOf(text), text, values: [...values] })
              : client.query(text as string, values ? [...values] : undefined);
          // A promise (a cursor, for streamed queries, is returned as it is).
          return result instanceof Promise ? result.catch(rethrowAsDatabaseError) : result;
        }) as never,
        release: () => {
          client.off("error", ignore);
          client.release();
        },
      };
    },
    end: () => pool.end(),
  };
}

/**
 * The database holds migrations this version does not know: a newer version migrated it. Serving
 * it would run old queries against a schema they were not written for, so the start stops.
 */
export class SchemaTooNewError extends Error {
  constructor(
    /** The newest migration the database has applied. */
    readonly databaseNewest: string,
    /** The newest migration this version has. */
    readonly ownNewest: string,
  ) {
    super(
      `the database was migrated by a newer version of Flowplane: its newest migration is ${databaseNewest}, this version's newest is ${ownNewest}. Run the newer version, or restore the backup taken before the upgrade (pnpm restore FILE)`,
    );
    this.name = "SchemaTooNewError";
  }
}

/** Refuses a schema migrated by a newer version (applied migrations not in `migrations`). */
async function refuseNewerSchema(db: Db): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select exists (select 1 from information_schema.tables
      where table_schema = current_schema() and table_name = 'kysely_migration') as present
  `.execute(db);
  if (!rows[0]?.present) return;
  const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const names = applied.rows.map((row) => row.name).sort();
  if (names.every((name) => name in migrations)) return;
  const own = Object.keys(migrations).sort();
  throw new SchemaTooNewError(names.at(-1)!, own.at(-1)!);
}

/**
 * Brings the schema up to date. Safe to run from several processes and machines at once: Kysely's
 * migrator holds a PostgreSQL advisory lock (session-level, one key for the whole database) while
 * it reads what ran and runs the rest in one transaction, so each migration runs once and the
 * others find nothing left to do. A schema a newer version migrated is refused (SchemaTooNewError)
 * before anything runs.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  await refuseNewerSchema(db);
  // Kysely looks for its migration tables by name in every schema unless told which one; another
  // schema's tables (another app, or a parallel test) would make it skip creating ours.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: rows[0]!.schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    // A newer version that migrated meanwhile (under the lock, after the check above): Kysely
    // says "corrupted migrations"; say what it is.
    await refuseNewerSchema(db);
    throw error instanceof Error ? error : new Error(String(error));
  }
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
