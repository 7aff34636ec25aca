// The local driver with a real Node-RED: it starts and answers on a loopback port from the range,
// takes a flow through its admin API, sees its environment after a restart, stops, crashes,
// suspends, is found again by a new driver (the platform restarted) and is removed without a trace.
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceSpec, RuntimeStatus } from "../driver";
import { LocalDriver, NODE_RED_VERSION } from "./driver";

let root: string;
let driver: LocalDriver;
const changes: [string, RuntimeStatus][] = [];
// A window of ports unlikely to be in use; the driver skips any that are.
const min = 20_000 + Math.floor(Math.random() * 400) * 100;
const ports = { min, max: min + 49 };

const spec = (id: string, env: Record<string, string> = {}): InstanceSpec => ({
  id,
  name: id,
  nodeRedVersion: NODE_RED_VERSION,
  env,
  platformUrl: "",
  token: "fpi_unused",
});

function newDriver() {
  const created = new LocalDriver({ root, ports, startTimeoutMs: 45_000, stopGraceMs: 5_000 });
  created.onStateChange((id, status) => changes.push([id, status]));
  return created;
}

/** An HTTP-in flow answering GET /env with the value of the instance's GREETING variable. */
const GREETING_FLOW = [
  { id: "tab1", type: "tab", label: "Flow 1" },
  { id: "in1", type: "http in", z: "tab1", url: "/env", method: "get", wires: [["fn1"]] },
  {
    id: "fn1",
    type: "function",
    z: "tab1",
    func: 'msg.payload = env.get("GREETING") || "none"; return msg;',
    outputs: 1,
    wires: [["out1"]],
  },
  { id: "out1", type: "http response", z: "tab1", wires: [] },
];

/** Node-RED renames its process ("node-red"): found by the port the driver gave it instead. */
async function pidListeningOn(port: string): Promise<number> {
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    if (environ.split("\0").includes(`FLOWPLANE_NODE_RED_PORT=${port}`)) return Number(name);
  }
  throw new Error(`no process has port ${port}`);
}

/** What the flow's GET /env answers once Node-RED has started the flows (just after it listens). */
async function greeting(url: string | null): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await fetch(`${url}/env`);
    if (response.status === 200 || Date.now() > deadline) return response.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function waitFor<T>(check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "flowplane-runtime-"));
  driver = newDriver();
});
afterAll(async () => {
  await driver?.close();
  await rm(root, { recursive: true, force: true });
});

