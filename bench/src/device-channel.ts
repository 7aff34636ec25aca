// `pnpm bench:devices`: the devices' live channel with many agents connected. Builds and starts
// the API server (its embedded broker) as a child process, creates N devices through the API,
// connects N lean simulated agents from this process (MQTT.js clients speaking the agent's
// protocol), and measures: how long the connects take, the PSS of every process the platform
// started with 0 and with N devices connected (so the memory per connected device), and the push
// latency: from the API call that changes a target to each device receiving its `update`, set
// against an authenticated GET's round trip measured in the same run (the machine is noisy).
// Writes results/<date>-device-channel[-<label>].{json,md}. See README.md, "The devices' channel".
import mqtt, { type MqttClient } from "mqtt";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { apiCaller, configOrExit, failure, prepare, runBench, startApiServer } from "./api-bench";
import { type DevicesBenchConfig, loadDevicesConfig } from "./env";
import { BENCH_DIR, machineInfo } from "./machine";
import { pssOf, rssOf, stopAll } from "./processes";

const RESULTS_DIR = join(BENCH_DIR, "results");

const say = (text: string) => process.stdout.write(`${text}\n`);

const config = configOrExit(() => loadDevicesConfig());
const failing = failure();
const { guarded } = failing;

/** What the bench reads of the API's replies. */
interface Reply {
  id: string;
  onlineStatus?: string;
  status?: string;
  credentials: { broker: { url: string; username: string; password: string } };
}

/** The agent reduced to what the channel needs: its command topic, status, and `update`s. */
class LeanAgent {
  /** When each snapshot's `update` arrived (performance.now()). */
  readonly updates = new Map<string | null, number>();
  private readonly waiting = new Map<string | null, () => void>();
  private constructor(
    readonly client: MqttClient,
    readonly topic: (leaf: string) => string,
  ) {
    client.on("message", (_topic, body) => {
      const command = JSON.parse(body.toString()) as { command: string; snapshot?: string | null };
      if (command.command !== "update") return;
      const snapshot = command.snapshot ?? null;
      this.updates.set(snapshot, performance.now());
      this.waiting.get(snapshot)?.();
      this.waiting.delete(snapshot);
      // As the agent does once it has deployed: it reports that it runs what it was told.
      void this.status({ ...command, state: snapshot ? "running" : "stopped" });
    });
  }

  static async connect(broker: { url: string; username: string; password: string }) {
    const client = mqtt.connect(broker.url, {
      clientId: broker.username,
      username: broker.username,
      password: broker.password,
      protocolVersion: 4,
      reconnectPeriod: 0,
      keepalive: 60,
      connectTimeout: 60_000,
    });
    await new Promise<void>((resolve, reject) => {
      client.once("connect", () => resolve());
      client.once("error", reject);
    });
    const [, teamId, deviceId] = broker.username.split(":");
    const agent = new LeanAgent(client, (leaf) => `ff/v1/${teamId}/d/${deviceId}/${leaf}`);
    await client.subscribeAsync(agent.topic("command"));
    return agent;
  }

  status(state: Record<string, unknown>): Promise<unknown> {
    const { project = null, application = null, snapshot = null, settings = null } = state;
    const body = { state: state.state, project, application, snapshot, settings };
    return this.client.publishAsync(
      this.topic("status"),
      JSON.stringify({ ...body, agentVersion: "4.2.1" }),
      { qos: 1 },
    );
  }

