// An application's and an instance's audit logs (FlowFuse's /applications/{id}/audit-log and
// /projects/{id}/audit-log): the events of an instance's life land in them (created, started,
// stopped, snapshots, flows deployed), scope and includeChildren pick FlowFuse's entries, the CSV
// twin, and who may read them.
import { generateToken, tokenDigest } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { TOKEN_SECRET } from "../support/harness";
import { createApplication, createSnapshot, createTeam, makeUser } from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, teamId } = await serverWithTeam();
let applicationId: string;
let instanceId: string;

beforeAll(async () => {
  applicationId = await createApplication(server, owner, teamId);
  const created = await server.request("POST", "/api/v1/projects", {
    token: owner.token,
    body: { name: `logged-${Date.now()}`, applicationId },
  });
  expect(created.status, created.text).toBe(200);
  instanceId = created.body.id;
  const stop = await server.request("POST", `/api/v1/projects/${instanceId}/actions/stop`, {
    token: owner.token,
  });
  expect(stop.status, stop.text).toBe(200);
  const start = await server.request("POST", `/api/v1/projects/${instanceId}/actions/start`, {
    token: owner.token,
  });
  expect(start.status, start.text).toBe(200);
  await createSnapshot(server, owner, instanceId);
});
afterAll(() => server.close());

const events = (reply: { body: { log: { event: string }[] } }) =>
  reply.body.log.map((entry) => entry.event);

async function read(path: string, token = owner.token) {
  const reply = await server.request("GET", path, { token });
  expect(reply.status, reply.text).toBe(200);
  return reply;
}

describe("an instance's log", () => {
  test("holds the instance's life, newest first, each entry scoped to the instance", async () => {
    const reply = await read(`/api/v1/projects/${instanceId}/audit-log`);
    expect(events(reply)).toEqual([
      "project.snapshot.created",
      "project.started",
      "project.stopped",
      "project.created",
    ]);
    for (const entry of reply.body.log) {
      expect(entry.scope).toEqual({ id: instanceId, type: "project" });
    }
    expect(reply.body.count).toBe(4);
  });

  test("records flows Node-RED saves (a deploy) as `flows.set`", async () => {
    // The instance's own token, as its Node-RED is given one when it starts.
    const token = generateToken("instance");
    await server.db
      .updateTable("projects")
      .set({ token_digest: tokenDigest(TOKEN_SECRET, token) })
      .where("id", "=", instanceId)
      .execute();
    const saved = await fetch(`${server.url}/storage/${instanceId}/flows`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify([{ id: "tab1", type: "tab" }]),
    });
    expect(saved.status).toBe(204);
    const reply = await read(`/api/v1/projects/${instanceId}/audit-log?event=flows.set`);
    expect(reply.body.log).toHaveLength(1);
    expect(reply.body.log[0].trigger.type).toBe("system");
  });

  test("filters, pages and exports as the team's log", async () => {
    const page = await read(`/api/v1/projects/${instanceId}/audit-log?limit=2`);
    expect(page.body.log).toHaveLength(2);
    const next = await read(
      `/api/v1/projects/${instanceId}/audit-log?limit=2&cursor=${page.body.meta.next_cursor}`,
    );
    expect(next.body.log[0].id).not.toBe(page.body.log[1].id);
    const started = await read(`/api/v1/projects/${instanceId}/audit-log?event=project.started`);
    expect(events(started)).toEqual(["project.started"]);
    const csv = await read(`/api/v1/projects/${instanceId}/audit-log/export?event=project.created`);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const lines = csv.text.split("\r\n");
    expect(lines[0]).toBe("id,event,body,scope,trigger,createdAt");
    expect(lines[1]).toContain('""project.created""');
  });

  test("`scope=device` reads its devices' entries; a scope it has not is 400", async () => {
    const devices = await read(`/api/v1/projects/${instanceId}/audit-log?scope=device`);
    expect(devices.body.log).toEqual([]);
    const team = await server.request(
      "GET",
      `/api/v1/projects/${instanceId}/audit-log?scope=team`,
      {
        token: owner.token,
      },
    );
    expect(team.status).toBe(400);
    expect(team.body.code).toBe("invalid_request");
  });
});

describe("an application's log", () => {
  test("holds the application's own entries; `scope=project` its instances'; `includeChildren` both", async () => {
    const own = await read(`/api/v1/applications/${applicationId}/audit-log`);
    expect(events(own)).toEqual(["application.created"]);
    const instances = await read(`/api/v1/applications/${applicationId}/audit-log?scope=project`);
    expect(events(instances)).toContain("project.created");
    expect(events(instances)).not.toContain("application.created");
    const all = await read(`/api/v1/applications/${applicationId}/audit-log?includeChildren=true`);
    expect(events(all)).toContain("application.created");
    expect(events(all)).toContain("project.snapshot.created");
    const csv = await read(`/api/v1/applications/${applicationId}/audit-log/export`);
    expect(csv.text.split("\r\n")[1]).toContain('""application.created""');
  });

  test("another application's entries are not in it", async () => {
    const other = await createApplication(server, owner, teamId);
    const reply = await read(`/api/v1/applications/${other}/audit-log?includeChildren=1`);
    expect(reply.body.log).toHaveLength(1);
    expect(reply.body.log[0].scope).toEqual({ id: other, type: "application" });
  });
});

describe("who may read them", () => {
  test("the application's: owners (members 403); the instance's: viewers and up (dashboard 403); another team's owner 404", async () => {
    const member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
    const viewer = await server.user({ teams: [{ id: teamId, role: Role.viewer }] });
    const dashboard = await server.user({ teams: [{ id: teamId, role: Role.dashboard }] });
    const stranger = await makeUser(server);
    await createTeam(server, stranger);
    const app = `/api/v1/applications/${applicationId}/audit-log`;
    const inst = `/api/v1/projects/${instanceId}/audit-log`;
    const status = async (path: string, token: string) =>
      (await server.request("GET", path, { token })).status;

    expect(await status(app, member.token)).toBe(403);
    expect(await status(`${app}/export`, member.token)).toBe(403);
    expect(await status(inst, viewer.token)).toBe(200);
    expect(await status(`${inst}/export`, viewer.token)).toBe(200);
    expect(await status(inst, dashboard.token)).toBe(403);
    for (const path of [app, `${app}/export`, inst, `${inst}/export`]) {
      expect(await status(path, stranger.token)).toBe(404);
    }
  });
});
