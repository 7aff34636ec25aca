// Administrators' platform operations: PUT /settings (stored, audited, honoured by team creation),
// /admin/stats, /admin/invitations; and a team's instance counts (/teams/{id}/instance-counts).
import { Role } from "@flowplane/contract";
import { afterAll, describe, expect, test } from "vitest";
import {
  createApplication,
  createDevice,
  createInstance,
  createInvitation,
  createTeam,
  makeUser,
} from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, teamId } = await serverWithTeam();
afterAll(() => server.close());

const admin = (method: string, path: string, body?: unknown) =>
  server.request(method, path, { token: server.adminToken, body });

describe("PUT /api/v1/settings", () => {
  test("an administrator turns team:create off: others get 403 creating a team, administrators still may, GET says so, and it is logged", async () => {
    const put = await admin("PUT", "/api/v1/settings", { "team:create": false });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ status: "okay" });
    try {
      const settings = await server.request("GET", "/api/v1/settings", { token: owner.token });
      expect(settings.body["team:create"]).toBe(false);
      const refused = await server.request("POST", "/api/v1/teams", {
        token: owner.token,
        body: { name: "Not allowed" },
      });
      expect(refused.status).toBe(403);
      const byAdmin = await admin("POST", "/api/v1/teams", { name: "Allowed" });
      expect(byAdmin.status, byAdmin.text).toBe(200);
      const log = await admin("GET", "/api/v1/admin/audit-log?event=platform.settings.updated");
      expect(log.body.log[0].body).toEqual({
        updates: [{ key: "team:create", old: true, new: false }],
      });
    } finally {
      expect((await admin("PUT", "/api/v1/settings", { "team:create": true })).status).toBe(200);
    }
    const again = await server.request("POST", "/api/v1/teams", {
      token: owner.token,
      body: { name: "Allowed again" },
    });
    expect(again.status, again.text).toBe(200);
  });

  test("an unknown key or a wrong type is 400 and changes nothing; non-administrators 403", async () => {
    for (const body of [{ "user:signup": true }, { "team:create": "no" }]) {
      const reply = await admin("PUT", "/api/v1/settings", body);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
    const refused = await server.request("PUT", "/api/v1/settings", {
      token: owner.token,
      body: { "team:create": false },
    });
    expect(refused.status).toBe(403);
    const settings = await server.request("GET", "/api/v1/settings", { token: owner.token });
    expect(settings.body["team:create"]).toBe(true);
  });
});

describe("GET /api/v1/admin/stats", () => {
  test("counts users, teams, instances and devices as FlowFuse's shape; non-administrators 403", async () => {
    const before = (await admin("GET", "/api/v1/admin/stats")).body;
    const team = (await createTeam(server, owner)).id;
    await createInstance(server, owner, team);
    await createDevice(server, owner, team);
    const stats = await admin("GET", "/api/v1/admin/stats");
    expect(stats.status, stats.text).toBe(200);
    expect(stats.body.teamCount).toBe(before.teamCount + 1);
    expect(stats.body.instanceCount).toBe(before.instanceCount + 1);
    expect(stats.body.instancesByState.running).toBe((before.instancesByState.running ?? 0) + 1);
    expect(stats.body.deviceCount).toBe(before.deviceCount + 1);
    expect(stats.body.devicesByLastSeen.never).toBe(before.devicesByLastSeen.never + 1);
    expect(stats.body.devicesByMode.autonomous).toBe((before.devicesByMode.autonomous ?? 0) + 1);
    expect(stats.body.adminCount).toBeGreaterThanOrEqual(1);
    expect(stats.body.userCount).toBeGreaterThanOrEqual(stats.body.adminCount + 1);
    expect(
      Object.values(stats.body.teamsByType).reduce((a: number, b) => a + (b as number), 0),
    ).toBe(stats.body.teamCount);
    expect(
      (await server.request("GET", "/api/v1/admin/stats", { token: owner.token })).status,
    ).toBe(403);
  });
});

describe("GET /api/v1/admin/invitations", () => {
  test("lists every team's pending invitation with the invitee; non-administrators 403", async () => {
    const invitee = await makeUser(server);
    const id = await createInvitation(server, owner, teamId, invitee);
    const reply = await admin("GET", "/api/v1/admin/invitations");
    expect(reply.status, reply.text).toBe(200);
    const found = reply.body.invitations.find((i: { id: string }) => i.id === id);
    expect(found.team.id).toBe(teamId);
    expect(found.invitee.username).toBe(invitee.username);
    expect(reply.body.count).toBe(reply.body.invitations.length);
    const stats = await admin("GET", "/api/v1/admin/stats");
    expect(stats.body.inviteCount).toBe(reply.body.count);
    const refused = await server.request("GET", "/api/v1/admin/invitations", {
      token: owner.token,
    });
    expect(refused.status).toBe(403);
  });
});

describe("GET /api/v1/teams/{teamId}/instance-counts", () => {
  test("counts hosted instances and devices by state, by application too", async () => {
    const team = (await createTeam(server, owner)).id;
    const instance = await createInstance(server, owner, team);
    await createInstance(server, owner, team);
    const stop = await server.request("POST", `/api/v1/projects/${instance}/actions/stop`, {
      token: owner.token,
    });
    expect(stop.status, stop.text).toBe(200);
    await createDevice(server, owner, team);
    const viewer = await server.user({ teams: [{ id: team, role: Role.dashboard }] });
    const counts = (query: string, token = viewer.token) =>
      server.request("GET", `/api/v1/teams/${team}/instance-counts?${query}`, { token });

    expect((await counts("instanceType=hosted")).body).toEqual({ running: 1, stopped: 1 });
    expect((await counts("instanceType=hosted&state=stopped")).body).toEqual({ stopped: 1 });
    expect((await counts("instanceType=hosted&state=stopped&state=running")).body).toEqual({
      running: 1,
      stopped: 1,
    });
    expect((await counts("instanceType=remote")).body).toEqual({ unknown: 1 });
    const emptyApp = await createApplication(server, owner, team);
    expect((await counts(`instanceType=hosted&applicationId=${emptyApp}`)).body).toEqual({});
  });

  test("a wrong type or state is FlowFuse's 400; another team's owner 404", async () => {
    const path = `/api/v1/teams/${teamId}/instance-counts`;
    const get = (query: string, token = owner.token) =>
      server.request("GET", `${path}?${query}`, { token });
    const noType = await get("");
    expect(noType.status).toBe(400);
    const badType = await get("instanceType=edge");
    expect(badType.status).toBe(400);
    expect(badType.body.code).toBe("invalid_instance_type");
    const badState = await get("instanceType=hosted&state=running&state=flying");
    expect(badState.status).toBe(400);
    expect(badState.body.code).toBe("invalid_state");
    const stranger = await makeUser(server);
    await createTeam(server, stranger);
    expect((await get("instanceType=hosted", stranger.token)).status).toBe(404);
  });
});
