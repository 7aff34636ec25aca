// `pnpm bench:mqtt`: the team broker under load. Builds and starts the API server (its embedded
// aedes broker with the platform's hooks: authentication, per-team mount, ACLs) and a bare aedes
// with the same persistence and no hooks, each as its own process, then drives both with MQTT.js
// clients from this process: connects per second (a client's first connect, checked with scrypt,
// and a reconnect, answered from the verified-password cache) and QoS 1 publish throughput to a
// subscriber. Writes results/<date>-mqtt-<db>.{json,md}. See README.md, "MQTT".
import mqtt, { type MqttClient } from "mqtt";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type BenchDatabase, createPostgresDatabase } from "./database";
import { configOrExit, failure, prepare, runBench, startApiServer } from "./api-bench";
import { baseChildEnv, loadMqttConfig, type MqttBenchConfig } from "./env";
import { BENCH_DIR, machineInfo, pgliteVersion } from "./machine";
import { cpuSecondsOf, firstJsonLine, type Server, startNode, stopAll } from "./processes";

const RESULTS_DIR = join(BENCH_DIR, "results");
const PASSWORD = "bench-mqtt-password-0123456789";
const PAYLOAD = Buffer.alloc(64, "x");

const say = (text: string) => process.stdout.write(`${text}\n`);

const failing = failure();
const { fail: failRun, guarded } = failing;

/** Where a broker listens, how its clients are named, and the process to measure. */
interface Broker {
  name: string;
  url: string;
  pid: number;
  /** The MQTT username (and client id) of the client named `name`. */
  username(name: string): string;
}

interface Timed {
  operations: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU seconds of the broker's process per operation, in µs. */
  cpuMicros: number;
}

interface Row {
  id: string;
  what: string;
  unit: string;
  platform: Timed;
  bare: Timed;
  /** Publish scenario: messages the subscriber received per second. */
  delivered?: { platform: number; bare: number };
}

