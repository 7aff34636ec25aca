// The real FlowFuse device agent (4.2.1, from ../shared/clients/, or DEVICE_AGENT_TGZ) for the
// tests that run it: installed once outside the repository, started with a device.yml written from
// a configuration (or a directory that holds one), stopped with its Node-RED, and asked for the
// flow its Node-RED serves (`helloFlow`: GET /hello answers what that Node-RED was given); or with
// the agent's module cache (`moduleCache`, `startCached`): Node-RED installed once for all of them,
// no npm on each snapshot. A machine without the agent's package skips those tests; CI fails instead.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { deviceAgentPackage, inCI, inheritedEnv } from "./env";
import { expect } from "vitest";
import { freePort, type TestServer } from "./harness";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const PACKAGE = "flowfuse-device-agent-4.2.1.tgz";

/** The agent's package, when this machine has it. */
export const agentPackage = [
  deviceAgentPackage,
  join(repository, "..", "shared", "clients", PACKAGE),
  join("/work/shared/clients", PACKAGE),
].find((path): path is string => path !== undefined && existsSync(path));

if (!agentPackage && inCI) {
  throw new Error(`the device agent's package (${PACKAGE}) is not found: set DEVICE_AGENT_TGZ`);
}

export const run = promisify(execFile);

/** A running agent: its process, the port its Node-RED listens on, its directory, its output. */
export interface Agent {
  process: ChildProcess;
  port: number;
  dir: string;
  output: string[];
}

/**
 * Node-RED's flow: GET /hello answers `label`, the device's name and snapshot, two variables and a
 * credential. `inline` keeps the credential on its node, as the editor deploys it (Node-RED keeps it
 * encrypted); without, it goes in `credentials` (as a snapshot takes it).
 */
export function helloFlows(label: string, inline = true) {
  const tab = "tab1";
  const credentials = { map: { SECRET: `secret-of-${label}` } };
  return [
    { id: tab, type: "tab", label },
    {
      id: "cfg1",
      type: "global-config",
      env: [{ name: "SECRET", value: "", type: "cred" }],
      ...(inline && { credentials }),
    },
    { id: "in1", type: "http in", z: tab, url: "/hello", method: "get", wires: [["chg1"]] },
    {
      id: "chg1",
      type: "change",
      z: tab,
      rules: [
        {
          t: "set",
          p: "payload",
          pt: "msg",
          to: `{"flows":"${label}","device":$env("FF_DEVICE_NAME"),"snapshot":$env("FF_SNAPSHOT_ID"),"snapEnv":$env("FROM_SNAPSHOT"),"settingsEnv":$env("FROM_SETTINGS"),"secret":$env("SECRET")}`,
          tot: "jsonata",
        },
      ],
      wires: [["out1"]],
    },
    { id: "out1", type: "http response", z: tab, statusCode: "", headers: {}, wires: [] },
  ];
}

/** The credentials of `helloFlows(label, false)`, as a snapshot keeps them. */
export const helloCredentials = (label: string) => ({
  cfg1: { map: { SECRET: `secret-of-${label}` } },
});

/** The Node-RED a device's snapshot names: the platform's default for devices (Node 20's newest). */
export const DEVICE_NODE_RED = "4.1.15";

/**
 * A snapshot of the instance made of the content given (`POST /projects/{id}/snapshots`):
 * `label`'s flow and credential (`helloFlows`), `more` nodes, and `DEVICE_NODE_RED`; its id.
 */
