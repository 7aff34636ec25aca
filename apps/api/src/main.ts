// Starts the platform: configuration; the port and DATA_DIR's lock checked before anything is
// touched; DATA_DIR made private; database and migrations, first-start work, then the server.
// With WORKERS > 1 (PostgreSQL only) a primary process does the start-up work once and forks
// workers that share the port (node:cluster); each worker is a full server.
// SIGTERM/SIGINT: stop accepting, finish requests in flight, close the database, exit 0.
// The database's choice and first-start work are in start-database.ts, what a start reports in
// start-reports.ts.
import { type Db } from "@flowplane/db";
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
  INITIAL_PASSWORD_FILE,
  lockDataDir,
  makePrivate,
  portRefusal,
  recordBaseUrl,
  StartRefused,
} from "./bootstrap";
import { type Config, ConfigError, instanceBaseEnv, loadConfig } from "./env";
import { listeningUrl } from "./plugins/server";
import { chooseDatabase, openDb, prepare } from "./start-database";
import {
  logActivity,
  reportIsolation,
  warnOnSharedSite,
  warnOnTrustedLoopback,
} from "./start-reports";

function brokerOptions(config: Config): AppOptions["broker"] {
  const failedConnects = {
    perClient: config.BROKER_CONNECT_RATE_LIMIT,
    perAddress: config.BROKER_CONNECT_ADDRESS_RATE_LIMIT,
  };
  switch (config.BROKER_MODE) {
    case "off":
      return undefined;
    case "external":
      return {
        mode: "external",
        url: config.BROKER_URL!,
        platformUrl: config.BROKER_PLATFORM_URL,
        failedConnects,
      };
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
  const isolation = driver && (await reportIsolation(driver, log));
  warnOnTrustedLoopback(config.TRUST_PROXY, isolation, log);
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
    trustProxy: config.TRUST_PROXY,
    webhookAllowedHosts: config.WEBHOOK_ALLOWED_HOSTS,
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
    metricsToken: config.METRICS_TOKEN,
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