function connect(broker: Broker, name: string, clean = true): Promise<MqttClient> {
  const username = broker.username(name);
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(broker.url, {
      username,
      clientId: username,
      password: PASSWORD,
      protocolVersion: 4,
      clean,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
    });
    client.once("connect", () => resolve(client));
    client.once("error", (error) => {
      client.end(true);
      reject(new Error(`${broker.name}: ${name} could not connect: ${error.message}`));
    });
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/**
 * Runs `loops` copies of `once` until `seconds` have passed (or, with `total`, until that many
 * operations are done), timing each, and the CPU the broker's process used meanwhile.
 */
async function timed(
  broker: Broker,
  loops: number,
  once: (loop: number, n: number) => Promise<void>,
  limit: { seconds: number } | { total: number },
): Promise<Timed> {
  const latencies: number[] = [];
  const cpuBefore = (await cpuSecondsOf(broker.pid)) ?? 0;
  const started = performance.now();
  const deadline = "seconds" in limit ? started + limit.seconds * 1000 : Infinity;
  let next = 0;
  const more = () => performance.now() < deadline && ("total" in limit ? next < limit.total : true);
  await guarded(
    Promise.all(
      Array.from({ length: loops }, async (_, loop) => {
        while (more()) {
          const n = next++;
          const t0 = performance.now();
          await once(loop, n);
          latencies.push(performance.now() - t0);
        }
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = ((await cpuSecondsOf(broker.pid)) ?? 0) - cpuBefore;
  latencies.sort((a, b) => a - b);
  return {
    operations: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMicros: latencies.length === 0 ? 0 : (cpu / latencies.length) * 1e6,
  };
}

/** CONNECT, wait for the CONNACK, DISCONNECT: one connect-and-authenticate. */
async function connectOnce(broker: Broker, name: string): Promise<void> {
  const client = await connect(broker, name);
  await client.endAsync();
}

/**
 * Publishers (one connection each, `window` QoS 1 publishes in flight) publish 64-byte messages
 * to `bench/<n>` while one subscriber of `bench/#` receives them. Counts PUBACKs and deliveries.
 */
async function publishRun(
  broker: Broker,
  config: MqttBenchConfig,
  seconds: number,
): Promise<{ timed: Timed; delivered: number }> {
  const subscriber = await connect(broker, "sub");
  await subscriber.subscribeAsync("bench/#", { qos: 0 });
  let received = 0;
  subscriber.on("message", () => received++);
  const publishers = await Promise.all(
    Array.from({ length: config.concurrency }, (_, i) => connect(broker, `pub-${i}`)),
  );
  const receivedBefore = received;
  const result = await timed(
    broker,
    config.concurrency * config.window,
    async (loop) => {
      const publisher = publishers[loop % publishers.length]!;
      await publisher.publishAsync(`bench/${loop % publishers.length}`, PAYLOAD, { qos: 1 });
    },
    { seconds },
  );
  const delivered = (received - receivedBefore) / result.seconds;
  await Promise.all([...publishers, subscriber].map((client) => client.endAsync()));
  return { timed: result, delivered };
}

async function measure(brokers: [Broker, Broker], config: MqttBenchConfig): Promise<Row[]> {
  const [platform, bare] = brokers;
  const rows: Row[] = [];
  const both = async (run: (broker: Broker) => Promise<Timed>) => ({
    platform: await run(platform),
    bare: await run(bare),
  });

  say(`First connects: ${config.firstConnects} clients, ${config.concurrency} at a time …`);
  rows.push({
    id: "connect-first",
    what: "CONNECT → CONNACK → DISCONNECT, each client's first connect (scrypt)",
    unit: "connects/s",
    ...(await both((broker) =>
      timed(broker, config.concurrency, (_, n) => connectOnce(broker, `first-${n}`), {
        total: config.firstConnects,
      }),
    )),
  });

  say("Reconnects …");
  rows.push({
    id: "connect-cached",
    what: "CONNECT → CONNACK → DISCONNECT, a client that connected before (cached check)",
    unit: "connects/s",
    ...(await both(async (broker) => {
      const again = (loop: number) => connectOnce(broker, `conn-${loop}`);
      await timed(broker, config.concurrency, again, { seconds: config.warmup });
      return timed(broker, config.concurrency, again, { seconds: config.duration });
    })),
  });

  say("Publishing …");
  const published = { platform: { delivered: 0 }, bare: { delivered: 0 } };
  const publish = await both(async (broker) => {
    if (config.warmup > 0) await publishRun(broker, config, config.warmup);
    const { timed: result, delivered } = await publishRun(broker, config, config.duration);
    published[broker === platform ? "platform" : "bare"].delivered = delivered;
    return result;
  });
  rows.push({
    id: "publish",
    what: `QoS 1 publish of 64 B to bench/<n> (PUBACKed), ${config.concurrency} publishers × ${config.window} in flight, one subscriber of bench/#`,
    unit: "publishes/s",
    ...publish,
    delivered: { platform: published.platform.delivered, bare: published.bare.delivered },
  });
  return rows;
}

async function createClients(
  url: string,
  token: string,
  teamId: string,
  names: string[],
): Promise<void> {
  const queue = [...names];
  // The API hashes each password with scrypt: a few at a time keeps the server responsive.
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const response = await fetch(`${url}/api/v1/teams/${teamId}/broker/client`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            username: name,
            password: PASSWORD,
            acls: [
              { action: "publish", pattern: "bench/+" },
              { action: "subscribe", pattern: "bench/#" },
            ],
          }),
        });
        if (response.status !== 201) {
          throw new Error(
            `creating broker client ${name}: ${response.status} ${await response.text()}`,
          );
        }
      }
    }),
  );
}

const round = (value: number, digits = 0) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

function markdown(rows: Row[], header: string): string {
  const lines = [
    header,
    "",
    "| Scenario | Unit | Bare aedes | Platform | vs bare | p50 ms (bare / platform) | p99 ms (bare / platform) | Broker CPU µs/op (bare / platform) |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (row) =>
        `| ${row.what} | ${row.unit} | ${round(row.bare.perSecond)} | ${round(row.platform.perSecond)} | ${round((row.platform.perSecond / row.bare.perSecond) * 100, 1)} % | ${round(row.bare.p50, 2)} / ${round(row.platform.p50, 2)} | ${round(row.bare.p99, 2)} / ${round(row.platform.p99, 2)} | ${round(row.bare.cpuMicros)} / ${round(row.platform.cpuMicros)} |`,
    ),
  ];
  const delivered = rows.find((row) => row.delivered)?.delivered;
  if (delivered) {
    lines.push(
      "",
      `Messages delivered to the subscriber per second: bare ${round(delivered.bare)}, platform ${round(delivered.platform)} (${round((delivered.platform / delivered.bare) * 100, 1)} %).`,
    );
  }
  return `${lines.join("\n")}\n`;
}

