// Many devices at once through the real server (FlowFuse's /teams/{teamId}/devices/bulk): moved to
// an application or an instance, unassigned, put in or taken out of device groups, deleted — all
// or nothing, only the team's devices and targets, only by owners — with FlowFuse's audit events.
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createApplication,
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team, member, viewer } = await serverWithTeam({ member: 30, viewer: 10 });
let other: { owner: TestUser; team: TestTeam; applicationId: string; deviceId: string };

beforeAll(async () => {
  const otherOwner = await makeUser(server);
  const otherTeam = await createTeam(server, otherOwner);
  const otherApplication = await createApplication(server, otherOwner, otherTeam.id);
  other = {
    owner: otherOwner,
    team: otherTeam,
    applicationId: otherApplication,
    deviceId: (await createDevice({ name: "theirs" }, otherOwner, otherTeam.id)).id,
  };
});
afterAll(() => server.close());

async function createDevice(
  body: Record<string, unknown>,
  by: TestUser = owner,
  teamId = team.id,
): Promise<{ id: string; credentials: { token: string } }> {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: by.token,
    body: { team: teamId, ...body },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function createGroup(applicationId: string, name: string): Promise<string> {
  const reply = await server.request(
    "POST",
    `/api/v1/applications/${applicationId}/device-groups`,
    { token: owner.token, body: { name } },
  );
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id;
}

const bulk = (method: "PUT" | "DELETE", body: unknown, token = owner.token, teamId = team.id) =>
  server.request(method, `/api/v1/teams/${teamId}/devices/bulk`, { token, body });

/** The devices' rows as stored: what a refused request must leave as it was. */
const rows = (ids: string[]) =>
  server.db.selectFrom("devices").selectAll().where("id", "in", ids).orderBy("id").execute();

/** The entries logged since the first `since`, oldest first. */
const eventsSince = async (since: number) => (await auditEntries(server.db)).slice(since);
const auditCount = async () =>
  (await server.db.selectFrom("audit_log").select("id").execute()).length;

describe("moving many devices", () => {
  test("to an application, to an instance, unassigned: each logged as FlowFuse logs it", async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const instanceId = await createInstance(server, owner, team.id);
    const loose = await createDevice({ name: "loose" });
    const ofInstance = await createDevice({ name: "of instance", instance: instanceId });
    const already = await createDevice({ name: "already", application: applicationId });

    const since = await auditCount();
    const moved = await bulk("PUT", {
      devices: [loose.id, ofInstance.id, already.id],
      application: applicationId,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.meta).toEqual({});
    expect(moved.body.count).toBe(3);
    expect(moved.body.devices.map((d: { name: string }) => d.name)).toEqual([
      "already",
      "loose",
      "of instance",
    ]);
    for (const device of moved.body.devices) {
      expect(device).toMatchObject({
        ownerType: "application",
        application: { id: applicationId },
      });
    }
    // The device already there is not moved again: two devices, three events each.
    const events = await eventsSince(since);
    expect(events.map((e) => e.event).sort()).toEqual(
      [
        ...["team.device.assigned", "application.device.assigned", "device.assigned"],
        ...["team.device.assigned", "application.device.assigned", "device.assigned"],
      ].sort(),
    );
    expect(events.find((e) => e.event === "application.device.assigned")).toMatchObject({
      entity_type: "application",
      entity_id: applicationId,
    });
    expect(events.filter((e) => e.entity_id === already.id)).toEqual([]);

    const toInstance = await bulk("PUT", { devices: [loose.id], instance: instanceId });
    expect(toInstance.status, toInstance.text).toBe(200);
    expect(toInstance.body.devices[0]).toMatchObject({
      ownerType: "instance",
      instance: { id: instanceId },
      application: null,
    });
    const instanceDevices = await server.request("GET", `/api/v1/projects/${instanceId}/devices`, {
      token: viewer.token,
    });
    expect(instanceDevices.status).toBe(200);
    expect(instanceDevices.body.devices.map((d: { id: string }) => d.id)).toEqual([loose.id]);

    const beforeUnassign = await auditCount();
    const unassigned = await bulk("PUT", {
      devices: [loose.id, already.id],
      instance: null,
      application: null,
    });
    expect(unassigned.status, unassigned.text).toBe(200);
    for (const device of unassigned.body.devices) {
      expect(device).toMatchObject({ ownerType: null, application: null, instance: null });
    }
    const unassignEvents = (await eventsSince(beforeUnassign)).map((e) => e.event).sort();
    expect(unassignEvents).toEqual(
      [
        "application.device.unassigned",
        "project.device.unassigned",
        "team.device.unassigned",
        "team.device.unassigned",
      ].sort(),
    );
  });

  test('into a device group, out of another, and out of all with ""', async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const first = await createGroup(applicationId, "first");
    const second = await createGroup(applicationId, "second");
    const a = await createDevice({ name: "a", application: applicationId });
    const b = await createDevice({ name: "b", application: applicationId });

    expect((await bulk("PUT", { devices: [a.id], deviceGroup: first })).status).toBe(200);
    const since = await auditCount();
    const grouped = await bulk("PUT", { devices: [a.id, b.id], deviceGroup: second });
    expect(grouped.status, grouped.text).toBe(200);
    for (const device of grouped.body.devices) {
      expect(device.deviceGroup).toMatchObject({ id: second, name: "second" });
    }
    const changed = (await eventsSince(since)).filter(
      (e) => e.event === "application.deviceGroup.members.changed",
    );
    // One entry per group whose members changed (both in one transaction: in no set order).
    const byGroup = Object.fromEntries(
      changed.map((e) => [e.body.deviceGroup.id, [e.body.added, e.body.removed]]),
    );
    expect(byGroup).toEqual({ [first]: [[], [a.id]], [second]: [[a.id, b.id], []] });

    const groups = await server.request("GET", `/api/v1/teams/${team.id}/device-groups`, {
      token: member.token,
    });
    expect(groups.status).toBe(200);
    const counts = Object.fromEntries(
      groups.body.groups
        .filter((g: { application: { id: string } }) => g.application.id === applicationId)
        .map((g: { name: string; deviceCount: number }) => [g.name, g.deviceCount]),
    );
    expect(counts).toEqual({ first: 0, second: 2 });

    const out = await bulk("PUT", { devices: [a.id, b.id], deviceGroup: "" });
    expect(out.status, out.text).toBe(200);
    expect(out.body.devices.map((d: { deviceGroup: unknown }) => d.deviceGroup)).toEqual([
      null,
      null,
    ]);
  });

  test("a device of an instance cannot join a group: 400 invalid_device_group_membership, nothing changed", async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const group = await createGroup(applicationId, "only the application's");
    const inApp = await createDevice({ name: "in app", application: applicationId });
    const loose = await createDevice({ name: "loose one" });
    const before = await rows([inApp.id, loose.id]);
    const reply = await bulk("PUT", { devices: [inApp.id, loose.id], deviceGroup: group });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("invalid_device_group_membership");
    expect(await rows([inApp.id, loose.id])).toEqual(before);
  });

  test("both kinds of target, or none, or an application and an instance: 400 invalid_input", async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const instanceId = await createInstance(server, owner, team.id);
    const device = await createDevice({ name: "stays" });
    const before = await rows([device.id]);
    for (const body of [
      { devices: [device.id], application: applicationId, deviceGroup: "" },
      { devices: [device.id] },
      { devices: [device.id], application: applicationId, instance: instanceId },
    ]) {
      const reply = await bulk("PUT", body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_input");
    }
    expect((await bulk("PUT", { devices: [], application: applicationId })).status).toBe(400);
    expect(await rows([device.id])).toEqual(before);
  });

  test("another team's device, application or group is 400 and changes nothing; another team's path is 404", async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const ours = await createDevice({ name: "ours" });
    const theirGroup = await server.request(
      "POST",
      `/api/v1/applications/${other.applicationId}/device-groups`,
      { token: other.owner.token, body: { name: "theirs" } },
    );
    expect(theirGroup.status).toBe(201);
    const before = await rows([ours.id, other.deviceId]);
    const since = await auditCount();

    const mixed = await bulk("PUT", {
      devices: [ours.id, other.deviceId],
      application: applicationId,
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body).toMatchObject({
      code: "invalid_input",
      errors: [expect.objectContaining({ path: "devices" })],
    });
    const theirApplication = await bulk("PUT", {
      devices: [ours.id],
      application: other.applicationId,
    });
    expect(theirApplication.status).toBe(400);
    expect(theirApplication.body.code).toBe("invalid_application");
    const theirs = await bulk("PUT", { devices: [ours.id], deviceGroup: theirGroup.body.id });
    expect(theirs.status).toBe(400);
    expect(theirs.body.errors[0].path).toBe("deviceGroup");
    const unknown = await bulk("PUT", { devices: ["nosuchdevice"], application: null });
    expect(unknown.status).toBe(400);
    // Our owner naming the other team in the path sees no such team.
    const foreignPath = await bulk(
      "PUT",
      { devices: [other.deviceId], application: null },
      owner.token,
      other.team.id,
    );
    expect(foreignPath.status).toBe(404);
    const foreignDelete = await bulk(
      "DELETE",
      { devices: [other.deviceId] },
      owner.token,
      other.team.id,
    );
    expect(foreignDelete.status).toBe(404);

    expect(await rows([ours.id, other.deviceId])).toEqual(before);
    expect(await auditCount()).toBe(since);
  });

  test("members and viewers may not (403)", async () => {
    const device = await createDevice({ name: "owners only" });
    for (const caller of [member, viewer]) {
      expect(
        (await bulk("PUT", { devices: [device.id], application: null }, caller.token)).status,
      ).toBe(403);
      expect((await bulk("DELETE", { devices: [device.id] }, caller.token)).status).toBe(403);
    }
    expect(await rows([device.id])).toHaveLength(1);
  });
});

