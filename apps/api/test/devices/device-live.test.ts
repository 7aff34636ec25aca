// The device agent's protocol driven directly, as the agent sends it: check-in (409 naming all of
// project, application, snapshot and settings; 200 once in step), the snapshot (credentials
// encrypted with the device's credentialSecret as Node-RED decrypts them, node-red pinned, FF_*
// variables) and settings (the hash the 409 names), the agent's audit events, and the refusals:
// a user's token, another device's token, an old token, a deleted device.
import { decryptCredentials } from "@flowplane/auth";
import { afterAll, describe, expect, test } from "vitest";
import { createApplication, createInstance } from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team, member } = await serverWithTeam({ member: 30 });
const instanceId = await createInstance(server, owner, team.id);
const applicationId = (
  await server.request("GET", `/api/v1/projects/${instanceId}`, { token: owner.token })
).body.application.id as string;

const FLOWS = [
  { id: "tab1", type: "tab", label: "one" },
  { id: "cfg1", type: "global-config", env: [{ name: "SECRET", type: "cred" }] },
];
const CREDENTIALS = { cfg1: { map: { SECRET: "s3cr3t-value" } } };

afterAll(() => server.close());

async function snapshot(name: string, env: Record<string, string> = {}) {
  const reply = await server.request("POST", `/api/v1/projects/${instanceId}/snapshots`, {
    token: owner.token,
    body: {
      name,
      flows: FLOWS,
      credentials: CREDENTIALS,
      settings: { modules: { "node-red": "4.1.15" }, env },
    },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

async function device(body: Record<string, unknown> = { instance: instanceId }) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: `dev-${Math.random().toString(36).slice(2, 7)}`, team: team.id, ...body },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as {
    id: string;
    name: string;
    credentials: { token: string; credentialSecret: string };
  };
}

/** A request as the agent sends it, raw (its reply held to the document as every reply is). */
async function live(method: string, path: string, token: string | undefined, body?: unknown) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { "content-type": "application/json" }),
      "user-agent": "FlowFuse Device Agent v4.2.1",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const state = (extra: Record<string, unknown> = {}) => ({
  ownerType: "project",
  project: null,
  application: null,
  snapshot: null,
  settings: null,
  state: "stopped",
  mode: "autonomous",
  agentVersion: "4.2.1",
  nodejsVersion: "v20.20.2",
  ...extra,
});

