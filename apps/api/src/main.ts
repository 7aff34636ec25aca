// Starts the platform: configuration, database and migrations, first-start work, then the server.
// SIGTERM/SIGINT: stop accepting, finish requests in flight, close the database, exit 0.
import { createDb, migrateToLatest } from "@flowplane/db";
import { mkdir } from "node:fs/promises";
import { buildApp, createLogger } from "./app";
import { ensureInitialAdmin, loadTokenSecret } from "./bootstrap";
import { ConfigError, loadConfig } from "./env";

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = createLogger(config.LOG_LEVEL);
  await mkdir(config.DATA_DIR, { recursive: true });

  const db = await createDb(
    config.DATABASE_URL
      ? {
          kind: "postgres",
          url: config.DATABASE_URL,
          poolSize: config.DATABASE_POOL_SIZE,
          onIdleError: (err) => log.warn({ err }, "idle database connection failed"),
        }
      : { kind: "pglite", dataDir: `${config.DATA_DIR}/pglite` },
  );
  const applied = await migrateToLatest(db);
  log.info(
    { database: config.DATABASE_URL ? "postgres" : "pglite", migrations: applied },
    "database ready",
  );

  const secret = await loadTokenSecret(config.DATA_DIR, config.FLOWPLANE_TOKEN_SECRET);
  const tokenFile = await ensureInitialAdmin(db, secret, config.DATA_DIR);
  if (tokenFile) {
    log.info({ file: tokenFile }, "created the administrator 'admin'; its token is in this file");
  }

  const app = await buildApp({
    db,
    tokenSecret: secret,
    baseUrl: config.BASE_URL,
    logger: log,
    bodyLimit: config.BODY_LIMIT,
    sweepIntervalMs: config.TOKEN_SWEEP_SECONDS * 1000,
  });
  await app.listen({ host: config.HOST, port: config.PORT });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    try {
      await app.close();
      await db.destroy();
      log.flush();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, "shutdown failed");
      log.flush();
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Flowplane failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
