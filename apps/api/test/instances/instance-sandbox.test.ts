// What a hosted instance's flows can reach, tried as a team member (not an administrator) would:
// a flow deployed through the editor's admin API, with Node-RED's core exec, file and file-in
// nodes, outbound HTTP and MQTT, on real Node-RED processes in their sandboxes. They must not
// read the platform's DATA_DIR, its secrets or another instance's files, see any process but
// their own instance's, or write outside their instance's directory; and they must still run
// commands, keep their own files, and reach the team broker. Also: the editor's sign-in refuses
// what the platform does not give, and Node-RED keeps running.
import { Role } from "@flowplane/contract";
import { spawnSync } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inCI } from "../support/env";
import { deployFlows, startServer, type TestServer } from "../support/harness";
import { closeAll, connectMqtt, inbox } from "../support/mqtt-client";
import { waiter } from "../support/until";

let server: TestServer;
let owner: { id: string; token: string };
let member: { id: string; token: string };
let teamId: string;
let mine: { id: string; url: string };
let theirs: { id: string; url: string };
const BROKER_PASSWORD = "a broker client password";

/** Where the sandbox must be used: bubblewrap is installed (CI installs it). */
const sandboxExpected = inCI || spawnSync("bwrap", ["--version"]).status === 0;

const until = waiter(30_000);

/**
 * The probe: GET /sh?cmd= runs a shell command with the exec node (its output and status),
 * /read?file= and /write?file=&text= use the file-in and file nodes (or answer their error),
 * /fetch?url= makes an outbound HTTP request; MQTT `probe/ping` is answered on `probe/pong`.
 */
function probeFlow(mqttPort: number) {
  const z = "probe";
  const fn = (id: string, func: string, next: string) => ({
    id,
    type: "function",
    z,
    func,
    outputs: 1,
    wires: [[next]],
  });
  const httpIn = (id: string, url: string, next: string) => ({
    id,
    type: "http in",
    z,
    url,
    method: "get",
    wires: [[next]],
  });
  const reply = (id: string) => ({ id, type: "http response", z, wires: [] });
  return [
    { id: z, type: "tab", label: "Probe" },
    httpIn("sh-in", "/sh", "sh-cmd"),
    fn(
      "sh-cmd",
      'msg.payload = "{ " + msg.req.query.cmd + " ; } 2>&1; echo rc=$?"; return msg;',
      "sh-exec",
    ),
    {
      id: "sh-exec",
      type: "exec",
      z,
      command: "true;",
      addpay: "payload",
      append: "",
      useSpawn: "false",
      timer: "20",
      oldrc: false,
      wires: [["sh-out"], [], []],
    },
    reply("sh-out"),
    httpIn("read-in", "/read", "read-name"),
    fn("read-name", "msg.filename = msg.req.query.file; return msg;", "read-file"),
    {
      id: "read-file",
      type: "file in",
      z,
      filename: "filename",
      filenameType: "msg",
      format: "utf8",
      chunk: false,
      sendError: false,
      encoding: "none",
      allProps: false,
      wires: [["read-out"]],
    },
    reply("read-out"),
    httpIn("write-in", "/write", "write-name"),
    fn(
      "write-name",
      "msg.filename = msg.req.query.file; msg.payload = msg.req.query.text; return msg;",
      "write-file",
    ),
    {
      id: "write-file",
      type: "file",
      z,
      filename: "filename",
      filenameType: "msg",
      appendNewline: false,
      createDir: false,
      overwriteFile: "true",
      encoding: "none",
      wires: [["write-done"]],
    },
    fn("write-done", 'msg.payload = "written"; return msg;', "write-out"),
    reply("write-out"),
    httpIn("fetch-in", "/fetch", "fetch-url"),
    fn("fetch-url", "msg.url = msg.req.query.url; delete msg.payload; return msg;", "fetch-get"),
    {
      id: "fetch-get",
      type: "http request",
      z,
      method: "GET",
      ret: "txt",
      paytoqs: "ignore",
      url: "",
      persist: false,
      senderr: false,
      headers: [],
      wires: [["fetch-status"]],
    },
    fn("fetch-status", 'msg.payload = "status " + msg.statusCode; return msg;', "fetch-out"),
    reply("fetch-out"),
    // A node's refusal (a file it may not read, a request that fails) answers with the error.
    {
      id: "failed",
      type: "catch",
      z,
      scope: ["read-file", "write-file", "fetch-get"],
      uncaught: false,
      wires: [["failed-msg"]],
    },
    fn("failed-msg", 'msg.payload = "error: " + msg.error.message; return msg;', "failed-out"),
    reply("failed-out"),
    {
      id: "broker",
      type: "mqtt-broker",
      name: "team broker",
      broker: "127.0.0.1",
      port: String(mqttPort),
      clientid: `flow@${teamId}`,
      autoConnect: true,
      usetls: false,
      protocolVersion: "4",
      keepalive: "60",
      cleansession: true,
      credentials: { user: `flow@${teamId}`, password: BROKER_PASSWORD },
    },
    {
      id: "mq-in",
      type: "mqtt in",
      z,
      topic: "probe/ping",
      qos: "1",
      datatype: "utf8",
      broker: "broker",
      nl: false,
      rap: true,
      rh: 0,
      inputs: 0,
      wires: [["mq-pong"]],
    },
    fn(
      "mq-pong",
      'msg.topic = "probe/pong"; msg.payload = "pong:" + msg.payload; return msg;',
      "mq-out",
    ),
    {
      id: "mq-out",
      type: "mqtt out",
      z,
      topic: "",
      qos: "1",
      retain: "false",
      broker: "broker",
      wires: [],
    },
  ];
}