describe("deleting many devices", () => {
  test("the team's devices go, their tokens stop working, one team.device.bulk-deleted", async () => {
    const a = await createDevice({ name: "gone a" });
    const b = await createDevice({ name: "gone b" });
    const kept = await createDevice({ name: "kept" });
    const since = await auditCount();
    const reply = await bulk("DELETE", { devices: [a.id, b.id, a.id] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect((await rows([a.id, b.id, kept.id])).map((row) => row.id)).toEqual([kept.id]);
    const checkIn = await fetch(`${server.url}/api/v1/devices/${a.id}/live/state`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${a.credentials.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ state: "running" }),
    });
    expect([401, 404]).toContain(checkIn.status);
    const events = await eventsSince(since);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: "team.device.bulk-deleted",
      entity_type: "team",
      entity_id: team.id,
      body: { info: { count: 2 } },
    });
  });

  test("another team's device among them: 400 invalid_input naming devices, none deleted", async () => {
    const ours = await createDevice({ name: "not deleted" });
    const reply = await bulk("DELETE", { devices: [ours.id, other.deviceId] });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: "invalid_input",
      errors: [expect.objectContaining({ path: "devices" })],
    });
    expect(await rows([ours.id, other.deviceId])).toHaveLength(2);
    expect((await bulk("DELETE", { devices: [] })).status).toBe(400);
    expect((await bulk("DELETE", undefined)).status).toBe(400);
  });
});