describe("the check-in", () => {
  test("a device without a target is told its owner, then is in step: 200 {}; the team sees it seen", async () => {
    const d = await device();
    const path = `/api/v1/devices/${d.id}/live/state`;
    const first = await live("POST", path, d.credentials.token, state());
    expect(first.status).toBe(409);
    expect(first.body).toEqual({
      code: "incorrect-project",
      error: "incorrect-project",
      requestId: expect.any(String),
      project: instanceId,
      application: null,
      snapshot: null,
      settings: expect.any(String),
    });
    const again = await live("POST", path, d.credentials.token, state({ project: instanceId }));
    expect(again).toEqual({ status: 200, body: {} });
    const seen = await server.request("GET", `/api/v1/devices/${d.id}`, { token: member.token });
    expect(seen.body).toMatchObject({
      status: "stopped",
      onlineStatus: "online",
      agentVersion: "4.2.1",
      nodejsVersion: "v20.20.2",
    });
    expect(seen.body.lastSeenAt).not.toBeNull();
  });

  test("a target: 409 with all four keys, the snapshot and settings download, then 200 once it runs them", async () => {
    const d = await device();
    const target = await snapshot("first", { FROM_SNAPSHOT: "snap-env" });
    await server.request("PUT", `/api/v1/devices/${d.id}/settings`, {
      token: member.token,
      body: { env: [{ name: "FROM_SETTINGS", value: "settings-env" }] },
    });
    const set = await server.request("PUT", `/api/v1/devices/${d.id}`, {
      token: member.token,
      body: { targetSnapshot: target },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ targetSnapshot: { id: target, name: "first" } });
    expect(set.body.isDeploying).toBe(true);

    const path = `/api/v1/devices/${d.id}/live/state`;
    const token = d.credentials.token;
    const behind = await live("POST", path, token, state({ project: instanceId }));
    expect(behind.status).toBe(409);
    expect(Object.keys(behind.body).sort()).toEqual([
      "application",
      "code",
      "error",
      "project",
      "requestId",
      "settings",
      "snapshot",
    ]);
    expect(behind.body).toMatchObject({ error: "incorrect-snapshot", snapshot: target });

    const snap = await live("GET", `/api/v1/devices/${d.id}/live/snapshot`, token);
    expect(snap.status).toBe(200);
    expect(snap.body).toMatchObject({
      id: target,
      name: "first",
      flows: FLOWS,
      modules: { "node-red": "4.1.15" },
      env: {
        FROM_SNAPSHOT: "snap-env",
        FF_DEVICE_ID: d.id,
        FF_DEVICE_NAME: d.name,
        FF_SNAPSHOT_ID: target,
        FF_SNAPSHOT_NAME: "first",
        FF_PROJECT_ID: instanceId,
      },
    });
    // Node-RED's format under the device's secret: it decrypts to the flows' credentials.
    expect(Object.keys(snap.body.credentials)).toEqual(["$"]);
    expect(decryptCredentials(d.credentials.credentialSecret, snap.body.credentials)).toEqual(
      CREDENTIALS,
    );

    const settings = await live("GET", `/api/v1/devices/${d.id}/live/settings`, token);
    expect(settings.body).toMatchObject({
      hash: behind.body.settings,
      env: { FROM_SETTINGS: "settings-env" },
    });

    const running = state({
      project: instanceId,
      snapshot: target,
      settings: settings.body.hash,
      state: "running",
      nodeRedVersion: "4.1.15",
    });
    expect(await live("POST", path, token, running)).toEqual({ status: 200, body: {} });
    const seen = await server.request("GET", `/api/v1/devices/${d.id}`, { token: member.token });
    expect(seen.body).toMatchObject({
      status: "running",
      isDeploying: false,
      activeSnapshot: { id: target },
      nodeRedVersion: "4.1.15",
    });

    // New settings: the same check-in is now behind on settings alone.
    await server.request("PUT", `/api/v1/devices/${d.id}/settings`, {
      token: member.token,
      body: { env: [{ name: "FROM_SETTINGS", value: "changed" }] },
    });
    const stale = await live("POST", path, token, running);
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe("incorrect-settings");
    const fresh = await live("GET", `/api/v1/devices/${d.id}/live/settings`, token);
    expect(fresh.body.hash).toBe(stale.body.settings);
    expect(fresh.body.env.FROM_SETTINGS).toBe("changed");
  });

  test("an application's device: the application key, and its snapshots only", async () => {
    const d = await device({ application: applicationId });
    const target = await snapshot("for the app");
    const set = await server.request("PUT", `/api/v1/devices/${d.id}`, {
      token: member.token,
      body: { targetSnapshot: target },
    });
    expect(set.status, set.text).toBe(200);
    const reply = await live(
      "POST",
      `/api/v1/devices/${d.id}/live/state`,
      d.credentials.token,
      state({ ownerType: "application", application: applicationId }),
    );
    expect(reply.body).toMatchObject({
      error: "incorrect-snapshot",
      project: null,
      application: applicationId,
      snapshot: target,
    });
    const snap = await live("GET", `/api/v1/devices/${d.id}/live/snapshot`, d.credentials.token);
    expect(snap.body.env).toMatchObject({
      FF_APPLICATION_ID: applicationId,
      FF_APPLICATION_NAME: expect.any(String),
    });

    // Agent 4.2, given its first target, takes the 409's `project` key for an instance and so
    // runs the target reporting neither owner: in step (FlowFuse's incorrect-application here
    // made it restart Node-RED). Not while it runs anything else.
    const settings = await live(
      "GET",
      `/api/v1/devices/${d.id}/live/settings`,
      d.credentials.token,
    );
    const running = { ownerType: "none", snapshot: target, settings: settings.body.hash };
    const inStep = await live(
      "POST",
      `/api/v1/devices/${d.id}/live/state`,
      d.credentials.token,
      state({ ...running, state: "running" }),
    );
    expect(inStep).toEqual({ status: 200, body: {} });
    const other = await live(
      "POST",
      `/api/v1/devices/${d.id}/live/state`,
      d.credentials.token,
      state({ ...running, snapshot: await snapshot("not the target") }),
    );
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "incorrect-application", application: applicationId });

    // Another application's snapshot (same team) and another team's: 400 naming the field.
    const otherApp = await createApplication(server, owner, team.id);
    const inOther = await device({ application: otherApp });
    const wrong = await server.request("PUT", `/api/v1/devices/${inOther.id}`, {
      token: member.token,
      body: { targetSnapshot: target },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: "invalid_snapshot" });
    expect(wrong.body.errors[0].path).toBe("targetSnapshot");
  });

  test("the instance's device target applies to its devices", async () => {
    const d = await device();
    const target = await snapshot("for all devices");
    const set = await server.request("POST", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: member.token,
      body: { targetSnapshot: target },
    });
    expect(set.status, set.text).toBe(200);
    const reply = await live(
      "POST",
      `/api/v1/devices/${d.id}/live/state`,
      d.credentials.token,
      state({ project: instanceId }),
    );
    expect(reply.body).toMatchObject({ error: "incorrect-snapshot", snapshot: target });
    await server.request("POST", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: member.token,
      body: { targetSnapshot: null },
    });
  });
});