  /** Resolves when the `update` naming `snapshot` has arrived (at once if it has). */
  updated(snapshot: string | null): Promise<void> {
    if (this.updates.has(snapshot)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(snapshot, resolve));
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
};
const stats = (values: number[]) => ({
  n: values.length,
  min: Math.min(...values),
  p50: percentile(values, 0.5),
  p95: percentile(values, 0.95),
  max: Math.max(0, ...values),
});
type Stats = ReturnType<typeof stats>;

/** `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>) {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]!);
    }),
  );
  return out;
}

/** The median PSS (and RSS) of the platform's processes over a few samples: robust to GC peaks. */
async function memory(pid: number, samples = 9): Promise<{ pss: number; rss: number }> {
  const pss: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < samples; i++) {
    pss.push((await pssOf(pid)) ?? 0);
    rss.push((await rssOf(pid)) ?? 0);
    await sleep(300);
  }
  return { pss: percentile(pss, 0.5), rss: percentile(rss, 0.5) };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-devices-"));
  const agents: LeanAgent[] = [];
  try {
    const {
      server: api,
      url,
      token,
    } = await startApiServer({
      work,
      database: { DATABASE: config.database },
      readyMs: 180_000,
      run: failing,
    });
    const call = apiCaller<Reply>(url, token);
    const idle = await memory(api.pid);

    const team = await call("POST", "/api/v1/teams", { name: "Devices bench" });
    const app = await call("POST", "/api/v1/applications", { name: "Fleet", teamId: team.id });
    say(`Creating ${config.devices} devices through the API …`);
    const t0 = performance.now();
    const devices = await guarded(
      pool(
        Array.from({ length: config.devices }, (_, i) => i),
        Math.min(config.concurrency, 8),
        async (i) => {
          const device = await call("POST", "/api/v1/devices", {
            name: `bench-${i}`,
            team: team.id,
            application: app.id,
          });
          return { id: device.id, broker: device.credentials.broker };
        },
      ),
    );
    const createSeconds = (performance.now() - t0) / 1000;
    const snapshots = await Promise.all(
      ["A", "B"].map(
        async (name) =>
          (
            await call("POST", "/api/v1/snapshots/import", {
              ownerType: "device",
              ownerId: devices[0]!.id,
              snapshot: {
                name,
                flows: { flows: [{ id: name, type: "tab", label: name }] },
                settings: {},
              },
            })
          ).id,
      ),
    );
    const zero = await memory(api.pid);

    say(`Connecting ${config.devices} agents, ${config.concurrency} at a time …`);
    const connectTimes: number[] = [];
    const readyTimes: number[] = [];
    const c0 = performance.now();
    await guarded(
      pool(devices, config.concurrency, async (device) => {
        const t = performance.now();
        const agent = await LeanAgent.connect(device.broker);
        connectTimes.push(performance.now() - t);
        agents.push(agent);
        // The agent's first status, as it starts ("unknown"): the platform answers with an update.
        await agent.status({ state: "unknown" });
        await agent.updated(null);
        readyTimes.push(performance.now() - t);
      }),
    );
    const connectSeconds = (performance.now() - c0) / 1000;
    const connected = await memory(api.pid);
    const online = await call("GET", `/api/v1/devices/${devices.at(-1)!.id}`);

    say("Timing a GET's round trip (the baseline) …");
    const gets: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await call("GET", `/api/v1/devices/${devices[i % devices.length]!.id}`);
      gets.push(performance.now() - t);
    }

    say(`Single devices: ${config.rounds * 10} target changes …`);
    const byAgent = new Map(agents.map((agent) => [agent.topic(""), agent]));
    const agentOf = (device: { broker: { username: string } }) => {
      const [, teamId, deviceId] = device.broker.username.split(":");
      return byAgent.get(`ff/v1/${teamId}/d/${deviceId}/`)!;
    };
    const single: number[] = [];
    const singleCalls: number[] = [];
    for (let i = 0; i < config.rounds * 10; i++) {
      const device = devices[i % devices.length]!;
      const agent = agentOf(device);
      const snapshot = snapshots[0]!;
      const t = performance.now();
      await call("PUT", `/api/v1/devices/${device.id}`, { targetSnapshot: snapshot });
      singleCalls.push(performance.now() - t);
      await guarded(agent.updated(snapshot));
      single.push(agent.updates.get(snapshot)! - t);
    }

    say(`A group of all ${config.devices}: ${config.rounds} target changes …`);
    const groups = `/api/v1/applications/${app.id}/device-groups`;
    const group = await call("POST", groups, { name: "all" });
    // The API takes at most 500 devices per change of members.
    for (let i = 0; i < devices.length; i += 500) {
      const add = devices.slice(i, i + 500).map((device) => device.id);
      await call("PATCH", `${groups}/${group.id}`, { add });
    }
    const fleet: number[] = [];
    const fleetLast: number[] = [];
    const fleetCalls: number[] = [];
    for (let round = 0; round < config.rounds; round++) {
      const snapshot = snapshots[(round + 1) % 2]!;
      for (const agent of agents) agent.updates.delete(snapshot);
      const t = performance.now();
      await call("PUT", `${groups}/${group.id}`, { targetSnapshotId: snapshot });
      fleetCalls.push(performance.now() - t);
      await guarded(Promise.all(agents.map((agent) => agent.updated(snapshot))));
      const arrivals = agents.map((agent) => agent.updates.get(snapshot)! - t);
      fleet.push(...arrivals);
      fleetLast.push(Math.max(...arrivals));
      // The members' statuses (one write each) settle before the next round's change.
      await sleep(3_000);
    }
    const after = await memory(api.pid);

