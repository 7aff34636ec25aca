// Remote devices through the real server: creation with one-time credentials, what a device's and
// a provisioning token reach, reads, changes and their audit entries, lists with FlowFuse's query,
// sort and paging, settings with hidden values, the team type's device limit, provisioning tokens.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createApplication,
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
} from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team, member, viewer } = await serverWithTeam({ member: 30, viewer: 10 });
const applicationId = await createApplication(server, owner, team.id);
afterAll(() => server.close());

async function createDevice(body: Record<string, unknown>, token = owner.token) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token,
    body: { team: team.id, ...body },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

describe("creating a device", () => {
  test("the reply carries the device's token and credential secret once, and no broker", async () => {
    const device = await createDevice({ name: "line-1 pi", type: "Raspberry Pi 4" });
    expect(device).toMatchObject({
      name: "line-1 pi",
      type: "Raspberry Pi 4",
      ownerType: null,
      status: "offline",
      onlineStatus: "not-seen",
      lastSeenAt: null,
      team: { id: team.id },
      meta: { ffVersion: expect.any(String) },
    });
    expect(device.credentials.token).toMatch(/^fpd_[0-9A-Za-z]{36}$/);
    expect(device.credentials.credentialSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(device.credentials).not.toHaveProperty("broker");

    const read = await server.request("GET", `/api/v1/devices/${device.id}`, {
      token: viewer.token,
    });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("credentials");
    expect(JSON.stringify(read.body)).not.toContain(device.credentials.credentialSecret);

    // Only the digest is stored.
    const row = await (server.db as any)
      .selectFrom("devices")
      .selectAll()
      .where("id", "=", device.id)
      .executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain(device.credentials.token);
  });

  test("assigned to an application or an instance of the team; another team's is 400 naming the field", async () => {
    const inApp = await createDevice({ name: "app device", application: applicationId });
    expect(inApp).toMatchObject({ ownerType: "application", application: { id: applicationId } });
    const instanceId = await createInstance(server, owner, team.id);
    const inInstance = await createDevice({ name: "instance device", instance: instanceId });
    expect(inInstance).toMatchObject({ ownerType: "instance", instance: { id: instanceId } });

    const other = await makeUser(server);
    const otherTeam = await createTeam(server, other);
    const foreignApp = await createApplication(server, other, otherTeam.id);
    const refused = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "x", team: team.id, application: foreignApp },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_application");
    expect(refused.body.errors[0].path).toBe("application");

    const foreignTeam = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "x", team: otherTeam.id },
    });
    expect(foreignTeam.status).toBe(400);
    expect(foreignTeam.body.errors[0].path).toBe("team");
  });

  test("members and viewers cannot create devices (403)", async () => {
    for (const user of [member, viewer]) {
      const reply = await server.request("POST", "/api/v1/devices", {
        token: user.token,
        body: { name: "nope", team: team.id },
      });
      expect(reply.status).toBe(403);
    }
  });

  test("the team type's device limit: 400 device_limit_reached past it", async () => {
    const type = await server.request("POST", "/api/v1/team-types", {
      token: server.adminToken,
      body: { name: `two-devices-${Date.now()}`, properties: { devices: { limit: 2 } } },
    });
    expect(type.status, type.text).toBe(200);
    const limitedOwner = await makeUser(server);
    const made = await server.request("POST", "/api/v1/teams", {
      token: limitedOwner.token,
      body: { name: `Limited ${Date.now()}`, type: type.body.id },
    });
    expect(made.status, made.text).toBe(200);
    const create = () =>
      server.request("POST", "/api/v1/devices", {
        token: limitedOwner.token,
        body: { name: "d", team: made.body.id },
      });
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(200);
    const third = await create();
    expect(third.status).toBe(400);
    expect(third.body.code).toBe("device_limit_reached");
  });
});