describe("lists", () => {
  test("the team's device groups, each with its application, a page at a time (members and up)", async () => {
    const lister = await makeUser(server);
    const listed = await createTeam(server, lister);
    const reader = await makeUser(server, { teams: [{ id: listed.id, role: 30 }] });
    const looker = await makeUser(server, { teams: [{ id: listed.id, role: 10 }] });
    const names: string[] = [];
    for (const app of ["one", "two"]) {
      const applicationId = await createApplication(server, lister, listed.id);
      for (const group of [`${app}-x`, `${app}-y`]) {
        const reply = await server.request(
          "POST",
          `/api/v1/applications/${applicationId}/device-groups`,
          { token: lister.token, body: { name: group } },
        );
        expect(reply.status).toBe(201);
        names.push(group);
      }
    }
    const path = `/api/v1/teams/${listed.id}/device-groups`;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await server.request(
        "GET",
        `${path}?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
        { token: reader.token },
      );
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.count).toBe(4);
      for (const group of reply.body.groups) {
        expect(group.application).toMatchObject({
          id: expect.any(String),
          name: expect.any(String),
        });
        seen.push(group.name);
      }
      cursor = reply.body.meta.next_cursor;
    } while (cursor);
    expect(seen).toEqual(names.sort());
    const queried = await server.request("GET", `${path}?query=TWO`, { token: reader.token });
    expect(queried.body.groups.map((g: { name: string }) => g.name)).toEqual(["two-x", "two-y"]);
    expect((await server.request("GET", path, { token: looker.token })).status).toBe(403);
    expect((await server.request("GET", path, { token: owner.token })).status).toBe(404);
  });

  test("an instance's devices: viewers read them; another team's instance is 404", async () => {
    const instanceId = await createInstance(server, owner, team.id);
    await createDevice({ name: "follows b", instance: instanceId });
    await createDevice({ name: "follows a", instance: instanceId });
    await createDevice({ name: "not this one" });
    const path = `/api/v1/projects/${instanceId}/devices`;
    const reply = await server.request("GET", `${path}?sort=name&dir=desc`, {
      token: viewer.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.count).toBe(2);
    expect(reply.body.devices.map((d: { name: string }) => d.name)).toEqual([
      "follows b",
      "follows a",
    ]);
    expect((await server.request("GET", path, { token: other.owner.token })).status).toBe(404);
  });

  test("every device of the platform: administrators only, paged", async () => {
    const page = await server.request("GET", "/api/v1/devices?limit=1", {
      token: server.adminToken,
    });
    expect(page.status, page.text).toBe(200);
    expect(page.body.devices).toHaveLength(1);
    expect(page.body.count).toBeGreaterThan(1);
    expect(page.body.meta.next_cursor).toEqual(expect.any(String));
    const all = await server.request("GET", "/api/v1/devices?query=theirs", {
      token: server.adminToken,
    });
    expect(all.body.devices.map((d: { id: string }) => d.id)).toContain(other.deviceId);
    expect((await server.request("GET", "/api/v1/devices", { token: owner.token })).status).toBe(
      403,
    );
  });
});
