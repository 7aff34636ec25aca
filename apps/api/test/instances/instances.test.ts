// Applications and hosted instances through the real server, with real Node-RED processes: create,
// see the editor answer only to the team, deploy a flow that the platform stores, stop, start,
// restart, suspend, read the log, change a variable and see it after a restart, restart the
// platform and find the instance running again, and delete it without a trace.
import { createTestDb, type TestDb } from "@flowplane/db/testing";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deployFlows, editorToken, startServer, type TestServer } from "../support/harness";
import { nodeRedPid } from "../support/node-red-process";
import { type Person, teamOfRoles } from "../support/team-of-roles";

let testDb: TestDb;
let dataDir: string;
let server: TestServer;
/** The team's owner, a member and a viewer of it, and a user of no team of it (teamOfRoles). */
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let applicationId: string;
let instanceId: string;
const password = "a long editor password";

/** An HTTP-in flow answering GET /env with the instance's GREETING variable. */
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
 * Waits for what the API or the system reports, however long a loaded machine takes: no deadline
 * of its own (a guess), the test's timeout bounds it and then names what was awaited.
 */
let awaiting = "";
async function until<T>(what: string, check: () => Promise<T | undefined>) {
  awaiting = what;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const stateOf = async (id = instanceId) =>
  (await server.request("GET", `/api/v1/projects/${id}/status`)).body.meta.state as string;

const waitForState = (state: string, id = instanceId) =>
  until(`state ${state}`, async () => ((await stateOf(id)) === state ? true : undefined));

async function instance(id = instanceId) {
  const reply = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
  expect(reply.status).toBe(200);
  return reply.body;
}

/** What the flow's GET /env answers, once Node-RED has started its flows. */
async function greeting(url: string): Promise<string> {
  return until("the flow", async () => {
    const response = await fetch(`${url}/env`).catch(() => undefined);
    return response?.status === 200 ? response.text() : undefined;
  });
}

/**
 * A deleted instance's editor host: nothing of Node-RED answers there, only the platform's proxy
 * (503 while it still knows the name, for a few seconds), then 404: no instance has the name.
 */
async function editorGone(url: string) {
  expect([404, 503]).toContain((await fetch(`${url}/settings`)).status);
  await until("no instance named by the editor's host", async () =>
    (await fetch(`${url}/settings`)).status === 404 ? true : undefined,
  );
}

async function act(action: string, token = owner.token, id = instanceId) {
  return server.request("POST", `/api/v1/projects/${id}/actions/${action}`, { token });
}

async function start() {
  server = await startServer({ db: testDb, dataDir, instances: true });
}

beforeAll(async () => {
  testDb = await createTestDb();
  dataDir = await mkdtemp(join(tmpdir(), "flowplane-instances-"));
  await start();
  const created = await server.request("POST", "/api/v1/users", {
    body: { username: "ivy", name: "Ivy Owner", password },
  });
  expect(created.status).toBe(200);
  const tokenOf = async (username: string) => {
    const login = await fetch(`${server.url}/account/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.origin },
      body: JSON.stringify({ username, password }),
    });
    const cookie = login.headers.getSetCookie()[0]!.split(";")[0]!;
    const reply = await server.request("POST", "/api/v1/user/tokens", {
      token: null,
      headers: { cookie, origin: server.origin },
      body: { name: "test" },
    });
    return reply.body.token as string;
  };
  const ivy = { id: created.body.id, token: await tokenOf("ivy") };
  ({ teamId, owner, member, viewer, outsider } = await teamOfRoles(server, "Flows", ivy));
}, 60_000);

afterEach((context) => {
  if (context.task.result?.state === "fail" && awaiting) {
    context.task.result.errors?.push({ message: `last awaited: ${awaiting}` } as never);
  }
});

afterAll(async () => {
  await server?.close();
  await testDb?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("applications", () => {
  it("an owner creates one; the team lists it; viewers read it; members cannot change it", async () => {
    const created = await server.request("POST", "/api/v1/applications", {
      token: owner.token,
      body: { name: "Line 1", teamId, description: "The first line" },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "Line 1",
      description: "The first line",
      team: { id: teamId },
    });
    applicationId = created.body.id;

    const read = await server.request("GET", `/api/v1/applications/${applicationId}`, {
      token: viewer.token,
    });
    expect(read.body.name).toBe("Line 1");
    const renamed = await server.request("PUT", `/api/v1/applications/${applicationId}`, {
      token: member.token,
      body: { name: "Nope" },
    });
    expect(renamed.status).toBe(403);
    const hidden = await server.request("GET", `/api/v1/applications/${applicationId}`, {
      token: outsider.token,
    });
    expect(hidden.status).toBe(404);

    const list = await server.request("GET", `/api/v1/teams/${teamId}/applications`, {
      token: viewer.token,
    });
    expect(list.body).toMatchObject({
      count: 1,
      applications: [{ id: applicationId, instances: [] }],
    });
  });
});

describe("a hosted instance", { timeout: 120_000 }, () => {
  it("is created with the platform's defaults and starts a real Node-RED behind its own editor host", async () => {
    const free = await server.request("POST", "/api/v1/projects/check-name", {
      token: owner.token,
      body: { name: "line-one" },
    });
    expect(free.body).toEqual({ available: true });

    const created = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: "line-one", applicationId },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "line-one",
      application: { id: applicationId },
      team: { id: teamId },
      stack: { properties: { nodered: "4.1.15" } },
      meta: { state: "starting" },
    });
    instanceId = created.body.id;
    expect(instanceId).toMatch(/^[0-9a-f-]{36}$/);

    await waitForState("running");
    const running = await instance();
    // Served by the platform's proxy on a host of its own, on the platform's port.
    expect(running.url).toBe(`http://line-one.localhost:${new URL(server.url).port}`);
    expect(running.settings.env.map((v: { name: string }) => v.name)).toEqual([
      "FF_INSTANCE_ID",
      "FF_INSTANCE_NAME",
      "FF_INSTANCE_URL",
      "FF_PROJECT_ID",
      "FF_PROJECT_NAME",
    ]);

    const taken = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: "LINE-ONE", applicationId },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe("invalid_project_name");
    const reserved = await server.request("POST", "/api/v1/projects/check-name", {
      token: owner.token,
      body: { name: "Broker" },
    });
    expect(reserved.status).toBe(409);
  });

  it("answers its editor's admin API only to the team: instance-bound tokens by role, no password", async () => {
    const { url, id } = await instance();
    expect((await fetch(`${url}/settings`)).status).toBe(401);
    const flowsWith = async (token: string) =>
      (await fetch(`${url}/flows`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await flowsWith(outsider.token)).toBe(401);
    expect(await flowsWith("fpp_notarealtoken")).toBe(401);
    // A person's own token never reaches the editor, whatever the role.
    expect(await flowsWith(viewer.token)).toBe(401);
    expect(await flowsWith(member.token)).toBe(401);
    expect(await flowsWith(owner.token)).toBe(401);
    // Nor does anyone outside the team get a token for it.
    const foreign = await server.request("POST", `/api/v1/projects/${id}/editor/token`, {
      token: outsider.token,
    });
    expect(foreign.status).toBe(404);

    // A viewer's instance-bound token reads and cannot deploy.
    const asViewer = await editorToken(server, id, viewer.token);
    expect(asViewer.url).toBe(url);
    expect(await flowsWith(asViewer.token)).toBe(200);
    const refused = await fetch(`${url}/flows`, {
      method: "POST",
      headers: { authorization: `Bearer ${asViewer.token}`, "content-type": "application/json" },
      body: "[]",
    });
    // Node-RED answers a permission it does not grant with 401.
    expect(refused.status).toBe(401);

    // A person signs in to the editor on the platform's page, never with a password in the editor:
    // Node-RED's password grant is refused, the right password as well as a wrong one.
    const grant = (secret: string) =>
      fetch(`${url}/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_id: "node-red-editor",
          grant_type: "password",
          scope: "*",
          username: "ivy",
          password: secret,
        }),
      });
    const withPassword = await grant(password);
    expect(withPassword.status).not.toBe(200);
    expect(await withPassword.text()).not.toMatch(/access_token/);
    expect((await grant("not the password")).status).not.toBe(200);
    expect(await stateOf()).toBe("running");

    // The platform's page: the editor sends the browser there, and it comes back with a code that
    // the editor exchanges for its session.
    const sid = await server.signIn("ivy", password);
    const get = (target: string, cookie?: string) =>
      fetch(target, { redirect: "manual", headers: cookie ? { cookie: `sid=${cookie}` } : {} });
    const authorize = (await get(`${url}/auth/strategy`)).headers.get("location")!;
    expect(new URL(authorize).origin).toBe(server.origin);
    const page = await get(authorize, sid);
    expect(page.status).toBe(302);
    const done = await get(page.headers.get("location")!);
    const next = new URL(done.headers.get("location") ?? "", url);
    const accessToken = next.searchParams.get("access_token");
    expect(accessToken).toMatch(/^fpe_/);
    expect(await flowsWith(accessToken!)).toBe(200);
  });

  it("deploys a flow through the admin API, which the platform stores", async () => {
    const { url, id } = await instance();
    const deployed = await deployFlows(server, id, member.token, GREETING_FLOW);
    expect(deployed.status).toBe(204);
    const stored = await server.db
      .selectFrom("project_storage")
      .select(["flows", "flows_updated_at"])
      .where("project_id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect((stored.flows as { id: string }[]).map((node) => node.id)).toEqual(
      GREETING_FLOW.map((node) => node.id),
    );
    expect(stored.flows_updated_at).not.toBeNull();
    expect(await greeting(url)).toBe("none");
    expect((await instance()).flowLastUpdatedAt).not.toBeNull();
  });

  it("keeps its library in the platform: an entry saved in the editor is listed and read back", async () => {
    const { url, id } = await instance();
    const asMember = {
      authorization: `Bearer ${(await editorToken(server, id, member.token)).token}`,
    };
    const saved = await fetch(`${url}/library/local/functions/tools/greet`, {
      method: "POST",
      headers: { ...asMember, "content-type": "application/json" },
      body: JSON.stringify({ text: "return msg;", outputs: 1 }),
    });
    expect(saved.status).toBe(204);
    const top = await fetch(`${url}/library/local/functions/`, { headers: asMember });
    expect(await top.json()).toEqual(["tools"]);
    const dir = await fetch(`${url}/library/local/functions/tools/`, { headers: asMember });
    expect(await dir.json()).toEqual([{ fn: "greet", outputs: 1 }]);
    const file = await fetch(`${url}/library/local/functions/tools/greet`, { headers: asMember });
    expect(await file.text()).toBe("return msg;");
  });

  it("takes a member's variable (not a viewer's) and sees it inside Node-RED after a restart", async () => {
    const fromViewer = await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: viewer.token,
      body: { settings: { env: [{ name: "GREETING", value: "nope" }] } },
    });
    expect(fromViewer.status).toBe(403);
    const rename = await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: member.token,
      body: { name: "renamed" },
    });
    expect(rename.status).toBe(403);

    const changed = await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: member.token,
      body: {
        settings: {
          env: [
            { name: "GREETING", value: "hello" },
            { name: "SECRET", value: "s3cret", hidden: true },
            { name: "FF_INSTANCE_ID", value: "forged" },
          ],
        },
      },
    });
    expect(changed.status).toBe(200);
    const env = changed.body.settings.env as { name: string; value: string; hidden: boolean }[];
    expect(env.find((v) => v.name === "SECRET")).toEqual({
      name: "SECRET",
      value: "",
      hidden: true,
    });
    expect(env.find((v) => v.name === "FF_INSTANCE_ID")?.value).toBe(instanceId);

    // A hidden variable sent back blank keeps its value.
    await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: member.token,
      body: { settings: { env } },
    });
    const row = await server.db
      .selectFrom("projects")
      .select("settings")
      .where("id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(row.settings.env).toEqual([
      { name: "GREETING", value: "hello", hidden: false },
      { name: "SECRET", value: "s3cret", hidden: true },
    ]);

    const { url } = await instance();
    expect((await act("restart", member.token)).status).toBe(403);
    expect((await act("restart")).status).toBe(200);
    expect(await stateOf()).toBe("running");
    // The same address after a restart.
    expect((await instance()).url).toBe(url);
    expect(await greeting(url)).toBe("hello");
  });

  it("stops, starts, restarts and suspends with FlowFuse's states and codes", async () => {
    const { url } = await instance();
    expect((await act("stop")).status).toBe(200);
    expect(await stateOf()).toBe("stopped");
    // The platform's proxy answers for an editor that is not running.
    expect((await fetch(`${url}/settings`)).status).toBe(503);

    expect((await act("start")).status).toBe(200);
    expect(await stateOf()).toBe("running");
    expect(await greeting(url)).toBe("hello");

    expect((await act("suspend")).status).toBe(200);
    expect(await stateOf()).toBe("suspended");
    // Its editor's host stays its own; nothing of Node-RED answers there while suspended.
    expect((await instance()).url).toBe(url);
    expect((await fetch(`${url}/settings`)).status).toBe(503);
    for (const action of ["stop", "restart", "suspend"]) {
      const refused = await act(action);
      expect(refused.status, action).toBe(400);
      expect(refused.body.code).toBe("project_suspended");
    }
    expect((await act("start")).status).toBe(200);
    expect(await stateOf()).toBe("running");
    expect(await greeting((await instance()).url)).toBe("hello");
  });

  it("serializes actions sent at once: every one is done, one after the other", async () => {
    const replies = await Promise.all([act("stop"), act("start"), act("restart")]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
    const state = await stateOf();
    expect(["running", "stopped"]).toContain(state);
    const row = await server.db
      .selectFrom("projects")
      .select(["in_flight", "state"])
      .where("id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(row.in_flight).toBeNull();
    if (row.state === "stopped") expect((await act("start")).status).toBe(200);
  });

  it("keeps its Node-RED log, paged by cursor", async () => {
    const newest = await server.request("GET", `/api/v1/projects/${instanceId}/logs?limit=5`, {
      token: viewer.token,
    });
    expect(newest.status).toBe(200);
    expect(newest.body.log).toHaveLength(5);
    const all = await server.request("GET", `/api/v1/projects/${instanceId}/logs?limit=1000`);
    const messages = (all.body.log as { msg: string }[]).map((entry) => entry.msg);
    expect(messages.some((msg) => msg.startsWith("Server now running"))).toBe(true);
    expect(messages.some((msg) => msg.startsWith("Starting Node-RED"))).toBe(true);

    const older = await server.request(
      "GET",
      `/api/v1/projects/${instanceId}/logs?limit=5&cursor=${newest.body.meta.previous_cursor}`,
    );
    // Relative to the entries read first: Node-RED may have logged more since.
    const at = all.body.log.findIndex((e: { ts: number }) => e.ts === newest.body.log[0].ts);
    expect(older.body.log).toEqual(all.body.log.slice(at - 5, at));
    const after = await server.request(
      "GET",
      `/api/v1/projects/${instanceId}/logs?cursor=${newest.body.meta.next_cursor}`,
    );
    const last = newest.body.log.at(-1).ts as number;
    expect(after.body.log.every((e: { ts: number }) => e.ts > last)).toBe(true);
  });

  it("comes back running when the platform restarts, its flow read from the platform", async () => {
    await server.close();
    await start();
    await waitForState("running");
    expect(await greeting((await instance()).url)).toBe("hello");
  });

  it("shows a Node-RED that dies as crashed, with its log", async () => {
    const pid = await nodeRedPid(instanceId);
    process.kill(pid, "SIGKILL");
    await waitForState("crashed");
    // Why, in its log: not necessarily the newest entry, as what Node-RED itself wrote as it went
    // (its flows stopping when its sandbox's end closed its input) may be read after the exit.
    const log = await server.request("GET", `/api/v1/projects/${instanceId}/logs?limit=50`);
    expect(log.body.log.map((entry: { msg: string }) => entry.msg)).toContain(
      "Node-RED exited unexpectedly (killed by SIGKILL)",
    );
    expect((await act("start")).status).toBe(200);
    expect(await stateOf()).toBe("running");
  });

  it("cannot be seen by non-members, nor changed by viewers", async () => {
    for (const [method, path] of [
      ["GET", `/api/v1/projects/${instanceId}`],
      ["GET", `/api/v1/projects/${instanceId}/logs`],
      ["POST", `/api/v1/projects/${instanceId}/actions/stop`],
      ["DELETE", `/api/v1/projects/${instanceId}`],
    ] as const) {
      expect((await server.request(method, path, { token: outsider.token })).status, path).toBe(
        404,
      );
    }
    expect((await act("stop", viewer.token)).status).toBe(403);
    expect(
      (await server.request("DELETE", `/api/v1/projects/${instanceId}`, { token: viewer.token }))
        .status,
    ).toBe(403);
  });

  it("keeps its application from being deleted, and is deleted without a trace", async () => {
    const refused = await server.request("DELETE", `/api/v1/applications/${applicationId}`, {
      token: owner.token,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("invalid_application");

    const { url } = await instance();
    const deleted = await server.request("DELETE", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(200);
    await editorGone(url);
    await expect(stat(join(dataDir, "instances", instanceId))).rejects.toThrow();
    const storage = await server.db
      .selectFrom("project_storage")
      .select("project_id")
      .where("project_id", "=", instanceId)
      .execute();
    expect(storage).toEqual([]);
    expect((await server.request("GET", `/api/v1/projects/${instanceId}`)).status).toBe(404);

    const events = await server.db
      .selectFrom("audit_log")
      .select("event")
      .where("entity_id", "=", instanceId)
      .execute();
    expect(new Set(events.map((e) => e.event))).toEqual(
      new Set([
        "project.created",
        "project.settings.updated",
        "project.started",
        "project.stopped",
        "project.restarted",
        "project.suspended",
        "project.deleted",
        // Its Node-RED saved the flows deployed to it.
        "flows.set",
      ]),
    );
    expect(
      (
        await server.request("DELETE", `/api/v1/applications/${applicationId}`, {
          token: owner.token,
        })
      ).status,
    ).toBe(200);
  });

  it("goes with its team: deleting the team removes its Node-RED and files", async () => {
    const team = await server.request("POST", "/api/v1/teams", {
      token: owner.token,
      body: { name: "Short-lived" },
    });
    const app = await server.request("POST", "/api/v1/applications", {
      token: owner.token,
      body: { name: "Temp", teamId: team.body.id },
    });
    const created = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: "short-lived", applicationId: app.body.id },
    });
    const id = created.body.id as string;
    await waitForState("running", id);
    const { url } = await instance(id);
    expect((await fetch(`${url}/settings`)).status).toBe(401);

    const deleted = await server.request("DELETE", `/api/v1/teams/${team.body.id}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(200);
    await editorGone(url);
    await expect(stat(join(dataDir, "instances", id))).rejects.toThrow();
    expect((await server.request("GET", `/api/v1/projects/${id}`)).status).toBe(404);
  });
});
