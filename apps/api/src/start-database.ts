// The database a start opens: PostgreSQL at DATABASE_URL, else the one DATA_DIR already holds,
// else the embedded PostgreSQL where it runs, else PGlite (with a warning saying why); then its
// migrations, the token secret and the first administrator, once, before anything serves.
import {
  createDb,
  type Db,
  embeddedPostgresUnavailable,
  migrateToLatest,
  SchemaTooNewError,
} from "@flowplane/db";
import { access } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import {
  ensureInitialAdmin,
  INITIAL_PASSWORD_FILE,
  loadTokenSecret,
  StartRefused,
} from "./bootstrap";
import { type Config, instanceBaseEnv } from "./env";

export type DatabaseKind = "postgres" | "embedded-postgres" | "pglite";

/**
 * The database when DATABASE and DATABASE_URL are both unset: the one DATA_DIR already holds (a
 * DATA_DIR of an earlier version keeps its PGlite data), else the embedded PostgreSQL where it
 * can run here, else PGlite — said in the log. A first start that falls back to PGlite leaves
 * DATA_DIR/pglite, so later starts keep it (and say so) rather than switch engines under the data.
 */
export async function chooseDatabase(config: Config, log: Logger): Promise<DatabaseKind> {
  if (config.DATABASE !== "default") return config.DATABASE;
  const holds = (name: string) =>
    access(join(config.DATA_DIR, name)).then(
      () => true,
      () => false,
    );
  if (await holds("postgres")) return "embedded-postgres";
  if (await holds("pglite")) {
    log.info(
      { dataDir: config.DATA_DIR },
      "DATA_DIR holds a PGlite database (an earlier version's default, or this machine's fallback): using it; DATABASE=embedded-postgres starts an empty PostgreSQL instead",
    );
    return "pglite";
  }
  const unavailable = embeddedPostgresUnavailable();
  if (unavailable) {
    log.warn(
      { reason: unavailable },
      `the embedded PostgreSQL cannot run here (${unavailable}): using PGlite, in-process (slower, about three times the memory), in DATA_DIR/pglite from now on`,
    );
    return "pglite";
  }
  return "embedded-postgres";
}

export function openDb(config: Config, kind: DatabaseKind, log: Logger): Promise<Db> {
  const onIdleError = (err: Error) => log.warn({ err }, "idle database connection failed");
  switch (kind) {
    case "postgres":
      return createDb({
        kind: "postgres",
        url: config.DATABASE_URL!,
        poolSize: config.DATABASE_POOL_SIZE,
        onIdleError,
      });
    case "embedded-postgres": {
      const dbLog = log.child({ database: "embedded-postgres" });
      return createDb({
        kind: "embedded-postgres",
        dir: join(config.DATA_DIR, "postgres"),
        poolSize: config.DATABASE_POOL_SIZE,
        onIdleError,
        log: (level, message) => dbLog[level](message),
        env: instanceBaseEnv(),
      });
    }
    case "pglite":
      return createDb({ kind: "pglite", dataDir: `${config.DATA_DIR}/pglite` });
  }
}

/**
 * Migrations, the token secret and the first administrator: once, before anything serves. A
 * database a newer version migrated stops the start (an older version never serves it).
 */
export async function prepare(
  config: Config,
  log: Logger,
  db: Db,
  database: DatabaseKind,
): Promise<string> {
  const applied = await migrateToLatest(db).catch(async (error: unknown) => {
    if (!(error instanceof SchemaTooNewError)) throw error;
    await db.destroy();
    throw new StartRefused(error.message);
  });
  log.info({ database, migrations: applied }, "database ready");
  const secret = await loadTokenSecret(config.DATA_DIR, config.FLOWPLANE_TOKEN_SECRET);
  const tokenFile = await ensureInitialAdmin(db, secret, config.DATA_DIR);
  if (tokenFile) {
    log.info(
      { tokenFile, passwordFile: join(config.DATA_DIR, INITIAL_PASSWORD_FILE) },
      "created the administrator 'admin'; its token and its first password are in these files",
    );
  }
  return secret;
}