async function main(config: MqttBenchConfig): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-mqtt-"));
  let db: BenchDatabase | undefined;
  let api: Server | undefined;
  try {
    db = config.databaseUrl
      ? await createPostgresDatabase(config.databaseUrl)
      : { kind: "pglite", version: `PGlite ${await pgliteVersion()}`, drop: async () => {} };
    say(`Database: ${db.version}`);

    const bareProcess = startNode(
      [join(BENCH_DIR, "src", "bare-aedes.mjs"), join(work, "bare-aedes")],
      { cwd: BENCH_DIR, env: baseChildEnv(), logFile: join(work, "bare.log"), name: "bare aedes" },
      failRun,
    );
    const barePort = (await guarded(firstJsonLine<{ port: number }>(bareProcess.child, 10_000)))
      .port;

    const profileDir = join(RESULTS_DIR, "profiles");
    if (config.cpuProf) await mkdir(profileDir, { recursive: true });
    const apiServer = await startApiServer({
      work,
      // Without DATABASE_URL, PGlite, as this bench has always measured (and reports) it.
      database: db.url ? { DATABASE_URL: db.url } : { DATABASE: "pglite" },
      nodeArgs: config.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
      readyMs: 120_000,
      run: failing,
    });
    api = apiServer.server;
    const { url, token, mqttPort } = apiServer;
    const team = await fetch(`${url}/api/v1/teams`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "MQTT bench" }),
    });
    if (team.status !== 200) throw new Error(`creating the team: ${team.status}`);
    const teamId = ((await team.json()) as { id: string }).id;

    const names = [
      "sub",
      ...Array.from({ length: config.concurrency }, (_, i) => [`pub-${i}`, `conn-${i}`]).flat(),
      ...Array.from({ length: config.firstConnects }, (_, i) => `first-${i}`),
    ];
    say(`Creating ${names.length} broker clients through the API …`);
    await guarded(createClients(url, token, teamId, names));

    const platform: Broker = {
      name: "platform",
      url: `mqtt://127.0.0.1:${mqttPort}`,
      pid: api.pid,
      username: (name) => `${name}@${teamId}`,
    };
    const bare: Broker = {
      name: "bare aedes",
      url: `mqtt://127.0.0.1:${barePort}`,
      pid: bareProcess.pid,
      username: (name) => name,
    };
    const rows = await measure([platform, bare], config);

    const dbKind = config.databaseUrl ? "postgres" : "pglite";
    const header =
      `### ${machine.date!.toString().slice(0, 10)}, MQTT, ${db.version}\n\n` +
      `Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, ${machine.memory}; commit ${machine.commit}; ` +
      `${config.duration} s per timed run after ${config.warmup} s warm-up, ${config.concurrency} concurrent loops, ` +
      `${config.firstConnects} first connects, ${config.window} publishes in flight per publisher.`;
    const table = markdown(rows, header);
    say(`\n${table}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const base = join(
      RESULTS_DIR,
      `${machine.date!.toString().slice(0, 10)}-mqtt-${dbKind}${config.label ? `-${config.label}` : ""}`,
    );
    const minutes = Math.round(((Date.now() - started) / 60_000) * 10) / 10;
    await writeFile(
      `${base}.json`,
      `${JSON.stringify({ machine, database: db.version, settings: { ...config, databaseUrl: undefined }, minutes, rows }, null, 2)}\n`,
    );
    await writeFile(`${base}.md`, `# Flowplane MQTT benchmark\n\n${table}`);
    say(`Wrote ${base}.json and ${base}.md (${minutes} min).`);
  } catch (error) {
    if (api) {
      const log = await readFile(api.logFile, "utf8").catch(() => "");
      if (log.trim())
        say(`\nServer output (last lines):\n${log.split("\n").slice(-20).join("\n")}`);
    }
    throw error;
  } finally {
    await stopAll();
    await db
      ?.drop()
      .catch((error: unknown) => say(`could not drop the database: ${String(error)}`));
    await rm(work, { recursive: true, force: true });
  }
}

runBench("bench:mqtt", failing, () => main(configOrExit(() => loadMqttConfig())));
