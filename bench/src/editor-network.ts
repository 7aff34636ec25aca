// `pnpm bench:editor-network`: what issue 32's isolation costs an instance. (a) The start (from
// `driver.start` until it resolves: Node-RED answering on its editor socket) of the same sandboxed
// Node-RED with a network namespace of its own (pasta) and sharing the host's
// (LocalDriverOptions.network "host"), in turns. (b) An editor request through the platform's
// proxy (`<name>.localhost:<port>`, the real server from apps/api/src with an instance it runs)
// against the same request sent straight to the editor's Unix socket, with autocannon over
// loopback, in turns: the editor's page and its small sign-in JSON. Writes
// results/<date>-editor-network.{json,md}. See README.md.
import { LocalDriver, NODE_RED_VERSION } from "@flowplane/runtime";
import autocannon, { type Result } from "autocannon";
import { request as httpRequest } from "node:http";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { BENCH_DIR, ROOT, machineInfo } from "./machine";
import { freePort, startNode, stopAll } from "./processes";

const RESULTS_DIR = join(BENCH_DIR, "results");
/** The PATH instances and the server get (the system's tools: bwrap, pasta, ip). */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const say = (text: string) => process.stdout.write(`${text}\n`);

function option(name: string, fallback: number): number {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  const value = given ? Number(given.slice(name.length + 3)) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number`);
  return value;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** One HTTP request over TCP to 127.0.0.1 (any Host) or a Unix socket: status and body. */
function call(
  target: { port: number; host?: string } | { socketPath: string },
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const where =
      "socketPath" in target
        ? { socketPath: target.socketPath }
        : { host: "127.0.0.1", port: target.port };
    const headers = { ...options.headers };
    if ("port" in target && target.host) headers.host = target.host;
    const req = httpRequest({ ...where, method, path, headers, timeout: 30_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.end(options.body);
  });
}

// --- (a) the start, with a network namespace of its own and with the host's

async function startOnce(driver: LocalDriver, round: number): Promise<number> {
  const id = `bench-net-${round}-${Math.random().toString(36).slice(2, 10)}`;
  const spec = {
    id,
    name: id,
    teamId: "bench",
    nodeRedVersion: NODE_RED_VERSION,
    env: {},
    // Node-RED on its own (file storage, no sign-in): the runtime's own way, no platform needed.
    platformUrl: "",
    token: "",
  };
  await driver.create(spec);
  const started = performance.now();
  await driver.start(spec);
  const startMs = performance.now() - started;
  const { endpoint } = await driver.status(id);
  const settings = await call(endpoint!, "GET", "/settings");
  if (settings.status !== 200) throw new Error(`the editor answered ${settings.status}`);
  await driver.stop(id);
  await driver.remove(id);
  return startMs;
}

async function startTimes(root: string, rounds: number) {
  const baseEnv = { PATH: SYSTEM_PATH };
  const own = new LocalDriver({ root: join(root, "own"), baseEnv });
  const host = new LocalDriver({ root: join(root, "host"), baseEnv, network: "host" });
  try {
    const isolation = { own: await own.isolation(), host: await host.isolation() };
    say(`Isolation: own ${JSON.stringify(isolation.own)}; host ${JSON.stringify(isolation.host)}`);
    if (isolation.own.network !== "own") {
      throw new Error(`no network namespace on this machine: ${isolation.own.reason}`);
    }
    // One of each first, unmeasured: the disk cache holds Node-RED's files for both alike.
    await startOnce(own, 0);
    await startOnce(host, 0);
    const samples = { own: [] as number[], host: [] as number[] };
    for (let round = 1; round <= rounds; round++) {
      // In turns, so that a change in the machine's load touches both alike.
      for (const [kind, driver] of [
        ["own", own],
        ["host", host],
      ] as const) {
        const ms = await startOnce(driver, round);
        samples[kind].push(ms);
        say(`start, network ${kind.padEnd(4)} round ${round}: ${ms.toFixed(0)} ms`);
      }
    }
    return { isolation, samples, own: median(samples.own), host: median(samples.host) };
  } finally {
    await own.close();
    await host.close();
  }
}

// --- (b) an editor request through the platform's proxy and straight to the editor's socket

async function platformWithInstance(dataDir: string) {
  await mkdir(dataDir, { recursive: true });
  const port = await freePort();
  const server = startNode(
    ["--enable-source-maps", "--import", "tsx", "src/main.ts"],
    {
      cwd: join(ROOT, "apps", "api"),
      env: {
        PATH: SYSTEM_PATH,
        NODE_ENV: "production",
        LOG_LEVEL: "warn",
        HOST: "127.0.0.1",
        PORT: String(port),
        BASE_URL: `http://127.0.0.1:${port}`,
        DATA_DIR: dataDir,
        DATABASE: "pglite",
        INSTANCE_DRIVER: "local",
      },
      logFile: join(dataDir, "server.log"),
      name: "the API server",
    },
    (error) => {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    },
  );
  const deadline = Date.now() + 240_000;
  for (;;) {
    const ready = await call({ port }, "GET", "/readyz").catch(() => ({ status: 0, body: "" }));
    if (ready.status === 200) break;
    if (Date.now() > deadline) throw new Error("the server did not become ready");
    await sleep(200);
  }
  const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
  const api = async (method: string, path: string, body?: unknown, bearer = token) => {
    const reply = await call({ port }, method, path, {
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status}`);
    return JSON.parse(reply.body || "{}") as Record<string, unknown>;
  };
  const team = await api("POST", "/api/v1/teams", { name: "Bench" });
  const application = await api("POST", "/api/v1/applications", {
    name: "Bench",
    teamId: team.id,
  });
  const name = "bench-editor";
  const project = await api("POST", "/api/v1/projects", {
    name,
    applicationId: application.id,
  });
  const id = project.id as string;
  for (;;) {
    const status = (await api("GET", `/api/v1/projects/${id}/status`)) as {
      meta: { state: string };
    };
    if (status.meta.state === "running") break;
    if (Date.now() > deadline) {
      const log = await readFile(join(dataDir, "server.log"), "utf8").catch(() => "");
      throw new Error(
        `the instance is ${status.meta.state}; the server's log:\n${log.slice(-3000)}`,
      );
    }
    await sleep(200);
  }
  const host = `${name}.localhost:${port}`;
  const socketPath = join(dataDir, "instances", id, "editor.sock");
  return { server, port, host, socketPath };
}