describe("the local driver", { timeout: 120_000 }, () => {
  it("runs a real Node-RED on a loopback port of the range, which takes a flow and sees its env after a restart", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    expect((await driver.status(id)).state).toBe("absent");
    await driver.create(spec(id));
    const created = await driver.status(id);
    expect(created).toEqual({ state: "stopped", url: expect.stringMatching(/^http:/) });

    await driver.start(spec(id, { GREETING: "hello" }));
    const status = await driver.status(id);
    expect(status).toEqual({ state: "running", url: created.url });
    const url = new URL(status.url!);
    expect(url.hostname).toBe("127.0.0.1");
    expect(Number(url.port)).toBeGreaterThanOrEqual(ports.min);
    expect(Number(url.port)).toBeLessThanOrEqual(ports.max);

    const settings = await fetch(`${status.url}/settings`);
    expect(settings.status).toBe(200);
    expect(((await settings.json()) as { version: string }).version).toBe(NODE_RED_VERSION);

    const deployed = await fetch(`${status.url}/flows`, {
      method: "POST",
      headers: { "content-type": "application/json", "Node-RED-Deployment-Type": "full" },
      body: JSON.stringify(GREETING_FLOW),
    });
    expect(deployed.status).toBe(204);
    expect(await greeting(status.url)).toBe("hello");

    // Created again (as the platform does before every start): the running one keeps its port.
    await driver.create(spec(id));
    expect((await driver.status(id)).url).toBe(status.url);
    await driver.restart(spec(id, { GREETING: "bonjour" }));
    const again = await driver.status(id);
    expect(again).toEqual({ state: "running", url: status.url });
    expect(await greeting(again.url)).toBe("bonjour");
  });

  it("keeps Node-RED's output as log entries, paged by their timestamps", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    const { entries } = await driver.logs(id, { limit: 1000 });
    expect(entries.some((e) => e.level === "system" && e.msg.startsWith("Starting Node-RED"))).toBe(
      true,
    );
    expect(entries.some((e) => e.level === "info" && e.msg.startsWith("Server now running"))).toBe(
      true,
    );
    for (let i = 1; i < entries.length; i++) {
      expect(entries[i]!.ts).toBeGreaterThan(entries[i - 1]!.ts);
    }

    const newest = await driver.logs(id, { limit: 3 });
    expect(newest.entries).toEqual(entries.slice(-3));
    const older = await driver.logs(id, {
      cursor: newest.entries[0]!.ts,
      backwards: true,
      limit: 3,
    });
    expect(older.entries).toEqual(entries.slice(-6, -3));
    const after = await driver.logs(id, { cursor: older.entries[0]!.ts, limit: 2 });
    expect(after.entries).toEqual(entries.slice(-5, -3));
  });

  it("stops (nothing answers on the port) and starts again on the same port", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    const { url } = await driver.status(id);
    await driver.stop(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", url });
    await expect(fetch(`${url}/settings`)).rejects.toThrow();

    await driver.start(spec(id, { GREETING: "bonjour" }));
    expect(await driver.status(id)).toEqual({ state: "running", url });
    // The flow was kept in its user directory.
    expect(await greeting(url)).toBe("bonjour");
  });

  it("reports a Node-RED that dies on its own as crashed, with why, in its status and log", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    changes.length = 0;
    process.kill(await pidListeningOn(new URL((await driver.status(id)).url!).port), "SIGKILL");

    const crashed = await waitFor(() => changes.find(([, s]) => s.state === "crashed"));
    expect(crashed).toEqual([
      id,
      { state: "crashed", url: expect.stringMatching(/^http:/), detail: "killed by SIGKILL" },
    ]);
    expect(await driver.status(id)).toEqual(crashed[1]);
    const { entries } = await driver.logs(id, { limit: 5 });
    expect(entries.at(-1)).toMatchObject({
      level: "system",
      msg: "Node-RED exited unexpectedly (killed by SIGKILL)",
    });
    // Asked to stop, a crashed instance is stopped.
    await driver.stop(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", url: crashed[1].url });
  });

  it("serializes calls on one instance: start, stop and start at once end running", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    await Promise.all([
      driver.start(spec(id)),
      driver.stop(id),
      driver.start(spec(id, { GREETING: "last" })),
    ]);
    const status = await driver.status(id);
    expect(status.state).toBe("running");
    expect(await greeting(status.url)).toBe("last");
  });

  it("suspends (the port is released), and a new driver on the same directory finds it with its log", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    await driver.suspend(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", url: null });
    await expect(stat(join(root, id, "port"))).rejects.toThrow();

    await driver.close();
    driver = newDriver();
    expect(await driver.status(id)).toEqual({ state: "stopped", url: null });
    const { entries } = await driver.logs(id, { limit: 1000 });
    expect(entries.some((e) => e.msg === "Node-RED exited unexpectedly (killed by SIGKILL)")).toBe(
      true,
    );
  });

  it("removes an instance: process, files and log gone", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    await driver.start(spec(id));
    const { url } = await driver.status(id);
    await driver.remove(id);

    expect(await driver.status(id)).toEqual({ state: "absent", url: null });
    await expect(fetch(`${url}/settings`)).rejects.toThrow();
    expect(await readdir(root)).not.toContain(id);
    expect((await driver.logs(id, { limit: 10 })).entries).toEqual([]);
  });

  it("refuses a Node-RED version it does not ship, an instance never created, and a bad id", async () => {
    await expect(driver.create({ ...spec("other"), nodeRedVersion: "3.1.0" })).rejects.toThrow(
      `the local driver runs Node-RED ${NODE_RED_VERSION}, not 3.1.0`,
    );
    await expect(driver.start(spec("never-created"))).rejects.toThrow("was not created");
    await expect(driver.status("../etc")).rejects.toThrow("not an instance id");
  });
});
