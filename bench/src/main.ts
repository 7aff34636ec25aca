// `pnpm bench`: builds the API, starts it (and a bare node:http baseline) as child processes, seeds
// data, drives each scenario with autocannon over loopback, seeds the large data set with SQL and
// drives them again, then writes results/<date>-<db>.{json,md}. See README.md.
import { generateToken, randomBase62 } from "@flowplane/auth";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CpuMeter } from "./cpu";
import {
  type BenchDatabase,
  createPostgresDatabase,
  embeddedPostgresUrl,
  serverVersion,
  openSql,
  seedScale,
  tableCounts,
} from "./database";
import { baseChildEnv, type BenchConfig, loadConfig, UsageError } from "./env";
import { load, type LoadResult, type Step } from "./load";
import { BENCH_DIR, machineInfo, pgliteVersion, ROOT } from "./machine";
import {
  firstJsonLine,
  freePort,
  killAllNow,
  pssOf,
  rssOf,
  RssSampler,
  run,
  type Server,
  startNode,
  stopAll,
  waitReady,
} from "./processes";
import {
  markdown,
  type Report,
  RSS_GROWTH_TOLERANCE,
  RSS_LIMIT,
  type ScenarioResult,
  targets,
} from "./report";
import {
  AUDIT_PAGE,
  baselineSteps,
  type Fixture,
  probe,
  type Scenario,
  SCENARIOS,
} from "./scenarios";

const API_DIR = join(ROOT, "apps", "api");
const RESULTS_DIR = join(BENCH_DIR, "results");
// As `pnpm start` runs it (apps/api/package.json).
const SERVER_ARGS = ["--enable-source-maps", "--max-old-space-size=160", "dist/main.js"];

const say = (text: string) => process.stdout.write(`${text}\n`);

/** Rejects as soon as a child dies unexpectedly or the time limit passes. */
let failRun: (error: Error) => void = () => {};
const failed = new Promise<never>((_, reject) => {
  failRun = reject;
});
failed.catch(() => {});

async function guarded<T>(work: Promise<T>): Promise<T> {
  return Promise.race([work, failed]);
}

interface ApiServer extends Server {
  url: string;
}