/** Deploys through the editor's admin API with a token for that instance's editor. */
async function deploy(instance: { id: string }, flow: unknown[]) {
  const deployed = await deployFlows(server, instance.id, member.token, flow);
  expect(deployed.status, await deployed.text()).toBe(204);
}

/** What a probe endpoint answers, once the flow's routes are up. */
async function probe(url: string, path: string, query: Record<string, string>): Promise<string> {
  return until(`${path} on ${url}`, async () => {
    const response = await fetch(`${url}${path}?${new URLSearchParams(query)}`).catch(
      () => undefined,
    );
    return response?.status === 200 ? response.text() : undefined;
  });
}

/**
 * A search of every file the sandbox shows for `text` (grep's status 1: found nowhere), but the
 * system's and Node-RED's read-only trees, which hold no data of the platform's, and
 * /run/flowplane, which holds only the socket to the platform (and cannot be listed).
 */
const search = (text: string) =>
  `grep -rlsD skip --exclude-dir=usr --exclude-dir=node_modules --exclude-dir=proc --exclude-dir=dev --exclude-dir=flowplane ${text} /`;

const sh = (cmd: string, on = mine) => probe(on.url, "/sh", { cmd });
const read = (file: string, on = mine) => probe(on.url, "/read", { file });
const write = (file: string, text: string, on = mine) => probe(on.url, "/write", { file, text });

async function createInstance(applicationId: string, name: string) {
  const created = await server.request("POST", "/api/v1/projects", {
    token: owner.token,
    body: { name, applicationId },
  });
  expect(created.status, created.text).toBe(200);
  const id = created.body.id as string;
  await until(`${name} running`, async () => {
    const reply = await server.request("GET", `/api/v1/projects/${id}/status`);
    return reply.body.meta.state === "running" ? true : undefined;
  });
  const reply = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
  return { id, url: reply.body.url as string };
}

beforeAll(async () => {
  server = await startServer({ instances: true, broker: "embedded" });
  owner = await server.user();
  const team = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: "Sandboxed" },
  });
  teamId = team.body.id;
  member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
  for (const username of ["flow", "tester"]) {
    const client = await server.request("POST", `/api/v1/teams/${teamId}/broker/client`, {
      token: owner.token,
      body: { username, password: BROKER_PASSWORD, acls: [{ action: "both", pattern: "probe/#" }] },
    });
    expect(client.status, client.text).toBe(201);
  }
  const app = await server.request("POST", "/api/v1/applications", {
    token: owner.token,
    body: { name: "Probes", teamId },
  });
  mine = await createInstance(app.body.id, "probe-mine");
  theirs = await createInstance(app.body.id, "probe-theirs");
  const flow = probeFlow(server.app.mqttPort!);
  await deploy(mine, flow);
  await deploy(theirs, flow);
}, 120_000);

