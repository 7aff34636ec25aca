// What the benches that start the API server with its embedded broker share (`bench:mqtt`,
// `bench:devices`, `bench:pages`, `bench:events`, `bench:webhooks`): a run that fails as soon as a
// child dies or the time runs out, the server started as `pnpm start` runs it with the first
// administrator's token, JSON calls and timed team renames, the result files, and the entry
// point's handling of usage errors, interrupts and the exit code.
import { randomBase62 } from "@flowplane/auth";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { baseChildEnv, UsageError } from "./env";
import { BENCH_DIR, ROOT } from "./machine";
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

/**
 * A JSON call to the API with the token: the reply's body (`Reply`: the fields a bench reads; a
 * wrong guess fails the run loudly), or an error for a status ≥ 300.
 */
export type ApiCall<Reply = { id: string }> = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<Reply>;

export function apiCaller<Reply = { id: string }>(url: string, token: string): ApiCall<Reply> {
  return async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Reply;
  };
}

/**
 * Renames a team n times, `concurrency` at a time (each rename an audit entry, so an event): the
 * seconds they took.
 */
export function teamRenames(call: ApiCall, teamId: string, concurrency: number) {
  let renames = 0;
  return async (n: number): Promise<number> => {
    const t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++;
          await call("PUT", `/api/v1/teams/${teamId}`, { name: `Bench ${++renames}` });
        }
      }),
    );
    return (performance.now() - t) / 1000;
  };
}

/** Writes results/<date>-<name>[-<label>].{json,md}: the files' path without the extension. */
export async function writeResults(
  name: string,
  label: string | undefined,
  result: { machine: Record<string, string | number> },
  md: string,
): Promise<string> {
  const dir = join(BENCH_DIR, "results");
  await mkdir(dir, { recursive: true });
  const date = String(result.machine.date).slice(0, 10);
  const base = join(dir, `${date}-${name}${label ? `-${label}` : ""}`);
  await writeFile(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(`${base}.md`, md);
  return base;
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
