// Snapshots with real Node-RED processes (in their sandboxes where bubblewrap is installed): an
// instance whose flow uses a credential, a variable and a node installed from the palette (from
// the npm registry, inside the sandbox) is snapshotted, changed, rolled back — and its HTTP
// endpoint answers as before, the credential decrypted, the node installed again; the snapshot
// exported with a secret and imported into a second instance of the team answers the same; a
// rollback to a snapshot whose module cannot be installed fails clearly and leaves the instance
// running what it ran; another team's member gets 404 on every snapshot route.
import { Role } from "@flowplane/contract";
import { createTestDb, type TestDb } from "@flowplane/db/testing";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployFlows, editorToken, startServer, type TestServer } from "../support/harness";
import { createApplication, createTeam, makeUser, type TestUser } from "../support/team-fixtures";
import { waiter } from "../support/until";

let testDb: TestDb;
let dataDir: string;
let server: TestServer;
let owner: TestUser;
let member: { token: string };
let outsider: TestUser;
let teamId: string;
let applicationId: string;

/** A node from the npm registry: no dependencies, small; its `random` node gives 7 from 7 to 7. */
const MODULE = "node-red-node-random";
const MODULE_VERSION = "0.4.1";

/**
 * A server of the test's on the host's loopback, answering GET /echo with the HTTP basic
 * authentication it was sent (`user:password`): instances reach it at the same port of their own
 * 127.0.0.1 (forwarded into their network, as the platform's broker is).
 */
let echo: Server;
let echoPort: number;

/**
 * GET /check calls the test's GET /echo with HTTP basic authentication (the credential), the
 * palette's random node adds 7, and the answer carries the GREETING variable.
 */
const flow = () => [
  { id: "tab1", type: "tab", label: "Snapshot" },
  { id: "in1", type: "http in", z: "tab1", url: "/check", method: "get", wires: [["url1"]] },
  {
    id: "url1",
    type: "function",
    z: "tab1",
    func: `msg.url = "http://127.0.0.1:${echoPort}/echo"; return msg;`,
    outputs: 1,
    wires: [["req1"]],
  },
  {
    id: "req1",
    type: "http request",
    z: "tab1",
    method: "GET",
    ret: "txt",
    url: "",
    authType: "basic",
    credentials: { user: "alice", password: "s3cret-credential" },
    wires: [["rnd1"]],
  },
  {
    id: "rnd1",
    type: "random",
    z: "tab1",
    low: "7",
    high: "7",
    inte: "true",
    property: "rnd",
    wires: [["fn1"]],
  },
  {
    id: "fn1",
    type: "function",
    z: "tab1",
    func: 'msg.payload = env.get("GREETING") + "|" + msg.payload + "|" + msg.rnd; return msg;',
    outputs: 1,
    wires: [["out1"]],
  },
  { id: "out1", type: "http response", z: "tab1", wires: [] },
];
const CHANGED_FLOW = [
  { id: "tab9", type: "tab", label: "Changed" },
  { id: "in9", type: "http in", z: "tab9", url: "/check", method: "get", wires: [["fn9"]] },
  {
    id: "fn9",
    type: "function",
    z: "tab9",
    func: 'msg.payload = "changed"; return msg;',
    outputs: 1,
    wires: [["out9"]],
  },
  { id: "out9", type: "http response", z: "tab9", wires: [] },
];
const EXPECTED = "hello|alice:s3cret-credential|7";

const until = waiter(60_000);

/** Headers for a member's call to the instance's editor: an instance-bound token of theirs. */
const editor = async (id: string) => ({
  authorization: `Bearer ${(await editorToken(server, id, member.token)).token}`,
  "content-type": "application/json",
});

async function createInstance(name: string) {
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
  return id;
}

async function urlOf(id: string): Promise<string> {
  const reply = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
  return reply.body.url as string;
}

/** What GET /check answers, once it answers what is expected (or the wait runs out). */
async function check(id: string, expected: string): Promise<string> {
  const url = await urlOf(id);
  let last = "";
  try {
    return await until(`/check answering ${expected}`, async () => {
      const response = await fetch(`${url}/check`).catch(() => undefined);
      last = response ? `${response.status} ${await response.text()}` : "no answer";
      return last === `200 ${expected}` ? expected : undefined;
    });
  } catch {
    return last;
  }
}

async function deploy(id: string, flow: unknown[]) {
  await urlOf(id);
  const deployed = await deployFlows(server, id, member.token, flow);
  expect(deployed.status, await deployed.text()).toBe(204);
}

async function setGreeting(id: string, value: string) {
  const set = await server.request("PUT", `/api/v1/projects/${id}`, {
    token: member.token,
    body: { settings: { env: [{ name: "GREETING", value }] } },
  });
  expect(set.status, set.text).toBe(200);
  const restarted = await server.request("POST", `/api/v1/projects/${id}/actions/restart`, {
    token: owner.token,
  });
  expect(restarted.status, restarted.text).toBe(200);
}

