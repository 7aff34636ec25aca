// The local driver with a real Node-RED: it starts and answers on its editor's Unix socket (no TCP
// port), takes a flow through its admin API, sees its environment after a restart, stops, crashes,
// suspends, is found again by a new driver (the platform restarted) and is removed without a trace.
// All of it in the sandbox (bubblewrap, where this machine has it) and, as root with pasta, in a
// network namespace of its own; then what is particular to the sandbox (a stop that must kill,
// what the process is on the host), to its network (what a flow can reach) and to having none.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  access,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceSpec, RuntimeStatus } from "../driver";
import { LocalDriver } from "./driver";
import { DEFAULT_INSTANCE_USER_IDS, NODE_RED_VERSION } from "./options";
import { netnsName } from "./network";
import { startSandboxed } from "./sandbox";

let root: string;
let driver: LocalDriver;
/** Where the sandbox must be used: bubblewrap is installed (CI installs it). */
const sandboxExpected =
  // eslint-disable-next-line no-restricted-properties -- CI installs bubblewrap: the sandbox must be used there
  process.env.CI === "true" || spawnSync("bwrap", ["--version"]).status === 0;
const isRoot = process.getuid?.() === 0;
const hasPasta = spawnSync("sh", ["-c", "command -v pasta"]).status === 0;
/** Why instances share the host's network here (the network tests are skipped then). */
const noNetwork = !sandboxExpected
  ? "no bubblewrap"
  : !isRoot
    ? "not root"
    : !hasPasta
      ? "pasta is not installed"
      : undefined;
const changes: [string, RuntimeStatus][] = [];

const spec = (id: string, env: Record<string, string> = {}): InstanceSpec => ({
  id,
  name: id,
  teamId: "team1",
  nodeRedVersion: NODE_RED_VERSION,
  // TEST_INSTANCE finds its Node-RED among the host's processes (pidOf).
  env: { TEST_INSTANCE: id, ...env },
  platformUrl: "",
  token: "fpi_unused",
});

function newDriver() {
  const created = new LocalDriver({ root, startTimeoutMs: 45_000, stopGraceMs: 5_000 });
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

/**
 * Node-RED's host pid, found by its instance (in its environment) and its name (it calls itself
 * "node-red"; bubblewrap's processes around it carry the same environment).
 */
async function pidOf(id: string): Promise<number> {
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    const title = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (environ.split("\0").includes(`TEST_INSTANCE=${id}`) && title.startsWith("node-red")) {
      return Number(name);
    }
  }
  throw new Error(`no Node-RED runs for ${id}`);
}

interface Answer {
  status: number;
  text: string;
}

/** HTTP over the editor's socket (the status's endpoint); rejects when nothing answers there. */
function call(
  status: RuntimeStatus | string,
  path: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const socketPath = typeof status === "string" ? status : status.endpoint?.socketPath;
  if (!socketPath) return Promise.reject(new Error("no endpoint"));
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      socketPath,
      path,
      method: init.method ?? "GET",
      headers: init.headers,
      timeout: init.timeoutMs ?? 30_000,
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
    request.on("response", (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk));
      response.on("error", reject);
      response.on("end", () => resolve({ status: response.statusCode!, text }));
    });
    request.end(init.body);
  });
}

const editorSocket = (id: string) => join(root, id, "editor.sock");

/** The TCP sockets a process listens on (its network namespace's table, its own descriptors). */
async function listeningTcp(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const found: string[] = [];
  for (const table of ["tcp", "tcp6"]) {
    const text = await readFile(`/proc/${pid}/net/${table}`, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A: LISTEN; the inode is the tenth field.
      if (fields[3] === "0A" && inodes.has(fields[9]!)) found.push(`${table} ${fields[1]}`);
    }
  }
  return found;
}