describe("the agent's audit events", () => {
  test("land in the device's audit log", async () => {
    const d = await device();
    const posted = await live("POST", `/logging/device/${d.id}/audit`, d.credentials.token, {
      timestamp: Date.now(),
      event: "stopped",
      info: { code: "shutdown" },
    });
    expect(posted).toEqual({ status: 200, body: {} });
    const log = await server.request("GET", `/api/v1/devices/${d.id}/audit-log?event=stopped`, {
      token: member.token,
    });
    expect(log.body.log).toHaveLength(1);
    expect(log.body.log[0]).toMatchObject({
      event: "stopped",
      scope: { id: d.id, type: "device" },
      body: { info: { code: "shutdown" } },
    });
  });
});

describe("what reaches the live routes", () => {
  test("only the device's own token: no token, a user's, another device's, an old one, a deleted device's are 401", async () => {
    const d = await device();
    const other = await device();
    const paths = [
      ["POST", `/api/v1/devices/${d.id}/live/state`],
      ["GET", `/api/v1/devices/${d.id}/live/state`],
      ["GET", `/api/v1/devices/${d.id}/live/snapshot`],
      ["GET", `/api/v1/devices/${d.id}/live/settings`],
      ["POST", `/logging/device/${d.id}/audit`],
    ] as const;
    const body = (method: string) =>
      method === "POST" ? { event: "flows.set", ...state() } : undefined;
    for (const token of [undefined, owner.token, server.adminToken, other.credentials.token]) {
      for (const [method, path] of paths) {
        const reply = await live(method, path, token, body(method));
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
    }
    // New credentials: the old token stops at once.
    const renewed = await server.request("POST", `/api/v1/devices/${d.id}/generate_credentials`, {
      token: owner.token,
    });
    for (const [method, path] of paths) {
      expect((await live(method, path, d.credentials.token, body(method))).status).toBe(401);
      // Reached: 200, or the check-in's 409 telling it what to run.
      expect([200, 409]).toContain(
        (await live(method, path, renewed.body.token, body(method))).status,
      );
    }
    await server.request("DELETE", `/api/v1/devices/${d.id}`, { token: owner.token });
    for (const [method, path] of paths) {
      expect((await live(method, path, renewed.body.token, body(method))).status).toBe(401);
    }
  });

  test("a check-in in step within a second of the stored one writes nothing; a change is written at once; an older lastSeenAt is brought up to date", async () => {
    const d = await device();
    const path = `/api/v1/devices/${d.id}/live/state`;
    const report = state({ project: instanceId });
    expect((await live("POST", path, d.credentials.token, report)).status).toBe(200);
    const row = () =>
      server.db
        .selectFrom("devices")
        .select(["last_seen_at", "state", "node_red_version"])
        .where("id", "=", d.id)
        .executeTakeFirstOrThrow();
    // Stored as seen just now (a minute ahead, so that a slow machine cannot age it past the
    // resolution between the two requests): the same report again is a read, the row as it was.
    await server.db
      .updateTable("devices")
      .set({ last_seen_at: new Date(Date.now() + 60_000) })
      .where("id", "=", d.id)
      .execute();
    const first = await row();
    expect((await live("POST", path, d.credentials.token, report)).status).toBe(200);
    expect(await row()).toEqual(first);
    // Something new in the report: written by that check-in, seen by the team at once.
    const running = state({ project: instanceId, state: "running", nodeRedVersion: "4.1.15" });
    expect((await live("POST", path, d.credentials.token, running)).status).toBe(200);
    const seen = await server.request("GET", `/api/v1/devices/${d.id}`, { token: member.token });
    expect(seen.body).toMatchObject({ status: "running", nodeRedVersion: "4.1.15" });
    // A stored lastSeenAt older than the resolution is brought up to date by the next check-in.
    await server.db
      .updateTable("devices")
      .set({ last_seen_at: new Date(Date.now() - 10 * 60_000) })
      .where("id", "=", d.id)
      .execute();
    expect((await live("POST", path, d.credentials.token, running)).status).toBe(200);
    const later = await row();
    expect(Math.abs(Date.now() - later.last_seen_at!.getTime())).toBeLessThan(60_000);
  });

  test("check-ins arriving together (one statement) each get their own answer; a wrong token among them is refused and changes nothing", async () => {
    const devices = await Promise.all([device(), device(), device(), device()]);
    const target = await snapshot("together");
    const targeted = devices[3]!;
    expect(
      (
        await server.request("PUT", `/api/v1/devices/${targeted.id}`, {
          token: owner.token,
          body: { targetSnapshot: target },
        })
      ).status,
    ).toBe(200);
    const replies = await Promise.all([
      ...devices.map((d, i) =>
        live(
          "POST",
          `/api/v1/devices/${d.id}/live/state`,
          d.credentials.token,
          state({ project: instanceId, state: i % 2 ? "running" : "stopped" }),
        ),
      ),
      // Another device's token on the first one's path.
      live(
        "POST",
        `/api/v1/devices/${devices[0]!.id}/live/state`,
        devices[1]!.credentials.token,
        state({ project: instanceId, state: "crashed" }),
      ),
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 409, 401]);
    expect(replies[3]!.body).toMatchObject({ snapshot: target, project: instanceId });
    for (const [i, d] of devices.entries()) {
      const seen = await server.request("GET", `/api/v1/devices/${d.id}`, { token: owner.token });
      expect(seen.body.status).toBe(i % 2 ? "running" : "stopped");
    }
  });

  test("a check-in that is not the agent's shape is 400, and changes nothing", async () => {
    const d = await device();
    const reply = await live("POST", `/api/v1/devices/${d.id}/live/state`, d.credentials.token, {
      state: { not: "a string" },
    });
    expect(reply.status).toBe(400);
    const seen = await server.request("GET", `/api/v1/devices/${d.id}`, { token: owner.token });
    expect(seen.body.lastSeenAt).toBeNull();
  });
});

describe("device groups", () => {
  test("members follow the group's target and get its variables; a device taken out runs its own again", async () => {
    const groups = `/api/v1/applications/${applicationId}/device-groups`;
    const created = await server.request("POST", groups, {
      token: owner.token,
      body: { name: "line A", description: "the first line" },
    });
    expect(created.status, created.text).toBe(201);
    const group = `${groups}/${created.body.id}`;
    const own = await snapshot("own target");
    const shared = await snapshot("group target");
    const d = await device({ application: applicationId });
    await server.request("PUT", `/api/v1/devices/${d.id}`, {
      token: member.token,
      body: { targetSnapshot: own },
    });
    await server.request("PUT", `/api/v1/devices/${d.id}/settings`, {
      token: member.token,
      body: {
        env: [
          { name: "OWN", value: "mine" },
          { name: "BOTH", value: "device wins" },
        ],
      },
    });
    const checkIn = () =>
      live(
        "POST",
        `/api/v1/devices/${d.id}/live/state`,
        d.credentials.token,
        state({ ownerType: "application", application: applicationId }),
      );
    expect((await checkIn()).body.snapshot).toBe(own);

    // Members of the team cannot change groups; another application's snapshot is refused.
    expect(
      (await server.request("PATCH", group, { token: member.token, body: { add: [d.id] } })).status,
    ).toBe(403);
    const elsewhere = await createApplication(server, owner, team.id);
    const outsider = await device({ application: elsewhere });
    const refused = await server.request("PATCH", group, {
      token: owner.token,
      body: { add: [outsider.id] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toBe("add");

    expect(
      (await server.request("PATCH", group, { token: owner.token, body: { add: [d.id] } })).body,
    ).toEqual({});
    // In a group without a target: still its own.
    expect((await checkIn()).body.snapshot).toBe(own);
    await server.request("PUT", group, { token: owner.token, body: { targetSnapshotId: shared } });
    await server.request("PUT", `${group}/settings`, {
      token: owner.token,
      body: {
        env: [
          { name: "GROUP", value: "shared" },
          { name: "BOTH", value: "group" },
        ],
      },
    });
    const behind = await checkIn();
    expect(behind.body).toMatchObject({ error: "incorrect-snapshot", snapshot: shared });
    const settings = await live(
      "GET",
      `/api/v1/devices/${d.id}/live/settings`,
      d.credentials.token,
    );
    expect(settings.body.env).toEqual({ GROUP: "shared", OWN: "mine", BOTH: "device wins" });
    expect(settings.body.hash).toBe(behind.body.settings);

    const read = await server.request("GET", group, { token: member.token });
    expect(read.body).toMatchObject({
      name: "line A",
      deviceCount: 1,
      targetSnapshot: { id: shared },
      devices: [{ id: d.id, deviceGroup: { id: created.body.id }, targetSnapshot: { id: shared } }],
      settings: { env: [{ name: "GROUP" }, { name: "BOTH" }] },
    });
    const list = await server.request("GET", groups, { token: member.token });
    expect(list.body.groups.map((g: { id: string }) => g.id)).toContain(created.body.id);

    // Taken out: its own target and variables again.
    await server.request("PATCH", group, { token: owner.token, body: { remove: [d.id] } });
    const out = await checkIn();
    expect(out.body.snapshot).toBe(own);
    const after = await live("GET", `/api/v1/devices/${d.id}/live/settings`, d.credentials.token);
    expect(after.body.env).toEqual({ OWN: "mine", BOTH: "device wins" });
    expect(after.body.hash).toBe(out.body.settings);

    // Deleting the group keeps its devices, out of any group.
    await server.request("PATCH", group, { token: owner.token, body: { set: [d.id] } });
    expect((await checkIn()).body.snapshot).toBe(shared);
    expect((await server.request("DELETE", group, { token: owner.token })).body).toEqual({});
    expect((await checkIn()).body.snapshot).toBe(own);
    const log = await server.request("GET", `/api/v1/applications/${applicationId}/audit-log`, {
      token: owner.token,
    });
    if (log.status === 200) {
      expect(log.body.log.map((e: { event: string }) => e.event)).toContain(
        "application.deviceGroup.members.changed",
      );
    }
  });
});