async function main(config: BenchConfig): Promise<void> {
  const started = Date.now();
  const limit = setTimeout(
    () => failRun(new Error(`time limit of ${config.maxMinutes} min reached (--max-minutes)`)),
    config.maxMinutes * 60_000,
  );
  limit.unref();

  const dbKind = config.databaseUrl ? "postgres" : config.database;
  const selected = SCENARIOS.filter((s) => !config.only || config.only.includes(s.id));
  const unknownIds = (config.only ?? []).filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknownIds.length > 0) throw new UsageError(`unknown scenario: ${unknownIds.join(", ")}`);

  // Before the build: the commit that is built and measured (others may commit meanwhile).
  const machine = machineInfo();
  if (!config.skipBuild) {
    say("Building @flowplane/api …");
    await run("pnpm", ["--filter", "@flowplane/api", "build"], {
      cwd: ROOT,
      env: baseChildEnv(),
      timeoutMs: 5 * 60_000,
    });
  }

  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-"));
  const dataDir = join(work, "data");
  const profileDir = join(RESULTS_DIR, "profiles");
  const secret = randomBase62(48);
  let db: BenchDatabase | undefined;
  let api: ApiServer | undefined;
  let meter: CpuMeter | undefined;
  const sampler = new RssSampler();
  let keepWork = false;

  try {
    db = config.databaseUrl
      ? await createPostgresDatabase(config.databaseUrl)
      : config.database === "embedded-postgres"
        ? {
            kind: "embedded-postgres",
            sqlUrl: embeddedPostgresUrl(dataDir),
            version: "PostgreSQL (embedded-postgres, started by the server)",
            drop: async () => {},
          }
        : {
            kind: "pglite",
            version: `PGlite ${await pgliteVersion()}`,
            drop: async () => {},
          };
    say(`Database: ${db.version}${db.name ? ` (database ${db.name}, dropped at the end)` : ""}`);

    meter = await CpuMeter.open(db.url);
    const baseline = startNode(
      [join(BENCH_DIR, "src", "baseline-server.mjs")],
      {
        cwd: BENCH_DIR,
        env: baseChildEnv(),
        logFile: join(work, "baseline.log"),
        name: "baseline server",
      },
      failRun,
    );
    const baselinePort = (await firstJsonLine<{ port: number }>(baseline.child, 10_000)).port;
    const baselineUrl = `http://127.0.0.1:${baselinePort}`;

    if (config.cpuProf) await mkdir(profileDir, { recursive: true });
    // The server runs as dist/main.js through a symlink of its own name, so that tools that clean
    // up "node dist/main.js" processes by name (other people's test runs) leave it alone. Node
    // resolves the symlink: imports, package type and source map are those of apps/api/dist.
    const serverLink = join(work, "flowplane-bench-api.js");
    await symlink(
      config.serverMain ? resolve(config.serverMain) : join(API_DIR, SERVER_ARGS.at(-1)!),
      serverLink,
    );
    const preload = config.serverPreload
      ? ["--import", pathToFileURL(resolve(config.serverPreload)).href]
      : [];
    const serverArgs = [
      ...config.serverNodeOptions,
      ...preload,
      ...SERVER_ARGS.slice(0, -1),
      serverLink,
    ];
    let startMemory: { peakBytes: number; readyBytes: number; readyPssBytes: number } | undefined;
    const startApi = async (): Promise<ApiServer> => {
      const port = await freePort();
      const env: Record<string, string> = {
        ...baseChildEnv(),
        NODE_ENV: "production",
        LOG_LEVEL: config.serverLogLevel,
        HOST: "127.0.0.1",
        // The login scenario signs in from one address as fast as it can: the per-address bound
        // that protects against guessing would measure the limiter, not sign-in.
        LOGIN_ADDRESS_RATE_LIMIT: "100000000/1",
        PORT: String(port),
        DATA_DIR: dataDir,
        FLOWPLANE_TOKEN_SECRET: secret,
        WORKERS: String(config.serverWorkers),
        // The HTTP scenarios measure the API; the MQTT ones start their own broker.
        BROKER_MODE: config.serverWorkers > 1 ? "off" : "embedded",
        INSTANCE_DRIVER: config.serverWorkers > 1 ? "off" : "local",
        MQTT_PORT: "0",
        ...(db!.url ? { DATABASE_URL: db!.url } : { DATABASE: db!.kind }),
      };
      const args = config.cpuProf
        ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, ...serverArgs]
        : serverArgs;
      const server = startNode(
        args,
        { cwd: API_DIR, env, logFile: join(work, "server.log"), name: "API server" },
        failRun,
      );
      const url = `http://127.0.0.1:${port}`;
      // Memory from the spawn on: the first start's peak (initdb or PGlite's, migrations) and
      // what the server holds once ready.
      const starting = new RssSampler();
      starting.start(server.pid);
      await guarded(waitReady(`${url}/readyz`, server.child, 120_000));
      starting.stopSampling();
      const readyBytes = (await rssOf(server.pid)) ?? 0;
      startMemory ??= {
        peakBytes: Math.max(starting.max, readyBytes),
        readyBytes,
        readyPssBytes: (await pssOf(server.pid)) ?? 0,
      };
      sampler.start(server.pid);
      return { ...server, url };
    };

    say("Starting the API server …");
    api = await startApi();
    if (db.kind === "embedded-postgres") {
      // The server's own PostgreSQL exists now: its version, and its backends for the CPU figures.
      db.version = `PostgreSQL ${await serverVersion(db.sqlUrl!)} (embedded-postgres, started by the server)`;
      say(`Database: ${db.version}`);
      await meter.close();
      meter = await CpuMeter.open(db.sqlUrl, true);
    }
    const adminToken = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();

    // Small data set, through the API: the admin's teams (one per connection for the PUT).
    const teamCount = Math.max(config.teams, config.connections);
    const teamIds: string[] = [];
    for (let i = 0; i < teamCount; i++) {
      const response = await fetch(`${api.url}/api/v1/teams`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `Bench team ${String(i + 1).padStart(2, "0")}` }),
      });
      if (response.status !== 200) {
        throw new Error(`creating a team: ${response.status} ${await response.text()}`);
      }
      teamIds.push(((await response.json()) as { id: string }).id);
    }
    // A user with a password, member of every bench team, signed in once for the session runs.
    const login = { username: "bench-user", password: "bench password 0123456789" };
    const created = await fetch(`${api.url}/api/v1/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ ...login, name: "Bench User" }),
    });
    if (created.status !== 200) {
      throw new Error(`creating the bench user: ${created.status} ${await created.text()}`);
    }
    const signedIn = await fetch(`${api.url}/account/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(login),
    });
    const sessionCookie = signedIn.headers.getSetCookie()[0]?.split(";")[0];
    if (signedIn.status !== 200 || !sessionCookie) {
      throw new Error(`signing in: ${signedIn.status} ${await signedIn.text()}`);
    }
    // As many teams as the administrator, made in the browser's way (cookie and Origin).
    for (let i = 0; i < teamCount; i++) {
      const response = await fetch(`${api.url}/api/v1/teams`, {
        method: "POST",
        headers: { cookie: sessionCookie, origin: api.url, "content-type": "application/json" },
        body: JSON.stringify({ name: `Bench user team ${String(i + 1).padStart(2, "0")}` }),
      });
      if (response.status !== 200) {
        throw new Error(
          `creating a team in a session: ${response.status} ${await response.text()}`,
        );
      }
    }
    // A team of the administrator's whose audit log nothing else writes to: a full first page of
    // renames now, and the scale phase adds a million older entries below them.
    const auditTeam = await fetch(`${api.url}/api/v1/teams`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Bench audit team" }),
    });
    if (auditTeam.status !== 200) {
      throw new Error(`creating the audit team: ${auditTeam.status} ${await auditTeam.text()}`);
    }
    const auditTeamId = ((await auditTeam.json()) as { id: string }).id;
    for (let i = 0; i < AUDIT_PAGE; i++) {
      const renamed = await fetch(`${api.url}/api/v1/teams/${auditTeamId}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `Bench audit team ${i}` }),
      });
      if (renamed.status !== 200) {
        throw new Error(`renaming the audit team: ${renamed.status} ${await renamed.text()}`);
      }
    }
    // Hosted instances (real Node-RED processes) in an application of the first team.
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${api!.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (response.status !== 200) {
        throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
      }
      return (await response.json()) as { id: string };
    };
    const instanceTeamId = teamIds[0]!;
    const application = await post("/api/v1/applications", {
      name: "Bench app",
      teamId: instanceTeamId,
    });
    const instanceIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const name = `bench-${randomBase62(8).toLowerCase()}`;
      instanceIds.push(
        (await post("/api/v1/projects", { name, applicationId: application.id })).id,
      );
    }
    // With WORKERS > 1 the server runs no instances (INSTANCE_DRIVER=off): they stay `unknown`.
    for (const id of config.serverWorkers > 1 ? [] : instanceIds) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const status = await fetch(`${api.url}/api/v1/projects/${id}/status`, {
          headers: { authorization: `Bearer ${adminToken}` },
        });
        const { meta } = (await status.json()) as { meta: { state: string } };
        if (meta.state === "running") break;
        if (Date.now() > deadline) throw new Error(`instance ${id} is ${meta.state}, not running`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    // Devices of the application, one per connection, checking in as the agent does.
    const devices: Fixture["devices"] = [];
    for (let i = 0; i < config.connections; i++) {
      const device = (await post("/api/v1/devices", {
        name: `bench device ${i + 1}`,
        team: instanceTeamId,
        application: application.id,
      })) as { id: string; credentials?: { token: string } };
      devices.push({ id: device.id, token: device.credentials!.token });
    }
    const valid = generateToken("personalAccessToken");
    const fixture: Fixture = {
      devices,
      deviceApplicationId: application.id,
      instanceTeamId,
      instanceId: instanceIds[0]!,
      auditTeamId,
      login,
      sessionCookie,
      adminToken,
      teamIds,
      // Flip the last checksum character: right shape, wrong checksum.
      malformedToken: valid.slice(0, -1) + (valid.endsWith("A") ? "B" : "A"),
      unknownToken: generateToken("personalAccessToken"),
    };
    const startRss = (await rssOf(api.pid)) ?? 0;
    say(
      `Seeded ${teamCount} teams for the administrator and ${teamCount} for a signed-in user through the API; server RSS ${Math.round(startRss / 2 ** 20)} MB.\n`,
    );

    let runNumber = 0;
    const drive = async (
      server: { url: string; pid: number },
      scenario: Scenario,
      baselineOf?: Step[][],
    ) => {
      const tag = `r${++runNumber}`;
      const stepsOf = (connection: number) =>
        baselineOf ? baselineOf[connection]! : scenario.steps(fixture, connection, tag);
      const options = { url: server.url, connections: config.connections, stepsOf };
      if (config.warmup > 0) await guarded(load({ ...options, duration: config.warmup }));
      const endWindow = sampler.window();
      const endCpu = await meter!.start(server.pid, !baselineOf && db!.kind !== "pglite");
      const result = await guarded(load({ ...options, duration: config.duration }));
      result.cpu = await endCpu();
      const memory = await endWindow();
      return { result, memory };
    };
    const line = (label: string, r: LoadResult, baselineRps?: number) =>
      say(
        `  ${label.padEnd(9)} ${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${r.latencyMs.p50.toFixed(2)} ms  p99 ${r.latencyMs.p99.toFixed(2)} ms` +
          (baselineRps ? `  ${((r.rps / baselineRps) * 100).toFixed(1)} % of baseline` : "") +
          (r.unexpected + r.errors > 0
            ? `  UNEXPECTED ${JSON.stringify(r.statuses)} errors ${r.errors}`
            : ""),
      );

    const results: ScenarioResult[] = [];
    // Each scenario's baseline requests, run again at scale (see the scale phase).
    const baselines = new Map<string, Step[][]>();
    for (const [index, scenario] of selected.entries()) {
      say(`${scenario.title}`);
      const probeSteps = scenario.steps(fixture, 0, "probe");
      const probed = await guarded(probe(api.url, probeSteps));
      // The baseline answers every connection's requests with the probed statuses and sizes.
      const baselineOf = Array.from({ length: config.connections }, (_, c) =>
        baselineSteps(scenario.steps(fixture, c, "baseline"), probed),
      );
      baselines.set(scenario.id, baselineOf);
      const base = await drive({ url: baselineUrl, pid: baseline.pid }, scenario, baselineOf);
      line("baseline", base.result);
      const small = await drive(api, scenario);
      line("small", small.result, base.result.rps);
      const entry: ScenarioResult = {
        id: scenario.id,
        title: scenario.title,
        ...(scenario.note ? { note: scenario.note } : {}),
        expect: probeSteps.map((s) => s.expect),
        responseBytes: probed.map((p) => p.bytes),
        baseline: base.result,
        small: small.result,
        ratio: small.result.rps / base.result.rps,
        memory: small.memory,
      };
      if (index === 0) {
        const again = await drive(api, scenario);
        line("again", again.result, base.result.rps);
        entry.repeat = again;
      }
      results.push(entry);
    }

    let seeding: Report["seeding"];
    let counts: Record<string, number> | undefined;
    if (config.scale) {
      say(`\nSeeding the scale data set with SQL …`);
      const seededUserToken = generateToken("personalAccessToken");
      const restart = db.kind === "pglite";
      if (restart) {
        // PGlite is one process's database: the server lets go of it while the bench writes.
        sampler.stopSampling();
        await api.stop();
      }
      const sql = await openSql(db, join(dataDir, "pglite"));
      try {
        seeding = await guarded(
          seedScale(sql, {
            seed: config.seed,
            auditTeamId: fixture.auditTeamId,
            secret,
            adminToken,
            seededUserToken,
          }),
        );
        counts = await tableCounts(sql);
      } finally {
        await sql.close();
      }
      if (restart) {
        say("Restarting the API server …");
        api = await startApi();
      }
      // The server sees the seeded rows: a seeded user's token works.
      const me = await fetch(`${api.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${seededUserToken}` },
      });
      const body = (await me.json()) as { username?: string };
      if (me.status !== 200 || body.username !== "seed-user-1") {
        throw new Error(
          `the server does not see the seeded data: ${me.status} ${JSON.stringify(body)}`,
        );
      }
      say(`Seeded in ${seeding.totalSeconds.toFixed(1)} s; rows now ${JSON.stringify(counts)}\n`);

      for (const entry of results) {
        const scenario = selected.find((s) => s.id === entry.id)!;
        say(`${scenario.title} (scale)`);
        // The baseline again, minutes after the small run: this machine's speed drifts (the bare
        // server's req/s moved 2x within one run on 2026-11-28), so the scale run is compared
        // with the small one as ratios to a baseline measured beside each, not in raw req/s.
        const scaleBase = await drive(
          { url: baselineUrl, pid: baseline.pid },
          scenario,
          baselines.get(scenario.id),
        );
        line("baseline", scaleBase.result);
        const scale = await drive(api, scenario);
        line("scale", scale.result, scaleBase.result.rps);
        entry.scale = scale;
        entry.scaleBaseline = scaleBase.result;
        entry.scaleRatio =
          scale.result.rps / scaleBase.result.rps / (entry.small.rps / entry.baseline.rps);
      }
    }

    // Stop the servers (the API writes its CPU profile on a clean exit).
    sampler.stopSampling();
    const lastRss = await rssOf(api.pid);
    const endPssBytes = (await pssOf(api.pid)) ?? 0;
    await api.stop();
    await baseline.stop();

    const first = results[0];
    const growth = first?.repeat
      ? first.repeat.memory.medianBytes - first.memory.medianBytes
      : undefined;
    const memory: Report["memory"] = {
      startBytes: startRss,
      firstStartPeakBytes: startMemory?.peakBytes ?? 0,
      readyBytes: startMemory?.readyBytes ?? 0,
      readyPssBytes: startMemory?.readyPssBytes ?? 0,
      endPssBytes,
      maxBytes: Math.max(sampler.max, lastRss ?? 0),
      limitBytes: RSS_LIMIT,
      grew: growth === undefined ? undefined : growth > RSS_GROWTH_TOLERANCE,
      ...(growth === undefined ? {} : { growthBytes: growth }),
    };
    const date = new Date();
    const report: Report = {
      date: date.toISOString().slice(0, 10),
      database: db.kind,
      databaseVersion: db.version,
      machine,
      settings: {
        connections: config.connections,
        duration: config.duration,
        warmup: config.warmup,
        scale: config.scale,
        cpuProf: config.cpuProf,
        serverCommand: [
          "node",
          ...config.serverNodeOptions,
          ...(config.cpuProf ? ["--cpu-prof"] : []),
          ...(config.serverPreload ? ["--import", config.serverPreload] : []),
          ...SERVER_ARGS.slice(0, -1),
          config.serverMain ? resolve(config.serverMain) : SERVER_ARGS.at(-1),
        ].join(" "),
        serverLogLevel: config.serverLogLevel,
        startedAt: new Date(started).toISOString(),
        minutes: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
      },
      ...(seeding ? { seeding } : {}),
      ...(counts ? { tableCounts: counts } : {}),
      scenarios: results,
      memory,
      targets: targets(results, memory, config.scale),
    };
    const table = markdown(report);
    say(`\n${table}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const base = join(
      RESULTS_DIR,
      `${report.date}-${dbKind}${config.label ? `-${config.label}` : ""}`,
    );
    await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(`${base}.md`, `# Flowplane benchmark\n\n${table}`);
    say(`Wrote ${base}.json and ${base}.md (${report.settings.minutes} min).`);
    if (config.cpuProf)
      say(`CPU profiles in ${profileDir}: pnpm --filter @flowplane/bench profile:summary`);
  } catch (error) {
    keepWork = true;
    if (api) {
      const log = await readFile(api.logFile, "utf8").catch(() => "");
      if (log.trim())
        say(`\nServer output (last lines):\n${log.split("\n").slice(-20).join("\n")}`);
    }
    throw error;
  } finally {
    sampler.stopSampling();
    await meter?.close().catch(() => {});
    await stopAll();
    await db
      ?.drop()
      .catch((error: unknown) => say(`could not drop the database: ${String(error)}`));
    // Kept after a failure for its logs (the data directory is removed either way).
    if (keepWork) await rm(dataDir, { recursive: true, force: true });
    else await rm(work, { recursive: true, force: true });
  }
}

let config: BenchConfig;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof UsageError) {
    (error.exitCode === 0 ? process.stdout : process.stderr).write(`${error.message}\n`);
    process.exit(error.exitCode);
  }
  throw error;
}

process.on("exit", killAllNow);
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    say(`\n${signal}: stopping …`);
    failRun(new Error(`interrupted (${signal})`));
  });
}

main(config).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