describe("what tokens reach", () => {
  test("a device's token reaches none of the API's operations (401)", async () => {
    const device = await createDevice({ name: "token reach" });
    const token = device.credentials.token;
    for (const [method, path] of [
      ["GET", `/api/v1/devices/${device.id}`],
      ["GET", `/api/v1/teams/${team.id}/devices`],
      ["GET", "/api/v1/user"],
      ["PUT", `/api/v1/devices/${device.id}`],
      ["POST", "/api/v1/devices"],
    ] as const) {
      const reply = await server.request(method, path, {
        token,
        ...(method === "GET" ? {} : { body: { name: "x", team: team.id } }),
      });
      expect(reply.status, `${method} ${path}`).toBe(401);
    }
  });

  test("generate_credentials: a new token and secret; the old token stops at once", async () => {
    const device = await createDevice({ name: "regenerated" });
    const reply = await server.request(
      "POST",
      `/api/v1/devices/${device.id}/generate_credentials`,
      { token: owner.token },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.token).toMatch(/^fpd_/);
    expect(reply.body.token).not.toBe(device.credentials.token);
    expect(reply.body.credentialSecret).not.toBe(device.credentials.credentialSecret);
    const member403 = await server.request(
      "POST",
      `/api/v1/devices/${device.id}/generate_credentials`,
      { token: member.token },
    );
    expect(member403.status).toBe(403);
  });
});

describe("changing a device", () => {
  test("owners rename and assign; members may not (403); the audit log says what changed", async () => {
    const device = await createDevice({ name: "to rename" });
    const renamed = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { name: "renamed", type: "gateway", application: applicationId },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({
      name: "renamed",
      type: "gateway",
      ownerType: "application",
      application: { id: applicationId },
    });
    const byMember = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: member.token,
      body: { name: "member's" },
    });
    expect(byMember.status).toBe(403);
    // An administrator who is a member acts as one only with an unrestricted opt-in token.
    const adminMember = await makeUser(server, {
      admin: true,
      teams: [{ id: team.id, role: 30 }],
    });
    const byAdminsPlainToken = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: adminMember.token,
      body: { name: "admin's, without opt-in" },
    });
    expect(byAdminsPlainToken.status).toBe(403);

    const unassigned = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: owner.token,
      body: { application: null },
    });
    expect(unassigned.body.ownerType).toBe(null);

    const log = await server.request("GET", `/api/v1/devices/${device.id}/audit-log`, {
      token: viewer.token,
    });
    expect(log.status).toBe(200);
    const events = log.body.log.map((e: { event: string }) => e.event);
    // The rename and the assignment were one change: one transaction, one time. FlowFuse's
    // events: an assignment in the team's, the application's and the device's own log, an
    // unassignment in the team's and the application's.
    expect([events[0], [...events.slice(1, 4)].sort(), events[4]]).toEqual([
      "team.device.unassigned",
      ["device.assigned", "team.device.assigned", "team.device.updated"],
      "team.device.created",
    ]);
    const applicationLog = await server.db
      .selectFrom("audit_log")
      .select("event")
      .where("entity_type", "=", "application")
      .where("entity_id", "=", applicationId)
      .where("event", "like", "application.device.%")
      .orderBy("created_at")
      .execute();
    expect(applicationLog.map((entry) => entry.event).slice(-2)).toEqual([
      "application.device.assigned",
      "application.device.unassigned",
    ]);
    const csv = await server.request("GET", `/api/v1/devices/${device.id}/audit-log/export`, {
      token: viewer.token,
    });
    expect(csv.text.split("\r\n")[0]).toBe("id,event,body,scope,trigger,createdAt");
  });

  test("a target snapshot that is not the device's application's or instance's is 400 naming targetSnapshot", async () => {
    const device = await createDevice({ name: "target", application: applicationId });
    const reply = await server.request("PUT", `/api/v1/devices/${device.id}`, {
      token: member.token,
      body: { targetSnapshot: "nosuchsnap12" },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("invalid_snapshot");
    expect(reply.body.errors[0].path).toBe("targetSnapshot");
  });

  test("settings: members set variables; hidden values read blank and are kept when sent blank", async () => {
    const device = await createDevice({ name: "settings" });
    const path = `/api/v1/devices/${device.id}/settings`;
    const put = await server.request("PUT", path, {
      token: member.token,
      body: {
        env: [
          { name: "LINE", value: "one" },
          { name: "API_KEY", value: "s3cret", hidden: true },
          { name: "FF_DEVICE_ID", value: "spoof" },
        ],
      },
    });
    expect(put.status, put.text).toBe(200);
    const read = await server.request("GET", path, { token: viewer.token });
    expect(read.body.env).toEqual([
      { name: "LINE", value: "one", hidden: false },
      { name: "API_KEY", value: "", hidden: true },
    ]);
    // Written back as read: the hidden value stays.
    await server.request("PUT", path, { token: member.token, body: { env: read.body.env } });
    const row = await (server.db as any)
      .selectFrom("devices")
      .select("settings")
      .where("id", "=", device.id)
      .executeTakeFirst();
    expect(row.settings.env).toContainEqual({ name: "API_KEY", value: "s3cret", hidden: true });
    expect(
      (await server.request("PUT", path, { token: viewer.token, body: { env: [] } })).status,
    ).toBe(403);
  });

  test("deleting: owners only; the device is gone", async () => {
    const device = await createDevice({ name: "to delete" });
    expect(
      (await server.request("DELETE", `/api/v1/devices/${device.id}`, { token: member.token }))
        .status,
    ).toBe(403);
    const deleted = await server.request("DELETE", `/api/v1/devices/${device.id}`, {
      token: owner.token,
    });
    expect(deleted.body).toEqual({ status: "okay" });
    expect(
      (await server.request("GET", `/api/v1/devices/${device.id}`, { token: owner.token })).status,
    ).toBe(404);
  });
});

