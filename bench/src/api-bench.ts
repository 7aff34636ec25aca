// What the benches that start the API server with its embedded broker share (`bench:mqtt`,
// `bench:devices`, `bench:pages`): a run that fails as soon as a child dies or the time runs
// out, the server started as `pnpm start` runs it with the first administrator's token, and the
// entry point's handling of usage errors, interrupts and the exit code.
import { randomBase62 } from "@flowplane/auth";
import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { baseChildEnv, UsageError } from "./env";
import { ROOT } from "./machine";
import { freePort, killAllNow, run, type Server, startNode, waitReady } from "./processes";

const API_DIR = join(ROOT, "apps", "api");
// As `pnpm start` runs it (apps/api/package.json).
const SERVER_ARGS = ["--enable-source-maps", "--max-old-space-size=160"];

/** A run's failure: `fail` ends it, `guarded` makes a wait end with it. */
export interface Failure {
  fail: (error: Error) => void;
  guarded: <T>(work: Promise<T>) => Promise<T>;
}

export function failure(): Failure {
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  return { fail, guarded: (work) => Promise.race([work, failed]) };
}

/** Fails the run after `minutes`; builds apps/api unless told to skip it. */
export async function prepare(options: {
  run: Failure;
  maxMinutes: number;
  skipBuild: boolean;
  say: (text: string) => void;
}): Promise<void> {
  const { maxMinutes } = options;
  setTimeout(
    () => options.run.fail(new Error(`time limit of ${maxMinutes} min reached (--max-minutes)`)),
    maxMinutes * 60_000,
  ).unref();
  if (options.skipBuild) return;
  options.say("Building @flowplane/api …");
  await run("pnpm", ["--filter", "@flowplane/api", "build"], {
    cwd: ROOT,
    env: baseChildEnv(),
    timeoutMs: 5 * 60_000,
  });
}

export interface ApiServer {
  server: Server;
  url: string;
  mqttPort: number;
  dataDir: string;
  /** The first administrator's token. */
  token: string;
}

/**
 * Starts apps/api/dist/main.js in `work` with the embedded broker on loopback, through a symlink
 * of its own name (as `pnpm bench` does, see main.ts), and waits until it is ready.
 */
export async function startApiServer(options: {
  work: string;
  /** The server's database variables (DATABASE or DATABASE_URL). */
  database: Record<string, string>;
  /** More of the server's variables (e.g. INSTANCE_DRIVER). */
  env?: Record<string, string>;
  nodeArgs?: string[];
  readyMs: number;
  run: Failure;
}): Promise<ApiServer> {
  const [port, mqttPort] = [await freePort(), await freePort()];
  const dataDir = join(options.work, "data");
  const serverLink = join(options.work, "flowplane-bench-api.js");
  await symlink(join(API_DIR, "dist", "main.js"), serverLink);
  const server = startNode(
    [...(options.nodeArgs ?? []), ...SERVER_ARGS, serverLink],
    {
      cwd: API_DIR,
      env: {
        ...baseChildEnv(),
        NODE_ENV: "production",
        LOG_LEVEL: "warn",
        HOST: "127.0.0.1",
        PORT: String(port),
        DATA_DIR: dataDir,
        FLOWPLANE_TOKEN_SECRET: randomBase62(48),
        BROKER_MODE: "embedded",
        MQTT_HOST: "127.0.0.1",
        MQTT_PORT: String(mqttPort),
        ...options.database,
        ...options.env,
      },
      logFile: join(options.work, "server.log"),
      name: "API server",
    },
    options.run.fail,
  );
  const url = `http://127.0.0.1:${port}`;
  await options.run.guarded(waitReady(`${url}/readyz`, server.child, options.readyMs));
  const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
  return { server, url, mqttPort, dataDir, token };
}

/** The configuration, or the usage printed and the process ended (0 for --help). */
export function configOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof UsageError) {
      (error.exitCode === 0 ? process.stdout : process.stderr).write(`${error.message}\n`);
      process.exit(error.exitCode);
    }
    throw error;
  }
}

/** Runs a bench's `main`: children killed at exit, an interrupt fails the run, exit 0 or 1. */
export function runBench(name: string, run: Failure, main: () => Promise<void>): void {
  process.on("exit", killAllNow);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => run.fail(new Error(`interrupted (${signal})`)));
  }
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `${name} failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