export async function helloSnapshot(
  server: Pick<TestServer, "request">,
  token: string,
  instanceId: string,
  label: string,
  more: Record<string, unknown>[] = [],
) {
  const reply = await server.request("POST", `/api/v1/projects/${instanceId}/snapshots`, {
    token,
    body: {
      name: label,
      flows: [...helloFlows(label, false), ...more],
      credentials: helloCredentials(label),
      settings: { modules: { "node-red": DEVICE_NODE_RED } },
    },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

/** Installs the agent once (`install`), starts and stops agents, and removes what they left. */
export class DeviceAgents {
  private installDir = "";
  private readonly agents: Agent[] = [];
  private readonly dirs: string[] = [];

  /** The agent's package installed with npm (its dependencies from the registry). */
  async install() {
    this.installDir = await mkdtemp(join(tmpdir(), "flowplane-agent-"));
    await writeFile(
      join(this.installDir, "package.json"),
      '{"name":"agent-install","private":true}',
    );
    await run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", agentPackage!], {
      cwd: this.installDir,
      env: this.env(),
    });
  }

  /** The agent's entry point. */
  entry() {
    return join(this.installDir, "node_modules/@flowfuse/device-agent/index.js");
  }

  /** The environment it runs in: npm's cache inside the installation. */
  env() {
    return { ...inheritedEnv, npm_config_cache: join(this.installDir, "npm-cache") };
  }

  /** A device's directory (removed by `close`). */
  async deviceDir() {
    const dir = await mkdtemp(join(tmpdir(), "flowplane-device-"));
    this.dirs.push(dir);
    return dir;
  }

  /** Tracks an agent started otherwise (a setup in a terminal), for `close` to stop it. */
  track(agent: Agent) {
    this.agents.push(agent);
    return agent;
  }

  /**
   * The agent, started with the device.yml written from `config` (or the one in `dir`), polling
   * every `interval` seconds (its `-i`; over MQTT, its heartbeat).
   */
  async start(
    config: Record<string, unknown> | { dir: string },
    options: { interval?: number } = {},
  ): Promise<Agent> {
    let dir: string;
    if ("dir" in config && typeof config.dir === "string") {
      dir = config.dir;
    } else {
      dir = await this.deviceDir();
      const yaml = Object.entries(config)
        .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
        .join("\n");
      await writeFile(join(dir, "device.yml"), `${yaml}\n`, { mode: 0o600 });
    }
    const port = await freePort();
    const interval = String(options.interval ?? 1);
    const child = spawn(
      process.execPath,
      [this.entry(), "--dir", dir, "--port", String(port), "-i", interval, "--no-interactive"],
      { detached: true, stdio: ["ignore", "pipe", "pipe"], env: this.env() },
    );
    const agent = { process: child, port, dir, output: [] as string[] };
    child.stdout!.on("data", (chunk: Buffer) => agent.output.push(chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => agent.output.push(chunk.toString()));
    return this.track(agent);
  }

  /**
   * `modules` installed once with npm in a directory of their own (removed by `close`), for
   * agents started with `startCached`: the agent's module cache (`moduleCache`), which its launcher
   * links into Node-RED's directory instead of running npm on each snapshot.
   */
  async moduleCache(modules: Record<string, string>) {
    const dir = await this.deviceDir();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ name: "module-cache", private: true, dependencies: modules }),
    );
    await run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund"], {
      cwd: dir,
      env: { ...inheritedEnv, npm_config_cache: join(dir, "npm-cache") },
    });
    return join(dir, "node_modules");
  }

  /** The agent, as `start` does, with `moduleCache` on and the shared `cache` as its modules. */
  async startCached(
    config: Record<string, unknown>,
    cache: string,
    options?: { interval?: number },
  ) {
    const dir = await this.deviceDir();
    await mkdir(join(dir, "module_cache"));
    await symlink(cache, join(dir, "module_cache", "node_modules"), "dir");
    const yaml = Object.entries({ ...config, moduleCache: true })
      .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
      .join("\n");
    await writeFile(join(dir, "device.yml"), `${yaml}\n`, { mode: 0o600 });
    return this.start({ dir }, options);
  }

  /** Stops the agent (SIGTERM, which stops its Node-RED; its process group after 15 s). */
  async stop(agent: Agent) {
    if (agent.process.exitCode !== null || agent.process.signalCode !== null) return;
    const exited = new Promise((done) => agent.process.once("exit", done));
    process.kill(-agent.process.pid!, "SIGTERM");
    const timer = setTimeout(() => {
      try {
        process.kill(-agent.process.pid!, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, 15_000);
    await exited;
    clearTimeout(timer);
  }

  /** Stops every agent and removes the installation and the devices' directories. */
  async close() {
    for (const agent of this.agents) await this.stop(agent);
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
    if (this.installDir) await rm(this.installDir, { recursive: true, force: true });
  }
}

/** The device's /hello once it answers `label`'s flow (the agent polls, installs, starts). */
export async function helloOf(agent: Agent, label: string, timeoutMs = 150_000) {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (agent.process.exitCode !== null) break;
    try {
      const reply = await fetch(`http://127.0.0.1:${agent.port}/hello`);
      last = await reply.text();
      if (reply.status === 200 && JSON.parse(last).flows === label) return JSON.parse(last);
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(
    `the device did not answer ${label}'s flow (last: ${last.slice(0, 200)}); agent output:\n${agent.output.join("").slice(-3000)}`,
  );
}