afterAll(async () => {
  await closeAll();
  await server?.close();
});

describe.runIf(sandboxExpected)(
  "a hosted instance's flows, in its sandbox",
  { timeout: 60_000 },
  () => {
    it("cannot read the platform's data directory, its secrets or database", async () => {
      const dataDir = server.dataDir;
      // The files are there, on the host.
      expect((await readdir(dataDir)).sort()).toEqual(
        expect.arrayContaining(["initial-admin-token", "instances", "mqtt"]),
      );
      const listing = await sh(`ls -la ${dataDir}`);
      expect(listing).toContain("No such file or directory");
      expect(listing).not.toContain("initial-admin-token");
      for (const file of ["initial-admin-token", "initial-admin-password", "token-secret"]) {
        expect(await sh(`cat ${join(dataDir, file)}`)).toMatch(/No such file or directory\nrc=1/);
        expect(await read(join(dataDir, file))).toMatch(/^error: .*ENOENT/);
      }
      const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
      // Nor by searching the whole filesystem it sees.
      expect(await sh(search(token))).toBe("rc=1\n");
    });

    it("cannot read another instance's directory, by its host path or any other way", async () => {
      const theirDir = join(server.dataDir, "instances", theirs.id, "userDir");
      expect((await stat(join(theirDir, "package.json"))).isFile()).toBe(true);
      expect(await sh(`ls ${theirDir}`)).toContain("No such file or directory");
      expect(await read(join(theirDir, "package.json"))).toMatch(/^error: .*ENOENT/);
      // Their secret, written by their own flow, is nowhere in this instance's view.
      const secret = `secret-of-theirs-${Math.random().toString(36).slice(2)}`;
      expect(await write("/data/theirs.txt", secret, theirs)).toBe("written");
      expect(await sh(search(secret))).toBe("rc=1\n");
    });

    it("sees no process but its own instance's, and no instance's token in any environment", async () => {
      const lines = (
        await sh(
          `for p in /proc/[0-9]*; do printf '%s ' "\${p#/proc/}"; tr '\\0' ' ' < $p/cmdline; echo; done`,
        )
      )
        .trim()
        .split("\n")
        .filter((line) => !line.startsWith("rc="));
      const commands = lines.map((line) => line.slice(line.indexOf(" ") + 1));
      // bubblewrap's init (pid 1), Node-RED, and the shell the exec node runs: nothing else.
      expect(lines[0]).toMatch(/^1 (\S*\/)?bwrap /);
      expect(commands.filter((c) => c.startsWith("node-red"))).toHaveLength(1);
      for (const command of commands) {
        expect(command).toMatch(/^((\S*\/)?bwrap |node-red|\/bin\/(ba)?sh |tr )/);
      }
      expect(lines.length).toBeLessThan(8);
      // The platform's process, on the host, is not among them.
      expect(commands.join("\n")).not.toMatch(/vitest|tsx|main\.ts/);

      const environ = await sh("cat /proc/[0-9]*/environ | tr '\\0' '\\n'");
      expect(environ).toContain(`FLOWPLANE_INSTANCE_ID=${mine.id}`);
      expect(environ).not.toContain("fpi_");
      expect(environ).not.toContain("FLOWPLANE_INSTANCE_TOKEN=");
      // Nor from the host: the token reached Node-RED on a descriptor, not in its environment.
      let seen = 0;
      for (const name of await readdir("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        const text = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
        if (!text.includes(`FLOWPLANE_INSTANCE_ID=${mine.id}`)) continue;
        seen++;
        expect(text).not.toContain("fpi_");
      }
      expect(seen).toBeGreaterThan(0);
      // Nothing the platform held open reached the flows: past stdio, the command's own directory
      // listing and the instance's own editor socket (which Node-RED listens on), nothing.
      const held = (await sh("for f in /proc/self/fd/*; do readlink $f; done"))
        .trim()
        .split("\n")
        .filter((line) => !line.startsWith("rc="));
      for (const target of held) {
        expect(target).toMatch(/^(\/dev\/|pipe:|socket:|anon_inode:|\/proc\/)/);
      }
    });

    it("reaches nothing but its own storage routes through its socket to the platform", async () => {
      const through = (host: string, path: string) =>
        sh(
          `curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/flowplane/platform.sock -H 'Host: ${host}' 'http://x${path}'`,
        );
      // Another instance's editor, by its host: not through this socket.
      expect(await through(new URL(theirs.url).host, "/sh?cmd=id")).toBe("404rc=0\n");
      // The platform's API and another instance's storage: not either.
      expect(await through("127.0.0.1", "/api/v1/user")).toBe("404rc=0\n");
      expect(await through("127.0.0.1", `/storage/${theirs.id}/flows`)).toBe("404rc=0\n");
      // Its own storage answers (401 without its token, which only Node-RED holds).
      expect(await through("127.0.0.1", `/storage/${mine.id}/flows`)).toBe("401rc=0\n");
    });

    it("cannot write outside its own directory; its /tmp is its own", async () => {
      for (const path of ["/usr/probe", "/etc/probe", "/probe", join(server.dataDir, "probe")]) {
        expect(await sh(`touch ${path}`), path).toMatch(
          /(Read-only file system|Permission denied|No such file or directory)\nrc=1/,
        );
      }
      expect(await write(join(server.dataDir, "probe"), "x")).toMatch(/^error: .*ENOENT/);
      expect(await write("/usr/local/probe", "x")).toMatch(/^error: .*(EROFS|EACCES)/);
      await expect(stat(join(server.dataDir, "probe"))).rejects.toThrow();

      const name = `probe-${Math.random().toString(36).slice(2)}`;
      expect(await write(`/tmp/${name}`, "mine")).toBe("written");
      expect(await sh(`cat /tmp/${name}`)).toBe("minerc=0\n");
      await expect(stat(`/tmp/${name}`)).rejects.toThrow();
      expect(await sh(`ls /tmp/${name}`, theirs)).toContain("No such file or directory");
    });

    it("still runs commands, reads and writes its own files, reaches the team broker over MQTT, and not the host's loopback", async () => {
      expect(await sh("echo hello; id -un; pwd")).toBe("hello\nnode-red\n/data\nrc=0\n");
      expect(await write("/data/notes.txt", "kept")).toBe("written");
      expect(await read("notes.txt")).toBe("kept");
      expect(
        await sh(
          "cat notes.txt; echo; mkdir -p work && echo more > work/more.txt && cat work/more.txt",
        ),
      ).toBe("kept\nmore\nrc=0\n");
      const userDir = join(server.dataDir, "instances", mine.id, "userDir");
      expect(await readFile(join(userDir, "notes.txt"), "utf8")).toBe("kept");
      // Node-RED's own files: its project's package.json and the modules directory beside it.
      expect(await sh("ls /data")).toMatch(/node_modules\n.*package\.json/s);

      // Its own network: the platform's port and the host's PostgreSQL on the host's loopback are
      // out of reach (the outside world is reached through NAT: packages/runtime's driver tests).
      const network = (await server.request("GET", "/api/v1/settings")).body[
        "platform:instances:isolation"
      ].network;
      if (network === "own") {
        expect(await probe(mine.url, "/fetch", { url: `${server.url}/healthz` })).toMatch(
          /^error: .*ECONNREFUSED/,
        );
        expect(await sh("echo > /dev/tcp/127.0.0.1/5432", mine)).toMatch(/refused.*rc=1/s);
      } else {
        expect(await probe(mine.url, "/fetch", { url: `${server.url}/healthz` })).toBe(
          "status 200",
        );
      }

      const tester = await connectMqtt(`tester@${teamId}`, {
        url: `mqtt://127.0.0.1:${server.app.mqttPort}`,
        password: BROKER_PASSWORD,
      });
      await tester.subscribeAsync("probe/pong", { qos: 1 });
      const pong = await until("an answer over MQTT", async () => {
        await tester.publishAsync("probe/ping", "hi", { qos: 1 });
        return inbox(tester).messages.find((m) => m.topic === "probe/pong");
      });
      expect(pong.payload).toBe("pong:hi");
    });

    it("runs under a host user id of its own (as root), and started without an error in its log", async () => {
      if (process.getuid?.() === 0) {
        const [a, b] = await Promise.all(
          [mine, theirs].map((i) => stat(join(server.dataDir, "instances", i.id, "userDir"))),
        );
        expect(a!.uid).not.toBe(b!.uid);
        expect(a!.uid).not.toBe(0);
      }
      const log = await server.request("GET", `/api/v1/projects/${theirs.id}/logs?limit=1000`, {
        token: owner.token,
      });
      const messages = (log.body.log as { level: string; msg: string }[]).map(
        (e) => `${e.level} ${e.msg}`,
      );
      expect(messages.some((m) => m.startsWith("info Server now running"))).toBe(true);
      expect(messages.filter((m) => m.startsWith("error") || m.includes("ENOENT"))).toEqual([]);
    });

    it("is described to administrators, and only to them, in the platform's settings", async () => {
      const admin = await server.request("GET", "/api/v1/settings");
      expect(admin.body["platform:instances:isolation"]).toMatchObject({
        mode: "sandbox",
        user: process.getuid?.() === 0 ? "per-instance" : "platform",
        required: false,
        network:
          process.getuid?.() === 0 && spawnSync("pasta", ["--version"]).status !== null
            ? "own"
            : "host",
      });
      const asMember = await server.request("GET", "/api/v1/settings", { token: member.token });
      expect(asMember.body).not.toHaveProperty("platform:instances:isolation");
    });
  },
);

describe("the editor's sign-in", { timeout: 60_000 }, () => {
  it("refuses a code the platform does not give, whatever it answers, and Node-RED keeps running", async () => {
    const started = await fetch(`${mine.url}/auth/strategy`, { redirect: "manual" });
    expect(started.status).toBe(302);
    const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
    // A made-up code: the platform refuses the exchange (401), the editor refuses the sign-in.
    const forged = await fetch(
      `${mine.url}/auth/strategy/callback?code=fpc_madeup&state=${encodeURIComponent(state)}`,
      { redirect: "manual" },
    );
    expect(forged.status).toBe(403);
    // A state the editor never gave, altered or expired: refused before the platform is asked.
    const [nonce, , mac] = state.split(".");
    for (const unknown of ["never-given-state", `${nonce}.${Date.now() + 60_000}.${mac}`]) {
      const replay = await fetch(`${mine.url}/auth/strategy/callback?code=x&state=${unknown}`, {
        redirect: "manual",
      });
      expect(replay.status).toBe(400);
    }
    // Many sign-ins started and left: Node-RED keeps nothing of them, and keeps running; the
    // first one's state still holds (a made-up code with it reaches the platform, which refuses).
    await Promise.all(
      Array.from({ length: 1_100 }, () =>
        fetch(`${mine.url}/auth/strategy`, { redirect: "manual" }),
      ),
    );
    const late = await fetch(
      `${mine.url}/auth/strategy/callback?code=fpc_madeup&state=${encodeURIComponent(state)}`,
      { redirect: "manual" },
    );
    expect(late.status).toBe(403);
    const status = await server.request("GET", `/api/v1/projects/${mine.id}/status`);
    expect(status.body.meta.state).toBe("running");
    // A person's own token is no credential for the editor.
    expect(
      (await fetch(`${mine.url}/flows`, { headers: { authorization: `Bearer ${member.token}` } }))
        .status,
    ).toBe(401);
  });
});