async function rollback(id: string, snapshot: string) {
  return server.request("POST", `/api/v1/projects/${id}/actions/rollback`, {
    token: member.token,
    body: { snapshot },
  });
}

beforeAll(async () => {
  testDb = await createTestDb();
  dataDir = await mkdtemp(join(tmpdir(), "flowplane-snapshots-"));
  echo = createServer((request, response) => {
    const basic = (request.headers.authorization ?? "").replace(/^Basic /, "");
    response.writeHead(request.url === "/echo" ? 200 : 404, { "content-type": "text/plain" });
    response.end(request.url === "/echo" ? Buffer.from(basic, "base64").toString() : "");
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoPort = (echo.address() as AddressInfo).port;
  server = await startServer({
    db: testDb,
    dataDir,
    instances: true,
    instanceHostPorts: [echoPort],
  });
  owner = await makeUser(server);
  teamId = (await createTeam(server, owner)).id;
  member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
  outsider = await makeUser(server);
  await createTeam(server, outsider);
  applicationId = await createApplication(server, owner, teamId);
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (echo) {
    echo.closeAllConnections();
    await new Promise((resolve) => echo.close(resolve));
  }
  await testDb?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("a snapshot of a running instance", { timeout: 600_000 }, () => {
  let first: string;
  let snapshotId: string;

  it("a node installed from the palette is installed in the sandbox and kept in the instance's settings", async () => {
    first = await createInstance("snap-first");
    await setGreeting(first, "hello");
    const installed = await fetch(`${await urlOf(first)}/nodes`, {
      method: "POST",
      headers: await editor(first),
      body: JSON.stringify({ module: MODULE, version: MODULE_VERSION }),
    });
    expect(installed.status, await installed.text()).toBe(200);
    const modules = await until("the module in the instance's settings", async () => {
      const reply = await server.request("GET", `/api/v1/projects/${first}`, {
        token: owner.token,
      });
      const found = reply.body.settings.palette?.modules;
      return found?.[MODULE] ? found : undefined;
    });
    expect(modules).toEqual({ [MODULE]: MODULE_VERSION });

    await deploy(first, flow());
    expect(await check(first, EXPECTED)).toBe(EXPECTED);
  });

  it("rollback brings back the flow, its credential, the variable and the palette's node", async () => {
    const taken = await server.request("POST", `/api/v1/projects/${first}/snapshots`, {
      token: member.token,
      body: { name: "Working" },
    });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body.modules).toEqual({ "node-red": "4.1.15", [MODULE]: MODULE_VERSION });
    expect(taken.text).not.toContain("s3cret-credential");
    snapshotId = taken.body.id;

    // The instance changes: another flow, another greeting, and the node removed.
    await deploy(first, CHANGED_FLOW);
    const removed = await fetch(`${await urlOf(first)}/nodes/${MODULE}`, {
      method: "DELETE",
      headers: await editor(first),
    });
    expect(removed.status, await removed.text()).toBe(204);
    await until("the module gone from the instance's settings", async () => {
      const reply = await server.request("GET", `/api/v1/projects/${first}`, {
        token: owner.token,
      });
      return reply.body.settings.palette?.modules?.[MODULE] ? undefined : true;
    });
    await setGreeting(first, "bye");
    expect(await check(first, "changed")).toBe("changed");

    const rolled = await rollback(first, snapshotId);
    expect(rolled.status, rolled.text).toBe(200);
    expect(await check(first, EXPECTED)).toBe(EXPECTED);
    const instance = await server.request("GET", `/api/v1/projects/${first}`, {
      token: owner.token,
    });
    expect(instance.body.settings.palette.modules).toEqual({ [MODULE]: MODULE_VERSION });
    expect(instance.body.meta.state).toBe("running");
  });

  it("exported with a secret and imported into a second instance of the team, it answers the same", async () => {
    const exported = await server.request("POST", `/api/v1/snapshots/${snapshotId}/export`, {
      token: member.token,
      body: { credentialSecret: "a secret of the caller's" },
    });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.text).not.toContain("s3cret-credential");

    const second = await createInstance("snap-second");
    const { flows, settings, name, description } = exported.body;
    const imported = await server.request("POST", "/api/v1/snapshots/import", {
      token: owner.token,
      body: {
        ownerId: second,
        ownerType: "instance",
        snapshot: { name, description, flows, settings },
        credentialSecret: "a secret of the caller's",
      },
    });
    expect(imported.status, imported.text).toBe(200);
    const rolled = await rollback(second, imported.body.id);
    expect(rolled.status, rolled.text).toBe(200);
    expect(await check(second, EXPECTED)).toBe(EXPECTED);
  });

  it("a rollback whose module cannot be installed fails clearly and leaves the instance as it was", async () => {
    const broken = await server.request("POST", `/api/v1/projects/${first}/snapshots`, {
      token: member.token,
      body: {
        name: "Broken",
        settings: {
          modules: { "node-red": "4.1.15", "node-red-contrib-flowplane-no-such-module": "1.0.0" },
        },
      },
    });
    expect(broken.status, broken.text).toBe(200);
    const rolled = await rollback(first, broken.body.id);
    expect(rolled.status).toBe(400);
    expect(rolled.body.code).toBe("module_install_failed");
    expect(rolled.body.error).toContain("node-red-contrib-flowplane-no-such-module");

    // Still what it ran: the flow answers, the modules are the ones it had.
    expect(await check(first, EXPECTED)).toBe(EXPECTED);
    const instance = await server.request("GET", `/api/v1/projects/${first}`, {
      token: owner.token,
    });
    expect(instance.body.meta.state).toBe("running");
    expect(instance.body.settings.palette.modules).toEqual({ [MODULE]: MODULE_VERSION });
    const logs = await server.request("GET", `/api/v1/projects/${first}/logs?limit=200`, {
      token: owner.token,
    });
    const text = logs.body.log.map((entry: { msg: string }) => entry.msg).join("\n");
    expect(text).toContain(
      "Not started: Could not install node-red-contrib-flowplane-no-such-module",
    );
    expect(text).toMatch(/npm: .*(E404|404)/);
  });

  it("a restart on a fresh machine installs the modules again", async () => {
    // The instance's user directory loses its modules (a new machine, a moved instance).
    await server.request("POST", `/api/v1/projects/${first}/actions/stop`, { token: owner.token });
    await rm(join(dataDir, "instances", first, "userDir", "node_modules"), {
      recursive: true,
      force: true,
    });
    const started = await server.request("POST", `/api/v1/projects/${first}/actions/start`, {
      token: owner.token,
    });
    expect(started.status, started.text).toBe(200);
    expect(await check(first, EXPECTED)).toBe(EXPECTED);
    const manifest = JSON.parse(
      await readFile(join(dataDir, "instances", first, "userDir", "package.json"), "utf8"),
    );
    expect(manifest.dependencies).toEqual({ [MODULE]: MODULE_VERSION });
    const logs = await server.request("GET", `/api/v1/projects/${first}/logs?limit=50`, {
      token: owner.token,
    });
    const text = logs.body.log.map((entry: { msg: string }) => entry.msg).join("\n");
    expect(text).toContain(`Installing ${MODULE}@${MODULE_VERSION}`);
    expect(text).toContain("Modules installed");
  });

  it("an instance type can turn the palette off: its editor installs nothing", async () => {
    const type = await server.request("POST", "/api/v1/project-types", {
      body: { name: "No palette", properties: { palette: { allowInstall: false } } },
    });
    expect(type.status, type.text).toBe(200);
    const stack = await server.request("POST", "/api/v1/stacks", {
      body: {
        name: "no-palette-4.1",
        projectType: type.body.id,
        properties: { nodered: "4.1.15" },
      },
    });
    expect(stack.status, stack.text).toBe(200);
    const created = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: {
        name: "snap-no-palette",
        applicationId,
        projectType: type.body.id,
        stack: stack.body.id,
      },
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    await until("running", async () => {
      const reply = await server.request("GET", `/api/v1/projects/${id}/status`);
      return reply.body.meta.state === "running" ? true : undefined;
    });
    const refused = await fetch(`${await urlOf(id)}/nodes`, {
      method: "POST",
      headers: await editor(id),
      body: JSON.stringify({ module: MODULE, version: MODULE_VERSION }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const instance = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
    expect(instance.body.settings.palette.modules).toEqual({});
  });

  it("another team's member gets 404 on every snapshot route", async () => {
    const paths: [string, string, unknown?][] = [
      ["GET", `/api/v1/projects/${first}/snapshots`],
      ["POST", `/api/v1/projects/${first}/snapshots`, { name: "x" }],
      ["GET", `/api/v1/projects/${first}/snapshots/${snapshotId}`],
      ["DELETE", `/api/v1/projects/${first}/snapshots/${snapshotId}`],
      [
        "POST",
        `/api/v1/projects/${first}/snapshots/${snapshotId}/export`,
        { credentialSecret: "a long secret" },
      ],
      ["GET", `/api/v1/snapshots/${snapshotId}`],
      ["GET", `/api/v1/snapshots/${snapshotId}/full`],
      ["PUT", `/api/v1/snapshots/${snapshotId}`, { name: "x" }],
      ["DELETE", `/api/v1/snapshots/${snapshotId}`],
      ["POST", `/api/v1/snapshots/${snapshotId}/export`, { credentialSecret: "a long secret" }],
      ["POST", `/api/v1/projects/${first}/actions/rollback`, { snapshot: snapshotId }],
      ["GET", `/api/v1/projects/${first}/devices/settings`],
      ["POST", `/api/v1/projects/${first}/devices/settings`, { targetSnapshot: snapshotId }],
    ];
    for (const [method, path, body] of paths) {
      const reply = await server.request(method, path, {
        token: outsider.token,
        ...(body ? { body } : {}),
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
  });
});