describe("lists", () => {
  let listTeam: TestTeam;
  let app: string;
  beforeAll(async () => {
    listTeam = await createTeam(server, owner);
    app = await createApplication(server, owner, listTeam.id);
    for (const [name, type] of [
      ["delta", "pi"],
      ["alpha", "gateway"],
      ["charlie", "pi"],
      ["bravo", "plc"],
      ["echo", "pi"],
    ]) {
      const reply = await server.request("POST", "/api/v1/devices", {
        token: owner.token,
        body: { name, type, team: listTeam.id, ...(type === "pi" && { application: app }) },
      });
      expect(reply.status).toBe(200);
    }
  });

  const names = (body: { devices: { name: string }[] }) => body.devices.map((d) => d.name);

  test("by name by default, a page at a time with a cursor, count of every match", async () => {
    const path = `/api/v1/teams/${listTeam.id}/devices`;
    const first = await server.request("GET", `${path}?limit=2`, { token: owner.token });
    expect(names(first.body)).toEqual(["alpha", "bravo"]);
    expect(first.body.count).toBe(5);
    const second = await server.request(
      "GET",
      `${path}?limit=2&cursor=${first.body.meta.next_cursor}`,
      { token: owner.token },
    );
    expect(names(second.body)).toEqual(["charlie", "delta"]);
    const third = await server.request(
      "GET",
      `${path}?limit=2&cursor=${second.body.meta.next_cursor}`,
      { token: owner.token },
    );
    expect(names(third.body)).toEqual(["echo"]);
    expect(third.body.meta).toEqual({});
  });

  test("sort and dir, query, and an application's devices", async () => {
    const path = `/api/v1/teams/${listTeam.id}/devices`;
    const desc = await server.request("GET", `${path}?sort=name&dir=desc&limit=3`, {
      token: owner.token,
    });
    expect(names(desc.body)).toEqual(["echo", "delta", "charlie"]);
    const next = await server.request(
      "GET",
      `${path}?sort=name&dir=desc&limit=3&cursor=${desc.body.meta.next_cursor}`,
      { token: owner.token },
    );
    expect(names(next.body)).toEqual(["bravo", "alpha"]);
    const byType = await server.request("GET", `${path}?sort=type`, { token: owner.token });
    expect(byType.body.devices.map((d: { type: string }) => d.type)).toEqual([
      "gateway",
      "pi",
      "pi",
      "pi",
      "plc",
    ]);
    const query = await server.request("GET", `${path}?query=PL`, { token: owner.token });
    expect(names(query.body)).toEqual(["bravo"]);
    expect(query.body.count).toBe(1);
    const ofApp = await server.request("GET", `/api/v1/applications/${app}/devices`, {
      token: owner.token,
    });
    expect(names(ofApp.body)).toEqual(["charlie", "delta", "echo"]);
    const tooMany = await server.request("GET", `${path}?limit=101`, { token: owner.token });
    expect(tooMany.status).toBe(400);
  });
});