    const result = {
      machine,
      settings: config,
      minutes: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
      createSeconds,
      connect: {
        seconds: connectSeconds,
        perSecond: config.devices / connectSeconds,
        connack: stats(connectTimes),
        ready: stats(readyTimes),
      },
      onlineStatus: online.onlineStatus ?? online.status,
      memory: {
        idle,
        zero,
        connected,
        afterPushes: after,
        perDevicePss: (connected.pss - zero.pss) / config.devices,
        perDevicePssAfterPushes: (after.pss - zero.pss) / config.devices,
      },
      get: stats(gets),
      single: { update: stats(single), call: stats(singleCalls) },
      group: { update: stats(fleet), last: stats(fleetLast), call: stats(fleetCalls) },
    };
    const md = markdown(result);
    say(`\n${md}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const base = join(
      RESULTS_DIR,
      `${machine.date!.toString().slice(0, 10)}-device-channel${config.label ? `-${config.label}` : ""}`,
    );
    await writeFile(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
    await writeFile(`${base}.md`, md);
    say(`Wrote ${base}.json and ${base}.md (${result.minutes} min).`);
  } finally {
    await Promise.all(agents.map((agent) => agent.client.endAsync(true).catch(() => {})));
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

const mib = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
const ms = (value: number) => value.toFixed(1);
const row = (what: string, s: Stats, base?: Stats) =>
  `| ${what} | ${s.n} | ${ms(s.min)} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.max)} | ${base ? `${(s.p50 / base.p50).toFixed(1)} ×` : ""} |`;

function markdown(r: {
  machine: Record<string, string | number>;
  settings: DevicesBenchConfig;
  createSeconds: number;
  connect: { seconds: number; perSecond: number; connack: Stats; ready: Stats };
  onlineStatus: unknown;
  memory: Record<"idle" | "zero" | "connected" | "afterPushes", { pss: number; rss: number }> & {
    perDevicePss: number;
    perDevicePssAfterPushes: number;
  };
  get: Stats;
  single: { update: Stats; call: Stats };
  group: { update: Stats; last: Stats; call: Stats };
}): string {
  const { machine: m, settings: s, memory: mem } = r;
  const n = s.devices;
  return [
    `### ${String(m.date).slice(0, 10)}, the devices' channel: ${n} simulated agents, ${s.database}`,
    "",
    `Node ${m.node}, ${m.cpus} × ${m.cpuModel}, ${m.memory}; commit ${m.commit}; ${s.rounds} group rounds, ${s.rounds * 10} single changes, ${s.concurrency} connects at a time.`,
    "",
    `Devices created through the API in ${r.createSeconds.toFixed(1)} s. ${n} agents connected in ${r.connect.seconds.toFixed(1)} s (${r.connect.perSecond.toFixed(0)}/s); the last one shows \`${String(r.onlineStatus)}\`.`,
    "",
    "| Memory of the platform's processes | PSS MiB | RSS MiB |",
    "| --- | ---: | ---: |",
    `| started, nothing created | ${mib(mem.idle.pss)} | ${mib(mem.idle.rss)} |`,
    `| ${n} devices created, 0 connected (the baseline) | ${mib(mem.zero.pss)} | ${mib(mem.zero.rss)} |`,
    `| ${n} connected | ${mib(mem.connected.pss)} | ${mib(mem.connected.rss)} |`,
    `| ${n} connected, after the pushes | ${mib(mem.afterPushes.pss)} | ${mib(mem.afterPushes.rss)} |`,
    "",
    `PSS per connected device: ${(mem.perDevicePss / 1024).toFixed(1)} KiB (${(mem.perDevicePssAfterPushes / 1024).toFixed(1)} KiB after the pushes).`,
    "",
    "| Latency (ms) | n | min | p50 | p95 | max | p50 vs the GET |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    row("GET /api/v1/devices/{id} round trip (the baseline)", r.get),
    row("CONNECT → CONNACK → SUBACK, per agent", r.connect.connack),
    row("… → first status → its `update` received", r.connect.ready),
    row("PUT /devices/{id} (targetSnapshot): the call", r.single.call, r.get),
    row("PUT /devices/{id} → the device's `update`", r.single.update, r.get),
    row(`PUT group target (${n} members): the call`, r.group.call, r.get),
    row(`PUT group target → each member's \`update\``, r.group.update, r.get),
    row("PUT group target → the last member's `update`, per round", r.group.last, r.get),
    "",
  ].join("\n");
}

runBench("bench:devices", failing, main);
