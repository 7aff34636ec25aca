// The local driver with a real Node-RED: it starts and answers on a loopback port from the range,
// takes a flow through its admin API, sees its environment after a restart, stops, crashes,
// suspends, is found again by a new driver (the platform restarted) and is removed without a trace.
// All of it in the sandbox (bubblewrap, where this machine has it); then what is particular to the
// sandbox (a stop that must kill, what the process is on the host) and to having none.
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import {
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
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceSpec, RuntimeStatus } from "../driver";
import { DEFAULT_INSTANCE_USER_IDS, LocalDriver, NODE_RED_VERSION } from "./driver";
import { startSandboxed } from "./sandbox";

let root: string;
let driver: LocalDriver;
/** Where the sandbox must be used: bubblewrap is installed (CI installs it). */
const sandboxExpected =
  // eslint-disable-next-line no-restricted-properties -- CI installs bubblewrap: the sandbox must be used there
  process.env.CI === "true" || spawnSync("bwrap", ["--version"]).status === 0;
const isRoot = process.getuid?.() === 0;
const changes: [string, RuntimeStatus][] = [];
// A window of ports unlikely to be in use; the driver skips any that are.
const min = 20_000 + Math.floor(Math.random() * 400) * 100;
const ports = { min, max: min + 49 };