/** What the flow's GET /env answers once Node-RED has started the flows (just after it listens). */
async function greeting(status: RuntimeStatus): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await call(status, "/env");
    if (response.status === 200 || Date.now() > deadline) return response.text;
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
  it("runs a real Node-RED on its editor's socket (no TCP port), which takes a flow and sees its env after a restart", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    expect((await driver.status(id)).state).toBe("absent");
    await driver.create(spec(id));
    expect(await driver.status(id)).toEqual({ state: "stopped", endpoint: null });

    await driver.start(spec(id, { GREETING: "hello" }));
    const status = await driver.status(id);
    expect(status).toEqual({ state: "running", endpoint: { socketPath: editorSocket(id) } });
    // The socket is the platform's, in the instance's directory (which the instance cannot write).
    expect((await stat(editorSocket(id))).isSocket()).toBe(true);
    expect((await stat(editorSocket(id))).mode & 0o777).toBe(0o600);

    const settings = await call(status, "/settings");
    expect(settings.status).toBe(200);
    expect((JSON.parse(settings.text) as { version: string }).version).toBe(NODE_RED_VERSION);
    // Node-RED listens on no TCP port, in whichever network it is.
    expect(await listeningTcp(await pidOf(id))).toEqual([]);

    const deployed = await call(status, "/flows", {
      method: "POST",
      headers: { "content-type": "application/json", "Node-RED-Deployment-Type": "full" },
      body: JSON.stringify(GREETING_FLOW),
    });
    expect(deployed.status).toBe(204);
    expect(await greeting(status)).toBe("hello");

    // Created again (as the platform does before every start): the running one keeps running.
    await driver.create(spec(id));
    expect(await driver.status(id)).toEqual(status);
    await driver.restart(spec(id, { GREETING: "bonjour" }));
    const again = await driver.status(id);
    expect(again).toEqual(status);
    expect(await greeting(again)).toBe("bonjour");
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

  it("says running only once Node-RED has started its flows, so a deploy right after is kept", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000004";
    await driver.create(spec(id));
    await driver.start(spec(id));
    // Read at once: what the driver had seen when it said running.
    const { entries } = await driver.logs(id, { limit: 1000 });
    expect(entries.some((e) => e.level === "info" && e.msg === "Started flows")).toBe(true);
    expect((await driver.status(id)).state).toBe("running");
    await driver.remove(id);
  });

  it("stops (its socket is gone) and starts again on the same socket path", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    const running = await driver.status(id);
    await driver.stop(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", endpoint: null });
    await expect(call(editorSocket(id), "/settings")).rejects.toThrow();
    await expect(access(editorSocket(id))).rejects.toThrow();

    await driver.start(spec(id, { GREETING: "bonjour" }));
    expect(await driver.status(id)).toEqual(running);
    // The flow was kept in its user directory.
    expect(await greeting(running)).toBe("bonjour");
  });

  it.runIf(sandboxExpected && isRoot && spawnSync("cc", ["--version"]).status === 0)(
    "runs nothing of an instance's variables as root: an LD_PRELOAD among them loads into no program that starts its sandbox",
    async () => {
      const lab = await mkdtemp(join(tmpdir(), "flowplane-preload-"));
      const library = join(lab, "preload.so");
      // The tenant's library: says under which user id it was loaded, wherever it is loaded.
      await writeFile(
        join(lab, "preload.c"),
        `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
  char path[512];
  snprintf(path, sizeof path, "${lab}/loaded-by-%d", (int)getuid());
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}
`,
      );
      const built = spawnSync("cc", ["-shared", "-fPIC", "-o", library, join(lab, "preload.c")]);
      expect(built.status, String(built.stderr)).toBe(0);
      const id = "0d6a3f4e-1111-4a4a-8a8a-0000000000ee";
      try {
        await driver.create(spec(id));
        await driver.start(spec(id, { LD_PRELOAD: library }));
        expect((await driver.status(id)).state).toBe("running");
        expect((await readdir(lab)).filter((name) => name.startsWith("loaded-by-0"))).toEqual([]);
      } finally {
        await driver.remove(id);
        await rm(lab, { recursive: true, force: true });
      }
    },
  );

  it("runs an instance whose directory is too deep for a socket's path (a clone's .data far down), its editor answering", async () => {
    const deep = join(
      await mkdtemp(join(tmpdir(), "flowplane-deep-")),
      "a-checkout-far-down-the-tree",
      "with-a-long-name",
      ".data",
    );
    const far = new LocalDriver({ root: join(deep, "instances"), startTimeoutMs: 45_000 });
    const id = "0d6a3f4e-1111-4a4a-8a8a-0000000000de";
    expect(Buffer.byteLength(join(deep, "instances", id, "editor.sock"))).toBeGreaterThan(107);
    try {
      await far.create(spec(id));
      await far.start(spec(id));
      const status = await far.status(id);
      expect(status.state).toBe("running");
      expect((await call(status, "/settings")).status).toBe(200);
    } finally {
      await far.remove(id);
      await far.close();
      await rm(dirname(dirname(dirname(deep))), { recursive: true, force: true });
    }
  });

  it("reports a Node-RED that dies on its own as crashed, with why, in its status and log", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    changes.length = 0;
    process.kill(await pidOf(id), "SIGKILL");

    const crashed = await waitFor(() => changes.find(([, s]) => s.state === "crashed"));
    expect(crashed).toEqual([
      id,
      { state: "crashed", endpoint: null, detail: "killed by SIGKILL" },
    ]);
    expect(await driver.status(id)).toEqual(crashed[1]);
    const { entries } = await driver.logs(id, { limit: 5 });
    expect(entries.at(-1)).toMatchObject({
      level: "system",
      msg: "Node-RED exited unexpectedly (killed by SIGKILL)",
    });
    // Asked to stop, a crashed instance is stopped.
    await driver.stop(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", endpoint: null });
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
    expect(await greeting(status)).toBe("last");
  });

  it("suspends (its socket is released), and a new driver on the same directory finds it with its log", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    await driver.suspend(id);
    expect(await driver.status(id)).toEqual({ state: "stopped", endpoint: null });
    await expect(access(editorSocket(id))).rejects.toThrow();

    await driver.close();
    driver = newDriver();
    expect(await driver.status(id)).toEqual({ state: "stopped", endpoint: null });
    const { entries } = await driver.logs(id, { limit: 1000 });
    expect(entries.some((e) => e.msg === "Node-RED exited unexpectedly (killed by SIGKILL)")).toBe(
      true,
    );
  });

  it("removes an instance: process, files and log gone", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000001";
    await driver.start(spec(id));
    await driver.remove(id);

    expect(await driver.status(id)).toEqual({ state: "absent", endpoint: null });
    await expect(call(editorSocket(id), "/settings")).rejects.toThrow();
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

/** Deploys a flow to a Node-RED without sign-in (no platform address). */
async function deploy(status: RuntimeStatus, flow: unknown[]) {
  const deployed = await call(status, "/flows", {
    method: "POST",
    headers: { "content-type": "application/json", "Node-RED-Deployment-Type": "full" },
    body: JSON.stringify(flow),
  });
  expect(deployed.status).toBe(204);
}

/** What a shell command prints inside the instance (SHELL_FLOW), once the flow answers. */
async function sh(status: RuntimeStatus, cmd: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = await call(status, `/sh?cmd=${encodeURIComponent(cmd)}`);
    if (answer.status === 200 || Date.now() > deadline) return answer.text;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An HTTP-in flow running the shell command of GET /sh?cmd=… with the exec node. */
const SHELL_FLOW = [
  { id: "tab1", type: "tab", label: "Flow 1" },
  { id: "in1", type: "http in", z: "tab1", url: "/sh", method: "get", wires: [["fn1"]] },
  {
    id: "fn1",
    type: "function",
    z: "tab1",
    func: "msg.payload = msg.req.query.cmd; return msg;",
    outputs: 1,
    wires: [["exec1"]],
  },
  {
    id: "exec1",
    type: "exec",
    z: "tab1",
    command: "",
    addpay: "payload",
    append: "",
    useSpawn: "false",
    timer: "",
    oldrc: false,
    wires: [["out1"], [], []],
  },
  { id: "out1", type: "http response", z: "tab1", wires: [] },
];

const hostProcesses = async () => {
  const found: { pid: number; cmdline: string }[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    found.push({ pid: Number(name), cmdline });
  }
  return found;
};

describe("the sandbox", { timeout: 120_000 }, () => {
  it.runIf(sandboxExpected)(
    "runs each Node-RED in namespaces of its own, under a host user id of its own when the platform is root",
    async () => {
      expect(await driver.isolation()).toMatchObject({
        mode: "sandbox",
        user: isRoot ? "per-instance" : "platform",
        required: false,
        network: noNetwork ? "host" : "own",
      });
      const ids = ["0d6a3f4e-1111-4a4a-8a8a-000000000002", "0d6a3f4e-1111-4a4a-8a8a-000000000003"];
      const pids: number[] = [];
      for (const id of ids) {
        await driver.create(spec(id));
        await driver.start(spec(id));
        pids.push(await pidOf(id));
      }
      const namespaces = async (pid: number | "self") =>
        Promise.all(
          ["pid", "mnt", "ipc", "uts", "user"].map((kind) => readlink(`/proc/${pid}/ns/${kind}`)),
        );
      const own = await namespaces("self");
      const [a, b] = await Promise.all(pids.map((pid) => namespaces(pid)));
      for (let i = 0; i < own.length; i++) {
        expect(a![i]).not.toBe(own[i]);
        expect(b![i]).not.toBe(a![i]);
      }
      // The network: one of each instance's own where it can be made (else the host's).
      const nets = await Promise.all(pids.map((pid) => readlink(`/proc/${pid}/ns/net`)));
      const hostNet = await readlink("/proc/self/ns/net");
      if (noNetwork) expect(nets).toEqual([hostNet, hostNet]);
      else {
        expect(nets[0]).not.toBe(hostNet);
        expect(nets[1]).not.toBe(hostNet);
        expect(nets[0]).not.toBe(nets[1]);
      }

      const uidOf = async (pid: number) =>
        Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]);
      const uids = await Promise.all(pids.map(uidOf));
      if (isRoot) {
        expect(uids[0]).not.toBe(uids[1]);
        for (const [i, uid] of uids.entries()) {
          expect(uid).toBeGreaterThan(DEFAULT_INSTANCE_USER_IDS.min);
          expect(uid).toBeLessThanOrEqual(DEFAULT_INSTANCE_USER_IDS.max);
          const userDir = await stat(join(root, ids[i]!, "userDir"));
          expect(userDir.uid).toBe(uid);
          expect(userDir.mode & 0o777).toBe(0o700);
        }
        // Nobody but the platform passes through the driver's directories: the sandbox is given
        // userDir and tmp by the platform.
        expect((await stat(root)).mode & 0o777).toBe(0o700);
        expect((await stat(join(root, ids[0]!))).mode & 0o777).toBe(0o700);
      } else {
        expect(uids).toEqual([process.getuid!(), process.getuid!()]);
      }
      for (const id of ids) await driver.remove(id);
    },
  );

  it.runIf(sandboxExpected)(
    "kills a Node-RED that does not stop in time: nothing of its sandbox is left and its port is free at once",
    async () => {
      const impatient = new LocalDriver({ root, stopGraceMs: 500 });
      const id = "0d6a3f4e-1111-4a4a-8a8a-000000000004";
      await impatient.create(spec(id));
      await impatient.start(spec(id));
      const running = await impatient.status(id);
      await deploy(running, SHELL_FLOW);
      const pid = await pidOf(id);
      const net = await readlink(`/proc/${pid}/ns/net`);

      // Once the flow answers (it starts just after the deploy is acknowledged)…
      await sh(running, "true");
      // …a process left behind in the background, then Node-RED frozen: it hears no stop.
      const seconds = 300 + Math.floor(Math.random() * 1000);
      const cmd = `sleep ${seconds} & kill -STOP $PPID`;
      await call(running, `/sh?cmd=${encodeURIComponent(cmd)}`, { timeoutMs: 1_000 }).catch(
        () => {},
      );
      await waitFor(() =>
        / T /.test(spawnSync("cat", [`/proc/${pid}/stat`]).stdout.toString()) ? true : undefined,
      );

      await impatient.stop(id);
      expect(await impatient.status(id)).toEqual({ state: "stopped", endpoint: null });
      await expect(access(editorSocket(id))).rejects.toThrow();
      const left = (await hostProcesses()).filter(
        (p) => p.pid === pid || p.cmdline === `sleep\0${seconds}\0`,
      );
      expect(left).toEqual([]);
      if (!noNetwork) {
        // Its network namespace is deleted (pasta, which served it, quits with it).
        const name = netnsName(root, id);
        expect(await readdir("/run/netns").catch(() => [])).not.toContain(name);
        const pasta = (await hostProcesses()).filter((p) => p.cmdline.includes(name));
        expect(pasta).toEqual([]);
        expect(net).not.toBe(await readlink("/proc/self/ns/net"));
      }
      const { entries } = await impatient.logs(id, { limit: 1 });
      expect(entries[0]).toMatchObject({
        level: "system",
        msg: expect.stringMatching(/^Node-RED stopped/),
      });
      await impatient.remove(id);
    },
  );

  it.runIf(sandboxExpected && isRoot)(
    "runs an instance under its own user id when DATA_DIR is under a directory closed to others (0700)",
    async () => {
      const closed = await mkdtemp(join(tmpdir(), "flowplane-runtime-closed-"));
      const shut = new LocalDriver({ root: join(closed, "data", "instances") });
      try {
        expect(await shut.isolation()).toMatchObject({
          mode: "sandbox",
          user: "per-instance",
          required: false,
        });
        const id = "0d6a3f4e-1111-4a4a-8a8a-000000000007";
        await shut.create(spec(id));
        await shut.start(spec(id));
        const { state } = await shut.status(id);
        expect(state).toBe("running");
        const pid = await pidOf(id);
        const uid = Number(
          /^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1],
        );
        expect(uid).toBeGreaterThan(DEFAULT_INSTANCE_USER_IDS.min);
        // Nothing was opened to the instances: the directories stay the platform's alone.
        expect((await stat(closed)).mode & 0o777).toBe(0o700);
        expect((await stat(join(closed, "data"))).mode & 0o077).toBe(0);
      } finally {
        await shut.close();
        await rm(closed, { recursive: true, force: true });
      }
    },
  );

  it.runIf(sandboxExpected && isRoot)(
    "binds code under a directory closed to others (a checkout in /root or a CI runner's 0700 temporary directory) into a sandbox run as an instance's user id",
    async () => {
      const closed = await mkdtemp(join(tmpdir(), "flowplane-runtime-checkout-"));
      const uid = DEFAULT_INSTANCE_USER_IDS.min + 100;
      const gid = DEFAULT_INSTANCE_USER_IDS.min;
      try {
        await mkdir(join(closed, "code"), { mode: 0o755 });
        await writeFile(
          join(closed, "code", "hello.cjs"),
          'require("node:fs").writeFileSync("/data/said", `${process.getuid()} ${require("node:fs").readFileSync("/tmp/note", "utf8")}`);',
        );
        for (const dir of ["data", "tmp"]) {
          await mkdir(join(closed, dir), { mode: 0o700 });
          await chown(join(closed, dir), uid, gid);
        }
        await writeFile(join(closed, "tmp", "note"), "hello");
        const { child } = startSandboxed({
          bwrap: "bwrap",
          hostname: "closed",
          readOnly: [join(closed, "code")],
          userDir: { path: join(closed, "data"), writable: true },
          tmpDir: join(closed, "tmp"),
          command: [process.execPath, join(closed, "code", "hello.cjs")],
          uid,
          gid,
          env: { PATH: "/usr/bin:/bin" },
          output: "pipe",
        });
        let said = "";
        child.stderr!.on("data", (chunk: Buffer) => (said += chunk));
        child.stdin!.end();
        (child.stdio[3] as NodeJS.WritableStream).end();
        const [code] = (await once(child, "exit")) as [number | null];
        expect(said).toBe("");
        expect(code).toBe(0);
        expect(await readFile(join(closed, "data", "said"), "utf8")).toBe("1000 hello");
        expect((await stat(join(closed, "data", "said"))).uid).toBe(uid);
      } finally {
        await rm(closed, { recursive: true, force: true });
      }
    },
  );

  it("installs the modules of its spec before Node-RED starts, and nothing when they are in place", async () => {
    const id = "0d6a3f4e-1111-4a4a-8a8a-00000000000a";
    await driver.create(spec(id));
    const local = join(root, id, "userDir", "local-module");
    await mkdir(local);
    await writeFile(join(local, "package.json"), '{"name":"local-module","version":"1.0.0"}');
    // The instance's own, as when its flows made it.
    const owner = await stat(join(root, id, "userDir"));
    for (const path of [local, join(local, "package.json")])
      await chown(path, owner.uid, owner.gid);
    const modules = { "local-module": "file:local-module" };
    try {
      await driver.start({ ...spec(id), modules });
      await driver.stop(id);
      await driver.start({ ...spec(id), modules });
      const messages = (await driver.logs(id, { limit: 1000 })).entries.map((e) => e.msg);
      expect(
        messages.filter((m) => m === "Installing local-module@file:local-module"),
      ).toHaveLength(1);
      expect(messages.filter((m) => m === "Modules installed")).toHaveLength(1);
      const manifest = JSON.parse(
        await readFile(join(root, id, "userDir", "package.json"), "utf8"),
      ) as { dependencies: unknown };
      expect(manifest.dependencies).toEqual(modules);
    } finally {
      await driver.remove(id);
    }
  });

  it.runIf(sandboxExpected)(
    "never writes or re-owns a file outside the instance through a package.json its flows made a link (a start with modules)",
    async () => {
      // What a flow can do: `ln -sf <DATA_DIR>/token-secret /data/package.json`.
      const outside = await mkdtemp(join(tmpdir(), "flowplane-runtime-outside-"));
      const secret = join(outside, "token-secret");
      await writeFile(secret, "the platform's secret\n", { mode: 0o600 });
      const before = await stat(secret);
      const id = "0d6a3f4e-1111-4a4a-8a8a-000000000009";
      try {
        await driver.create(spec(id));
        await symlink(secret, join(root, id, "userDir", "package.json"));
        // A module npm cannot have (no registry is asked): the start fails after package.json.
        await driver
          .start({ ...spec(id), modules: { "flowplane-absent": "file:/nonexistent" } })
          .catch(() => {});
        expect(await readFile(secret, "utf8")).toBe("the platform's secret\n");
        const after = await stat(secret);
        expect([after.uid, after.gid, after.mode]).toEqual([before.uid, before.gid, before.mode]);
      } finally {
        await driver.remove(id);
        await rm(outside, { recursive: true, force: true });
      }
    },
  );

  it.runIf(sandboxExpected)(
    "installs from the operator's registry only: an instance's /data/.npmrc does not change it, and the host's global npmrc is not there",
    async () => {
      const asked: Record<string, string[]> = { operator: [], tenant: [] };
      const registry = (name: string) =>
        createHttpServer((request, response) => {
          asked[name]!.push(request.url!);
          response.writeHead(404, { "content-type": "application/json" }).end("{}");
        });
      const operator = registry("operator");
      const tenant = registry("tenant");
      const url = async (server: ReturnType<typeof registry>) => {
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
      };
      const operatorUrl = await url(operator);
      const tenantUrl = await url(tenant);
      // Both registries listen on the host's loopback, which an instance's own network reaches
      // only where the platform forwards a port: both are, so that only the setting decides.
      const registryPorts = [operatorUrl, tenantUrl].map((u) => Number(new URL(u).port));
      const strict = new LocalDriver({
        root,
        npmRegistry: operatorUrl,
        platformPorts: () => registryPorts,
      });
      const id = "0d6a3f4e-1111-4a4a-8a8a-00000000000b";
      try {
        await strict.create(spec(id));
        const npmrc = join(root, id, "userDir", ".npmrc");
        await writeFile(npmrc, `registry=${tenantUrl}\n@acme:registry=${tenantUrl}\n`);
        const owner = await stat(join(root, id, "userDir"));
        await chown(npmrc, owner.uid, owner.gid);
        await expect(
          strict.start({
            ...spec(id),
            modules: { "flowplane-probe": "1.0.0", "@acme/probe": "1.0.0" },
          }),
        ).rejects.toThrow(/Could not install flowplane-probe, @acme\/probe/);
        expect(asked.operator!.some((path) => path.startsWith("/flowplane-probe"))).toBe(true);
        expect(asked.tenant).toEqual([]);

        // The editor's palette runs npm in Node-RED's process: the same registry there.
        await strict.start(spec(id));
        const editor = await strict.status(id);
        await deploy(editor, SHELL_FLOW);
        const sh = async (cmd: string) => {
          for (;;) {
            const response = await call(editor, `/sh?cmd=${encodeURIComponent(cmd)}`);
            if (response.status === 200) return response.text;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        };
        expect((await sh("npm config get registry")).trim()).toBe(operatorUrl);
        expect(await sh("cat /usr/etc/npmrc 2>/dev/null; echo end")).toBe("end\n");
      } finally {
        await strict.remove(id);
        await strict.close();
        await new Promise((resolve) => operator.close(resolve));
        await new Promise((resolve) => tenant.close(resolve));
      }
    },
  );

  it("refuses a start whose modules the palette's allow-list does not name, and gives Node-RED's palette the same list", async () => {
    const listed = new LocalDriver({
      root,
      paletteAllowList: ["node-red-contrib-ok", "@acme/*"],
    });
    const id = "0d6a3f4e-1111-4a4a-8a8a-00000000000c";
    try {
      await listed.create(spec(id));
      await expect(
        listed.start({ ...spec(id), modules: { "@acme/fine": "1.0.0", "evil-module": "1.0.0" } }),
      ).rejects.toThrow("evil-module is not on the palette's allow-list");
      expect((await listed.status(id)).state).toBe("crashed");
      await listed.start(spec(id));
      const settings = JSON.parse((await call(await listed.status(id), "/settings")).text) as {
        externalModules: { palette: { allowList: string[]; denyList: string[] } };
      };
      expect(settings.externalModules.palette.allowList).toEqual(
        expect.arrayContaining(["node-red-contrib-ok", "@acme/*"]),
      );
      expect(settings.externalModules.palette.denyList).toEqual(["*"]);
    } finally {
      await listed.remove(id);
      await listed.close();
    }
  });

  it("reaches the platform only through its platform socket (platformConnection), and keeps running whatever it answers: settings refused, editor tokens answered 429, 500, garbage or a cut connection", async () => {
    const token = `fpi_${Math.random().toString(36).slice(2)}`;
    const seen: string[] = [];
    const platform = createHttpServer((request, response) => {
      seen.push(
        `${request.method} ${request.url} ${request.headers.authorization === `Bearer ${token}`}`,
      );
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk));
      request.on("end", () => {
        const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
          response
            .writeHead(status, { "content-type": "application/json", ...headers })
            .end(JSON.stringify(value));
        const path = request.url!.replace(/^\/storage\/[^/]+/, "");
        if (request.method === "GET") return json(200, path === "/flows" ? [] : {});
        if (path === "/settings") return json(400, { code: "invalid_request", error: "No" });
        const { username, token: bearer } = JSON.parse(body || "{}") as {
          username?: string;
          token?: string;
        };
        switch (bearer ?? username) {
          case "busy":
            return json(429, { code: "too_many_requests" }, { "retry-after": "30" });
          case "broken":
            return json(500, { code: "unexpected_error" });
          case "garbage":
            return response.writeHead(200, { "content-type": "application/json" }).end("{no");
          case "cut":
            return request.socket.destroy();
          default:
            return json(400, { code: "invalid_request" });
        }
      });
    });
    // The platform listens on no port: every connection comes through the instance's socket.
    const connections: string[] = [];
    const platformRoot = await mkdtemp(join(tmpdir(), "flowplane-runtime-platform-"));
    const connected = new LocalDriver({
      root: platformRoot,
      startTimeoutMs: 45_000,
      platformConnection: (instanceId, socket) => {
        connections.push(instanceId);
        platform.emit("connection", socket);
      },
    });
    // Its host is not used: nothing answers there.
    const platformUrl = "http://platform.invalid:9";
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000008";
    try {
      await connected.create(spec(id));
      await connected.start({ ...spec(id), platformUrl, token });
      const status = await connected.status(id);
      // Node-RED read its flows and settings through the socket before it said it runs.
      expect(seen).toContain(`GET /storage/${id}/flows true`);
      expect(connections.length).toBeGreaterThan(0);
      expect(new Set(connections)).toEqual(new Set([id]));
      const socket = await stat(join(platformRoot, id, "run", "platform.sock"));
      expect(socket.isSocket()).toBe(true);
      expect(socket.mode & 0o777).toBe(0o600);
      // The editor asks the platform about every bearer (adminAuth's tokens): whatever the
      // platform answers, the request is refused and Node-RED keeps running.
      for (const bearer of ["busy", "broken", "garbage", "cut", "x".repeat(300)]) {
        const answer = await call(status, "/settings", {
          headers: { authorization: `Bearer ${bearer}` },
        });
        expect(answer.status, bearer).toBe(401);
      }
      expect(seen.filter((call) => call.startsWith("POST /storage/")).length).toBeGreaterThan(4);
      expect((await connected.status(id)).state).toBe("running");
      // Every call carried the token, which came down its descriptor: no environment holds it.
      expect(seen.length).toBeGreaterThan(5);
      expect(seen.filter((call) => !call.endsWith(" true"))).toEqual([]);
      const pid = await pidOf(id);
      expect(await readFile(`/proc/${pid}/environ`, "utf8")).not.toContain(token);
      const { entries } = await connected.logs(id, { limit: 1000 });
      expect(entries.some((e) => e.msg.startsWith("[flowplane] settings not saved: "))).toBe(true);
      await connected.stop(id);
      // Stopped, the instance has no platform socket.
      await expect(access(join(platformRoot, id, "run", "platform.sock"))).rejects.toThrow();
    } finally {
      await connected.close();
      await rm(platformRoot, { recursive: true, force: true });
    }
  });

  it("with no sandbox to be had, runs Node-RED as an ordinary process and says in its log that it is not isolated (refuses as root)", async () => {
    const bareRoot = await mkdtemp(join(tmpdir(), "flowplane-runtime-bare-"));
    const bare = new LocalDriver({ root: bareRoot, bwrap: "/nonexistent/bwrap" });
    try {
      const isolation = await bare.isolation();
      expect(isolation).toMatchObject({
        mode: "none",
        user: "platform",
        required: false,
        network: "host",
      });
      expect(isolation.reason).toContain("/nonexistent/bwrap was not found");
      const id = "0d6a3f4e-1111-4a4a-8a8a-000000000005";
      await bare.create(spec(id));
      if (isRoot) {
        // Not as root: never.
        await expect(bare.start(spec(id))).rejects.toThrow(
          /^Not started: the platform runs as root and its instances cannot run under user ids of their own \(.*was not found.*\): an instance never runs as root/,
        );
        expect(await bare.status(id)).toMatchObject({
          state: "crashed",
          detail: "refused: it would run as root",
        });
        return;
      }
      await bare.start(spec(id, { GREETING: "unboxed" }));
      const running = await bare.status(id);
      expect(running.endpoint).toEqual({ socketPath: join(bareRoot, id, "editor.sock") });
      await deploy(running, GREETING_FLOW);
      expect(await greeting(running)).toBe("unboxed");
      // No sandbox, but no TCP port either.
      expect(await listeningTcp(await pidOf(id))).toEqual([]);
      const { entries } = await bare.logs(id, { limit: 1000 });
      expect(entries.find((e) => e.msg.startsWith("Not isolated"))).toMatchObject({
        level: "system",
        msg: expect.stringContaining("was not found"),
      });
      // Its own files still land in its own directory (an absolute userDir).
      expect((await stat(join(bareRoot, id, "userDir", "package.json"))).isFile()).toBe(true);
      await bare.stop(id);
      expect((await bare.status(id)).state).toBe("stopped");
    } finally {
      await bare.close();
      await rm(bareRoot, { recursive: true, force: true });
    }
  });

  it("with INSTANCE_ISOLATION=required and no sandbox, refuses to start an instance and says why in its log and state", async () => {
    const strictRoot = await mkdtemp(join(tmpdir(), "flowplane-runtime-strict-"));
    const strict = new LocalDriver({
      root: strictRoot,
      bwrap: "/nonexistent/bwrap",
      isolation: "required",
    });
    try {
      expect(await strict.isolation()).toMatchObject({ mode: "none", required: true });
      const id = "0d6a3f4e-1111-4a4a-8a8a-000000000006";
      await strict.create(spec(id));
      await expect(strict.start(spec(id))).rejects.toThrow(
        /^Not started: INSTANCE_ISOLATION=required and no sandbox can be made \(.*was not found/,
      );
      const status = await strict.status(id);
      expect(status).toMatchObject({
        state: "crashed",
        detail: "refused: no sandbox (INSTANCE_ISOLATION=required)",
      });
      expect(status.endpoint).toBeNull();
      await expect(call(join(strictRoot, id, "editor.sock"), "/settings")).rejects.toThrow();
      const { entries } = await strict.logs(id, { limit: 1 });
      expect(entries[0]!.msg).toMatch(/^Not started: INSTANCE_ISOLATION=required/);
    } finally {
      await strict.close();
      await rm(strictRoot, { recursive: true, force: true });
    }
  });

  it("with INSTANCE_ISOLATION=off, says instances are not isolated and why", async () => {
    const off = new LocalDriver({ root, isolation: "off" });
    expect(await off.isolation()).toEqual({
      mode: "none",
      user: "platform",
      required: false,
      network: "host",
      reason: "INSTANCE_ISOLATION=off",
    });
  });
});