function cannon(
  options: { path: string; seconds: number } & (
    { socketPath: string } | { port: number; host: string }
  ),
) {
  return new Promise<Result>((resolve, reject) => {
    const target =
      "socketPath" in options
        ? { url: `http://localhost${options.path}`, socketPath: options.socketPath }
        : {
            url: `http://127.0.0.1:${options.port}${options.path}`,
            headers: { host: options.host },
          };
    autocannon({ ...target, connections: 10, duration: options.seconds }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

interface Run {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

const summary = (result: Result): Run => ({
  rps: result.requests.average,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
});

async function proxyCost(dataDir: string, seconds: number, rounds: number) {
  const platform = await platformWithInstance(dataDir);
  try {
    // Answered by Node-RED without a session: its editor page and its sign-in description.
    const paths = { "editor page GET /": "/", "GET /auth/login (small JSON)": "/auth/login" };
    const results: Record<string, { direct: Run[]; proxy: Run[] }> = {};
    for (const [label, path] of Object.entries(paths)) {
      const direct = { path, seconds, socketPath: platform.socketPath };
      const proxy = { path, seconds, port: platform.port, host: platform.host };
      // Warm-up of each, unmeasured.
      await cannon({ ...direct, seconds: 1 });
      await cannon({ ...proxy, seconds: 1 });
      results[label] = { direct: [], proxy: [] };
      for (let round = 1; round <= rounds; round++) {
        for (const [kind, run] of [
          ["direct", () => cannon(direct)],
          ["proxy", () => cannon(proxy)],
        ] as const) {
          const result = summary(await run());
          results[label][kind].push(result);
          say(
            `${label}, ${kind.padEnd(6)} round ${round}: ${result.rps.toFixed(0)} req/s, ` +
              `p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
          );
        }
      }
    }
    return results;
  } finally {
    await platform.server.stop();
  }
}

async function main() {
  const rounds = option("rounds", 3);
  const seconds = option("duration", 4);
  // A short path: instances' Unix sockets lie under it, and a socket's path has 107 bytes at most.
  const root = await mkdtemp(join(tmpdir(), "fpbn-"));
  // Passable to instances' own user ids, as a platform's DATA_DIR is.
  await chmod(root, 0o711);
  try {
    const starts = process.argv.includes("--proxy-only")
      ? undefined
      : await startTimes(join(root, "drivers"), rounds);
    const proxy = await proxyCost(join(root, "p"), seconds, rounds);
    const machine = machineInfo();
    const ratio = (a: number, b: number) => `${((a / b) * 100).toFixed(0)} %`;
    const lines = [
      `Medians of ${rounds} rounds each, in turns; Node-RED ${NODE_RED_VERSION}, ${machine.node}, ` +
        `${machine.cpus} × ${machine.cpuModel}, ${machine.memory}, commit ${machine.commit}, ` +
        `${machine.date}. Load average at the end: ${loadavg()
          .map((load) => load.toFixed(1))
          .join(", ")} (the machine's other work is in these figures too).`,
      "",
      ...(starts
        ? [
            "| start (until the editor answers) | own network (pasta) | host's network | own / host |",
            "| --- | --- | --- | --- |",
            `| sandboxed Node-RED | ${starts.own.toFixed(0)} ms | ${starts.host.toFixed(0)} ms | ${ratio(starts.own, starts.host)} |`,
            "",
          ]
        : []),
      `autocannon, 10 connections, ${seconds} s per run, loopback; the proxy's Host is ` +
        "`bench-editor.localhost:<port>`, the direct runs connect to the editor's socket.",
      "",
      "| request | direct req/s | proxy req/s | proxy / direct | direct p99 | proxy p99 |",
      "| --- | --- | --- | --- | --- | --- |",
      ...Object.entries(proxy).map(([label, runs]) => {
        const of = (kind: "direct" | "proxy", key: keyof Run) =>
          median(runs[kind].map((run) => run[key]));
        return `| ${label} | ${of("direct", "rps").toFixed(0)} | ${of("proxy", "rps").toFixed(0)} | ${ratio(
          of("proxy", "rps"),
          of("direct", "rps"),
        )} | ${of("direct", "p99")} ms | ${of("proxy", "p99")} ms |`;
      }),
    ];
    const table = lines.join("\n");
    say(`\n${table}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const name = `${String(machine.date).slice(0, 10)}-editor-network`;
    await writeFile(
      join(RESULTS_DIR, `${name}.json`),
      `${JSON.stringify({ machine, rounds, seconds, starts, proxy }, null, 2)}\n`,
    );
    await writeFile(join(RESULTS_DIR, `${name}.md`), `${table}\n`);
    say(`\nWritten: results/${name}.json and .md`);
  } finally {
    await stopAll();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  await stopAll();
  process.exit(1);
});