const spec = (id: string, env: Record<string, string> = {}): InstanceSpec => ({
  id,
  name: id,
  teamId: "team1",
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

/**
 * Node-RED's host pid, found by the port the driver gave it (in its environment) and its name
 * (it calls itself "node-red"; bubblewrap's processes around it carry the same environment).
 */
async function pidListeningOn(port: string): Promise<number> {
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    const title = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (
      environ.split("\0").includes(`FLOWPLANE_NODE_RED_PORT=${port}`) &&
      title.startsWith("node-red")
    ) {
      return Number(name);
    }
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

/** Deploys a flow to a Node-RED without sign-in (no platform address). */
async function deploy(url: string | null, flow: unknown[]) {
  const deployed = await fetch(`${url}/flows`, {
    method: "POST",
    headers: { "content-type": "application/json", "Node-RED-Deployment-Type": "full" },
    body: JSON.stringify(flow),
  });
  expect(deployed.status).toBe(204);
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
      expect(await driver.isolation()).toEqual({
        mode: "sandbox",
        user: isRoot ? "per-instance" : "platform",
        required: false,
      });
      const ids = ["0d6a3f4e-1111-4a4a-8a8a-000000000002", "0d6a3f4e-1111-4a4a-8a8a-000000000003"];
      const pids: number[] = [];
      for (const id of ids) {
        await driver.create(spec(id));
        await driver.start(spec(id));
        pids.push(await pidListeningOn(new URL((await driver.status(id)).url!).port));
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
      // The network is the host's: the platform and the editor meet on loopback.
      expect(await readlink(`/proc/${pids[0]}/ns/net`)).toBe(await readlink("/proc/self/ns/net"));

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
      const impatient = new LocalDriver({ root, ports, stopGraceMs: 500 });
      const id = "0d6a3f4e-1111-4a4a-8a8a-000000000004";
      await impatient.create(spec(id));
      await impatient.start(spec(id));
      const { url } = await impatient.status(id);
      await deploy(url, SHELL_FLOW);
      const pid = await pidListeningOn(new URL(url!).port);

      // Once the flow answers (it starts just after the deploy is acknowledged)…
      for (;;) {
        const ready = await fetch(`${url}/sh?cmd=true`);
        if (ready.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // …a process left behind in the background, then Node-RED frozen: it hears no stop.
      const seconds = 300 + Math.floor(Math.random() * 1000);
      const cmd = `sleep ${seconds} & kill -STOP $PPID`;
      await fetch(`${url}/sh?cmd=${encodeURIComponent(cmd)}`, {
        signal: AbortSignal.timeout(1_000),
      }).catch(() => {});
      await waitFor(() =>
        / T /.test(spawnSync("cat", [`/proc/${pid}/stat`]).stdout.toString()) ? true : undefined,
      );

      await impatient.stop(id);
      expect(await impatient.status(id)).toEqual({ state: "stopped", url });
      const port = Number(new URL(url!).port);
      const free = await new Promise<boolean>((resolve) => {
        const probe = createServer();
        probe.once("error", () => resolve(false));
        probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
      });
      expect(free).toBe(true);
      const left = (await hostProcesses()).filter(
        (p) => p.pid === pid || p.cmdline === `sleep\0${seconds}\0`,
      );
      expect(left).toEqual([]);
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
      const shut = new LocalDriver({ root: join(closed, "data", "instances"), ports });
      try {
        expect(await shut.isolation()).toEqual({
          mode: "sandbox",
          user: "per-instance",
          required: false,
        });
        const id = "0d6a3f4e-1111-4a4a-8a8a-000000000007";
        await shut.create(spec(id));
        await shut.start(spec(id));
        const { state, url } = await shut.status(id);
        expect(state).toBe("running");
        const pid = await pidListeningOn(new URL(url!).port);
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
      const strict = new LocalDriver({ root, ports, npmRegistry: operatorUrl });
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
        const { url: editor } = await strict.status(id);
        await deploy(editor, SHELL_FLOW);
        const sh = async (cmd: string) => {
          for (;;) {
            const response = await fetch(`${editor}/sh?cmd=${encodeURIComponent(cmd)}`);
            if (response.status === 200) return response.text();
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
      ports,
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
      const { url } = await listed.status(id);
      const settings = (await (await fetch(`${url}/settings`)).json()) as {
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

  it("keeps running whatever the platform answers: settings refused, sign-ins answered 429, 500, garbage or a cut connection", async () => {
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
        const { username } = JSON.parse(body || "{}") as { username?: string };
        switch (username) {
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
    await new Promise<void>((resolve) => platform.listen(0, "127.0.0.1", resolve));
    const platformUrl = `http://127.0.0.1:${(platform.address() as { port: number }).port}`;
    const id = "0d6a3f4e-1111-4a4a-8a8a-000000000008";
    try {
      await driver.create(spec(id));
      await driver.start({ ...spec(id), platformUrl, token });
      const { url } = await driver.status(id);
      for (const username of ["busy", "broken", "garbage", "cut", "x".repeat(300)]) {
        const signIn = await fetch(`${url}/auth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            client_id: "node-red-editor",
            grant_type: "password",
            scope: "*",
            username,
            password: "whatever",
          }),
        });
        expect(signIn.status, username).toBe(403);
        expect(await signIn.json()).toMatchObject({ error: "invalid_grant" });
      }
      expect((await driver.status(id)).state).toBe("running");
      // Every call carried the token, which came down its descriptor: no environment holds it.
      expect(seen.length).toBeGreaterThan(5);
      expect(seen.filter((call) => !call.endsWith(" true"))).toEqual([]);
      const pid = await pidListeningOn(new URL(url!).port);
      expect(await readFile(`/proc/${pid}/environ`, "utf8")).not.toContain(token);
      const { entries } = await driver.logs(id, { limit: 1000 });
      expect(entries.some((e) => e.msg.startsWith("[flowplane] settings not saved: "))).toBe(true);
      expect(entries.some((e) => /editor sign-in refused: .*HTTP 429/.test(e.msg))).toBe(true);
    } finally {
      await driver.remove(id);
      await new Promise((resolve) => platform.close(resolve));
    }
  });

  it("with no sandbox to be had, runs Node-RED as an ordinary process and says in its log that it is not isolated (refuses as root)", async () => {
    const bareRoot = await mkdtemp(join(tmpdir(), "flowplane-runtime-bare-"));
    const bare = new LocalDriver({ root: bareRoot, ports, bwrap: "/nonexistent/bwrap" });
    try {
      const isolation = await bare.isolation();
      expect(isolation).toMatchObject({ mode: "none", user: "platform", required: false });
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
      const { url } = await bare.status(id);
      await deploy(url, GREETING_FLOW);
      expect(await greeting(url)).toBe("unboxed");
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
      ports,
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
      await expect(fetch(`${status.url}/settings`)).rejects.toThrow();
      const { entries } = await strict.logs(id, { limit: 1 });
      expect(entries[0]!.msg).toMatch(/^Not started: INSTANCE_ISOLATION=required/);
    } finally {
      await strict.close();
      await rm(strictRoot, { recursive: true, force: true });
    }
  });

  it("with INSTANCE_ISOLATION=off, says instances are not isolated and why", async () => {
    const off = new LocalDriver({ root, ports, isolation: "off" });
    expect(await off.isolation()).toEqual({
      mode: "none",
      user: "platform",
      required: false,
      reason: "INSTANCE_ISOLATION=off",
    });
  });
});