/** Runs a command (ip, as root); throws with what it said when it fails. */
function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")}: ${result.stderr || result.error?.message}`);
  }
}

/** A Node.js one-liner run by a flow inside the instance: prints what a connection met. */
function probe(target: string): string {
  const script = `require("http").get(${JSON.stringify(target)}, { timeout: 3000 }, (r) => { let t = ""; r.on("data", (d) => (t += d)); r.on("end", () => console.log("answered " + t)); }).on("timeout", function () { console.log("timeout"); this.destroy(); }).on("error", (e) => console.log(e.code || e.message))`;
  return `${process.execPath} -e '${script}'`;
}

describe(
  `the instance's network${noNetwork ? ` (skipped: ${noNetwork})` : ""}`,
  { timeout: 180_000 },
  () => {
    // "The outside world": a namespace of the test's own, joined to the host by a veth pair in
    // the benchmarking range (198.18.0.0/15), where an HTTP server answers. Nothing else but
    // loopback addresses is targeted.
    const tag = Math.random().toString(36).slice(2, 8);
    const outside = `fptest-${tag}`;
    const octet = 1 + Math.floor(Math.random() * 250);
    const hostSide = `fpt${tag}a`;
    const hostAddress = `198.18.${octet}.1`;
    const outsideAddress = `198.18.${octet}.2`;
    let server: ChildProcess | undefined;
    let loopback: ReturnType<typeof createServer> | undefined;

    beforeAll(async () => {
      if (noNetwork) return;
      run("ip", ["netns", "add", outside]);
      run("ip", ["link", "add", hostSide, "type", "veth", "peer", "name", `fpt${tag}b`]);
      run("ip", ["link", "set", `fpt${tag}b`, "netns", outside]);
      run("ip", ["addr", "add", `${hostAddress}/30`, "dev", hostSide]);
      run("ip", ["link", "set", hostSide, "up"]);
      run("ip", ["-n", outside, "addr", "add", `${outsideAddress}/30`, "dev", `fpt${tag}b`]);
      run("ip", ["-n", outside, "link", "set", `fpt${tag}b`, "up"]);
      run("ip", ["-n", outside, "link", "set", "lo", "up"]);
      const code = `require("http").createServer((q, s) => s.end("outside world")).listen(8080, ${JSON.stringify(outsideAddress)}, () => console.log("listening"))`;
      server = spawn("ip", ["netns", "exec", outside, process.execPath, "-e", code], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        server!.stdout!.once("data", () => resolve());
        server!.once("exit", (exitCode) => reject(new Error(`server exited (${exitCode})`)));
      });
      // A service of the host's on loopback, as a database or the platform's port would be.
      loopback = createServer((socket) => socket.end("HTTP/1.0 200 OK\r\n\r\nhost loopback"));
      await new Promise<void>((resolve) => loopback!.listen(0, "127.0.0.1", resolve));
    });

    afterAll(async () => {
      if (noNetwork) return;
      server?.kill("SIGKILL");
      loopback?.close();
      spawnSync("ip", ["link", "delete", hostSide]);
      spawnSync("ip", ["netns", "delete", outside]);
    });

    it.skipIf(noNetwork)(
      "reaches the outside world, but not the host's loopback (its PostgreSQL, a server of the host's) nor another instance",
      async () => {
        // The host side is reachable from here, as the outside world is.
        const fromHost = await fetch(`http://${outsideAddress}:8080/`);
        expect(await fromHost.text()).toBe("outside world");
        const { port } = loopback!.address() as { port: number };
        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("host loopback");

        expect(await driver.isolation()).toMatchObject({ mode: "sandbox", network: "own" });
        const ids = [
          "0d6a3f4e-1111-4a4a-8a8a-000000000009",
          "0d6a3f4e-1111-4a4a-8a8a-00000000000a",
        ];
        const statuses: RuntimeStatus[] = [];
        for (const id of ids) {
          await driver.create(spec(id));
          await driver.start(spec(id));
          const status = await driver.status(id);
          await deploy(status, SHELL_FLOW);
          statuses.push(status);
        }
        try {
          const [inside, other] = statuses as [RuntimeStatus, RuntimeStatus];
          expect(await sh(inside, probe(`http://${outsideAddress}:8080/`))).toBe(
            "answered outside world\n",
          );
          expect(await sh(inside, probe(`http://127.0.0.1:${port}/`))).toBe("ECONNREFUSED\n");
          expect(await sh(inside, probe("http://127.0.0.1:5432/"))).toBe("ECONNREFUSED\n");
          // The other instance: a server its flow starts on its loopback is its own alone.
          const listen = `require("http").createServer((q, s) => s.end("other instance")).listen(18999, "127.0.0.1")`;
          await sh(other, `${process.execPath} -e '${listen}' >/dev/null 2>&1 &`);
          const deadline = Date.now() + 15_000;
          let seenByOther = "";
          while (Date.now() < deadline) {
            seenByOther = await sh(other, probe("http://127.0.0.1:18999/"));
            if (seenByOther !== "ECONNREFUSED\n") break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(seenByOther).toBe("answered other instance\n");
          expect(await sh(inside, probe("http://127.0.0.1:18999/"))).toBe("ECONNREFUSED\n");
        } finally {
          for (const id of ids) await driver.remove(id);
        }
        for (const id of ids) {
          expect(await readdir("/run/netns")).not.toContain(netnsName(root, id));
        }
      },
    );
  },
);