describe("provisioning tokens", () => {
  test("a provisioning token creates devices in its team, assigned to its application, and nothing else", async () => {
    const created = await server.request("POST", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
      body: { name: "factory floor", application: applicationId },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.token).toMatch(/^fpv_/);
    expect(created.body).toMatchObject({ name: "factory floor", application: applicationId });
    const token = created.body.token;

    const list = await server.request("GET", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
    });
    expect(list.body.tokens.map((t: { id: string }) => t.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(token);

    const device = await server.request("POST", "/api/v1/devices", {
      token,
      body: { name: "pi (aa:bb)", type: "Auto Provisioned", team: team.id },
    });
    expect(device.status, device.text).toBe(200);
    expect(device.body).toMatchObject({
      ownerType: "application",
      application: { id: applicationId },
    });
    expect(device.body.credentials.token).toMatch(/^fpd_/);

    // Another team: 400 naming the field; nothing else is reachable.
    const other = await makeUser(server);
    const otherTeam = await createTeam(server, other);
    const elsewhere = await server.request("POST", "/api/v1/devices", {
      token,
      body: { name: "x", team: otherTeam.id },
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.errors[0].path).toBe("team");
    for (const [method, path] of [
      ["GET", `/api/v1/teams/${team.id}/devices`],
      ["GET", `/api/v1/devices/${device.body.id}`],
      ["GET", `/api/v1/teams/${team.id}/devices/provisioning`],
      ["GET", "/api/v1/user"],
    ] as const) {
      expect((await server.request(method, path, { token })).status, path).toBe(401);
    }

    // Revoked, it creates nothing more.
    const revoked = await server.request(
      "DELETE",
      `/api/v1/teams/${team.id}/devices/provisioning/${created.body.id}`,
      { token: owner.token },
    );
    expect(revoked.status).toBe(200);
    const after = await server.request("POST", "/api/v1/devices", {
      token,
      body: { name: "late", team: team.id },
    });
    expect(after.status).toBe(401);
  });

  test("the agent's check of the base URL with its provisioning token is 204, not the sign-in page; it reaches nothing more", async () => {
    const created = await server.request("POST", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
      body: { name: "probe" },
    });
    const token = created.body.token as string;
    // As the agent asks (got, following redirects): the base URL with the token.
    const probe = (bearer: string, path = "/", method = "GET") =>
      fetch(server.url + path, {
        method,
        headers: { authorization: `Bearer ${bearer}`, accept: "text/html" },
        redirect: "manual",
      });
    const answered = await probe(token);
    expect(answered.status).toBe(204);
    expect(await answered.text()).toBe("");
    expect((await probe(token, "/", "HEAD")).status).toBe(204);
    // Anything else with it is what it always was: the front page's redirect, or the API's 401.
    expect((await probe(token, "/teams")).status).toBe(303);
    expect((await server.request("GET", "/api/v1/user", { token })).status).toBe(401);
    // Not a live provisioning token: the front page, as for anyone.
    expect((await probe(owner.token)).status).toBe(303);
    await server.request(
      "DELETE",
      `/api/v1/teams/${team.id}/devices/provisioning/${created.body.id}`,
      { token: owner.token },
    );
    expect((await probe(token)).status).toBe(303);
  });

  test("an expired provisioning token creates nothing; owners change expiry and assignment", async () => {
    const created = await server.request("POST", `/api/v1/teams/${team.id}/devices/provisioning`, {
      token: owner.token,
      body: { name: "short lived" },
    });
    const path = `/api/v1/teams/${team.id}/devices/provisioning/${created.body.id}`;
    const updated = await server.request("PUT", path, {
      token: owner.token,
      body: { expiresAt: new Date(Date.now() - 1000).toISOString(), application: applicationId },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.application).toBe(applicationId);
    const refused = await server.request("POST", "/api/v1/devices", {
      token: created.body.token,
      body: { name: "late", team: team.id },
    });
    expect(refused.status).toBe(401);
    expect(
      (
        await server.request("GET", `/api/v1/teams/${team.id}/devices/provisioning`, {
          token: member.token,
        })
      ).status,
    ).toBe(403);
  });
});
