// Snapshots of devices: what a device last reported running (the snapshot its check-in names, with
// the variables of the settings it reports) kept as a snapshot of its own (an application's
// device) or of its instance (an instance's device); listed, read, deleted by the roles the
// reference gives; served by the owner-agnostic snapshot routes, imported into a device, listed
// with an application's; refused for a device that runs nothing, or not its current settings yet;
// and another team's member gets 404 on every route.
import { decryptCredentials } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createApplication,
  createInstance,
  createRunningDevice,
  createSnapshot,
  createTeam,
  makeUser,
  type RunningDevice,
  type TestUser,
} from "../support/team-fixtures";
import { serverWithTeam } from "../support/team-of-roles";

const { server, owner, team, member, viewer } = await serverWithTeam({
  member: Role.member,
  viewer: Role.viewer,
});
let outsider: TestUser;

const FLOWS = [
  { id: "tab1", type: "tab", label: "device" },
  { id: "cfg1", type: "global-config", env: [{ name: "SECRET", type: "cred" }] },
];
const CREDENTIALS = { cfg1: { map: { SECRET: "s3cr3t-value" } } };
const CONTENT = {
  flows: FLOWS,
  credentials: CREDENTIALS,
  settings: {
    modules: { "node-red": "4.1.15", "node-red-node-random": "0.4.1" },
    env: [
      { name: "FROM_SNAPSHOT", value: "snapshot" },
      { name: "OVERRIDDEN", value: "by the snapshot" },
      { name: "SNAPSHOT_KEY", value: "hidden-in-snapshot", hidden: true },
    ],
  },
};

beforeAll(async () => {
  outsider = await makeUser(server);
  await createTeam(server, outsider);
});
afterAll(() => server.close());

/** A check-in as the agent sends it, reporting what it runs. */
async function checkIn(
  device: RunningDevice,
  report: { snapshot: string | null; settings: string | null },
  owned: "application" | "instance" = "application",
) {
  const response = await fetch(`${server.url}/api/v1/devices/${device.deviceId}/live/state`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${device.deviceToken}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({
      state: "running",
      project: owned === "instance" ? device.instanceId : null,
      application: owned === "instance" ? null : device.applicationId,
      agentVersion: "4.2.1",
      nodeRedVersion: "4.1.16",
      ...report,
    }),
  });
  return { status: response.status, body: await response.json() };
}

async function setEnv(deviceId: string, env: unknown[]) {
  const reply = await server.request("PUT", `/api/v1/devices/${deviceId}/settings`, {
    token: member.token,
    body: { env },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** The settings hash a device should run now, as its check-in names it. */
async function wantedSettings(device: RunningDevice) {
  const reply = await checkIn(device, { snapshot: device.snapshotId, settings: "stale" });
  expect(reply.status).toBe(409);
  return reply.body.settings as string;
}

describe("a snapshot of an application's device", () => {
  let device: RunningDevice;
  let snapshotId: string;

  beforeAll(async () => {
    device = await createRunningDevice(server, owner, team.id, { snapshot: CONTENT });
    await setEnv(device.deviceId, [
      { name: "OVERRIDDEN", value: "by the device" },
      { name: "DEVICE_KEY", value: "hidden-on-device", hidden: true },
    ]);
    const settings = await wantedSettings(device);
    expect((await checkIn(device, { snapshot: device.snapshotId, settings })).status).toBe(200);
  });

  test("a member takes it: the flows, credentials and modules it runs, with the variables it runs with", async () => {
    const taken = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: member.token,
      body: { name: "From the line", description: "what line-1 runs" },
    });
    expect(taken.status, taken.text).toBe(200);
    snapshotId = taken.body.id;
    expect(taken.body).toMatchObject({
      name: "From the line",
      description: "what line-1 runs",
      ownerType: "device",
      deviceId: device.deviceId,
      device: { id: device.deviceId },
      // Node-RED at the version the device reports.
      modules: { "node-red": "4.1.16", "node-red-node-random": "0.4.1" },
    });
    expect(taken.body.projectId).toBeUndefined();
    expect(taken.text).not.toContain("hidden-on-device");

    const full = await server.request("GET", `/api/v1/snapshots/${snapshotId}/full`, {
      token: member.token,
    });
    expect(full.status, full.text).toBe(200);
    expect(full.body.flows.flows).toEqual(FLOWS);
    expect(full.body.settings.env).toEqual({
      FROM_SNAPSHOT: "snapshot",
      OVERRIDDEN: "by the device",
      SNAPSHOT_KEY: "",
      DEVICE_KEY: "",
    });
    expect(full.body.settings.hiddenEnv.sort()).toEqual(["DEVICE_KEY", "SNAPSHOT_KEY"]);
    expect(full.text).not.toContain("s3cr3t-value");

    // The secrets came along: an export opens them with the caller's secret.
    const exported = await server.request("POST", `/api/v1/snapshots/${snapshotId}/export`, {
      token: member.token,
      body: { credentialSecret: "the caller's own secret" },
    });
    expect(exported.status, exported.text).toBe(200);
    expect(decryptCredentials("the caller's own secret", exported.body.flows.credentials)).toEqual(
      CREDENTIALS,
    );
    expect(decryptCredentials("the caller's own secret", exported.body.settings.secretEnv)).toEqual(
      { SNAPSHOT_KEY: "hidden-in-snapshot", DEVICE_KEY: "hidden-on-device" },
    );

    const [entry] = await auditEntries(server.db, {
      event: "application.device.snapshot.created",
    });
    expect(entry).toMatchObject({
      entity_type: "application",
      entity_id: device.applicationId,
      body: { device: { id: device.deviceId }, snapshot: { id: snapshotId } },
    });
  });

  test("viewers list and read its snapshots; they take none, members delete none", async () => {
    const list = await server.request("GET", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: viewer.token,
    });
    expect(list.status, list.text).toBe(200);
    expect(list.body.count).toBe(1);
    expect(list.body.snapshots.map((s: { id: string }) => s.id)).toEqual([snapshotId]);
    const one = await server.request(
      "GET",
      `/api/v1/devices/${device.deviceId}/snapshots/${snapshotId}`,
      { token: viewer.token },
    );
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({ id: snapshotId, ownerType: "device" });

    const byViewer = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: viewer.token,
      body: { name: "no" },
    });
    expect(byViewer.status).toBe(403);
    const byMember = await server.request(
      "DELETE",
      `/api/v1/devices/${device.deviceId}/snapshots/${snapshotId}`,
      { token: member.token },
    );
    expect(byMember.status).toBe(403);
    // The instance's snapshot the device runs is not one of the device's.
    const notOwn = await server.request(
      "GET",
      `/api/v1/devices/${device.deviceId}/snapshots/${device.snapshotId}`,
      { token: viewer.token },
    );
    expect(notOwn.status).toBe(404);
  });

  test("the application's snapshots: its instances' and its devices', each alone by filter", async () => {
    const path = `/api/v1/applications/${device.applicationId}/snapshots`;
    const all = await server.request("GET", path, { token: viewer.token });
    expect(all.status, all.text).toBe(200);
    const ids = (reply: typeof all) => reply.body.snapshots.map((s: { id: string }) => s.id);
    expect(ids(all)).toEqual(expect.arrayContaining([snapshotId, device.snapshotId]));
    const ofDevice = await server.request("GET", `${path}?deviceId=${device.deviceId}`, {
      token: viewer.token,
    });
    expect(ids(ofDevice)).toEqual([snapshotId]);
    const ofInstance = await server.request("GET", `${path}?instanceId=${device.instanceId}`, {
      token: viewer.token,
    });
    expect(ids(ofInstance)).toEqual([device.snapshotId]);
    const paged = await server.request("GET", `${path}?limit=1`, { token: viewer.token });
    expect(paged.body).toMatchObject({ count: all.body.count, meta: { next_cursor: ids(all)[0] } });
  });

  test("setAsTarget makes it the device's target: the device is told to run it, with its credentials for it", async () => {
    const taken = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: member.token,
      body: { name: "Pinned", setAsTarget: true },
    });
    expect(taken.status, taken.text).toBe(200);
    const read = await server.request("GET", `/api/v1/devices/${device.deviceId}`, {
      token: viewer.token,
    });
    expect(read.body.targetSnapshot).toMatchObject({ id: taken.body.id, name: "Pinned" });
    const settings = await wantedSettings(device);
    const told = await checkIn(device, { snapshot: device.snapshotId, settings });
    expect(told).toMatchObject({
      status: 409,
      body: { error: "incorrect-snapshot", snapshot: taken.body.id },
    });
    expect(
      (await auditEntries(server.db, { event: "application.device.snapshot.device-target-set" }))
        .length,
    ).toBe(1);
    // Back to the instance's snapshot, which the device still runs.
    await server.request("PUT", `/api/v1/devices/${device.deviceId}`, {
      token: member.token,
      body: { targetSnapshot: device.snapshotId },
    });
  });

  test("the snapshot routes serve it: rename, export, delete, each in the application's log", async () => {
    const renamed = await server.request("PUT", `/api/v1/snapshots/${snapshotId}`, {
      token: owner.token,
      body: { name: "Line snapshot" },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Line snapshot", ownerType: "device" });
    for (const event of ["updated", "exported"]) {
      expect(
        (await auditEntries(server.db, { event: `application.device.snapshot.${event}` })).length,
        event,
      ).toBeGreaterThan(0);
    }
    const meta = await server.request("GET", `/api/v1/snapshots/${snapshotId}`, {
      token: viewer.token,
    });
    expect(meta.body).toMatchObject({ deviceId: device.deviceId, name: "Line snapshot" });
  });

  test("an export imports into an application's device, not an instance's", async () => {
    const exported = await server.request("POST", `/api/v1/snapshots/${snapshotId}/export`, {
      token: owner.token,
      body: { credentialSecret: "moving it along" },
    });
    const { name, flows, settings } = exported.body;
    const imported = await server.request("POST", "/api/v1/snapshots/import", {
      token: owner.token,
      body: {
        ownerId: device.deviceId,
        ownerType: "device",
        snapshot: { name: `${name} again`, flows, settings },
        credentialSecret: "moving it along",
      },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body).toMatchObject({ ownerType: "device", deviceId: device.deviceId });
    const again = await server.request("POST", `/api/v1/snapshots/${imported.body.id}/export`, {
      token: owner.token,
      body: { credentialSecret: "and back out" },
    });
    expect(decryptCredentials("and back out", again.body.flows.credentials)).toEqual(CREDENTIALS);
    expect(
      (await auditEntries(server.db, { event: "application.device.snapshot.imported" })).length,
    ).toBe(1);

    const ofInstance = await createRunningDevice(server, owner, team.id, { of: "instance" });
    const refused = await server.request("POST", "/api/v1/snapshots/import", {
      token: owner.token,
      body: {
        ownerId: ofInstance.deviceId,
        ownerType: "device",
        snapshot: { name, flows, settings },
        credentialSecret: "moving it along",
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid_device", errors: [{ path: "ownerId" }] });
  });

  test("owners delete it; a device whose target it was is told to run nothing", async () => {
    const taken = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: member.token,
      body: { name: "Short-lived", setAsTarget: true },
    });
    const deleted = await server.request(
      "DELETE",
      `/api/v1/devices/${device.deviceId}/snapshots/${taken.body.id}`,
      { token: owner.token },
    );
    expect(deleted.status, deleted.text).toBe(200);
    const gone = await server.request("GET", `/api/v1/snapshots/${taken.body.id}`, {
      token: owner.token,
    });
    expect(gone.status).toBe(404);
    const settings = await wantedSettings(device);
    const told = await checkIn(device, { snapshot: taken.body.id, settings });
    expect(told).toMatchObject({ status: 409, body: { snapshot: null } });
    expect(
      (await auditEntries(server.db, { event: "application.device.snapshot.deleted" })).length,
    ).toBe(1);
  });
});

describe("what a device snapshot refuses", () => {
  test("a device that runs nothing, runs another team's snapshot, or not its current settings: 400 invalid_state", async () => {
    const device = await createRunningDevice(server, owner, team.id);
    const take = () =>
      server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
        token: member.token,
        body: { name: "now" },
      });

    // New variables the device has not picked up yet.
    await setEnv(device.deviceId, [{ name: "NEW", value: "not yet" }]);
    const behind = await take();
    expect(behind.status).toBe(400);
    expect(behind.body).toMatchObject({ code: "invalid_state", errors: [{ path: "deviceId" }] });
    expect(behind.body.error).toContain("settings");
    const settings = await wantedSettings(device);
    await checkIn(device, { snapshot: device.snapshotId, settings });
    expect((await take()).status).toBe(200);

    // Running nothing.
    await checkIn(device, { snapshot: null, settings });
    const nothing = await take();
    expect(nothing.status).toBe(400);
    expect(nothing.body.code).toBe("invalid_state");

    // A device naming another team's snapshot gets nothing of it.
    const foreignInstance = await createInstance(
      server,
      outsider,
      (await server.request("GET", "/api/v1/user/teams", { token: outsider.token })).body.teams[0]
        .id,
    );
    const foreign = await createSnapshot(server, outsider, foreignInstance);
    await checkIn(device, { snapshot: foreign, settings });
    const named = await take();
    expect(named.status).toBe(400);
    expect(named.body.code).toBe("invalid_state");
    const seen = await server.request("GET", `/api/v1/devices/${device.deviceId}`, {
      token: owner.token,
    });
    expect(seen.body.activeSnapshot).toBeNull();
  });

  test("an instance's device has no snapshots of its own (400 invalid_device); an application's has no instance's", async () => {
    const ofInstance = await createRunningDevice(server, owner, team.id, { of: "instance" });
    for (const [method, path, body] of [
      ["GET", `/api/v1/devices/${ofInstance.deviceId}/snapshots`, undefined],
      ["POST", `/api/v1/devices/${ofInstance.deviceId}/snapshots`, { name: "x" }],
    ] as const) {
      const reply = await server.request(method, path, {
        token: member.token,
        ...(body && { body }),
      });
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body.code).toBe("invalid_device");
    }
    const ofApplication = await createRunningDevice(server, owner, team.id);
    const wrong = await server.request(
      "POST",
      `/api/v1/devices/${ofApplication.deviceId}/snapshot`,
      { token: member.token, body: { name: "x" } },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("invalid_device");
  });

  test("an instance's device: the snapshot is the instance's, and setAsTarget makes it its devices' target", async () => {
    const device = await createRunningDevice(server, owner, team.id, {
      of: "instance",
      snapshot: CONTENT,
    });
    const taken = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshot`, {
      token: member.token,
      body: { name: "From the instance's device", setAsTarget: true },
    });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({
      ownerType: "instance",
      projectId: device.instanceId,
      modules: { "node-red": "4.1.15" },
    });
    const list = await server.request("GET", `/api/v1/projects/${device.instanceId}/snapshots`, {
      token: viewer.token,
    });
    expect(list.body.snapshots[0].id).toBe(taken.body.id);
    const target = await server.request(
      "GET",
      `/api/v1/projects/${device.instanceId}/devices/settings`,
      { token: viewer.token },
    );
    expect(target.body).toEqual({ targetSnapshot: taken.body.id });
    const [entry] = await auditEntries(server.db, { event: "project.device.snapshot.created" });
    expect(entry).toMatchObject({
      entity_type: "project",
      entity_id: device.instanceId,
      body: { device: { id: device.deviceId }, snapshot: { id: taken.body.id } },
    });
    const byViewer = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshot`, {
      token: viewer.token,
      body: { name: "no" },
    });
    expect(byViewer.status).toBe(403);
  });
});

describe("targets stay in their team and application", () => {
  test("a device's targetSnapshot of another team, or another application, is 400 naming it", async () => {
    const foreignTeam = (
      await server.request("GET", "/api/v1/user/teams", { token: outsider.token })
    ).body.teams[0].id;
    const foreign = await createSnapshot(
      server,
      outsider,
      await createInstance(server, outsider, foreignTeam),
    );
    const otherApplication = await createSnapshot(
      server,
      owner,
      await createInstance(server, owner, team.id),
    );
    for (const of of ["application", "instance"] as const) {
      const device = await createRunningDevice(server, owner, team.id, { of });
      for (const targetSnapshot of [foreign, otherApplication]) {
        const reply = await server.request("PUT", `/api/v1/devices/${device.deviceId}`, {
          token: member.token,
          body: { targetSnapshot },
        });
        expect(reply.status, `${of} device, ${targetSnapshot}`).toBe(400);
        expect(reply.body).toMatchObject({
          code: "invalid_snapshot",
          errors: [{ path: "targetSnapshot" }],
        });
      }
      const unchanged = await server.request("GET", `/api/v1/devices/${device.deviceId}`, {
        token: owner.token,
      });
      expect(unchanged.body.targetSnapshot.id).toBe(device.snapshotId);
    }
  });
});

describe("another team", () => {
  test("its member gets 404 on every device snapshot route", async () => {
    const device = await createRunningDevice(server, owner, team.id);
    const ofInstance = await createRunningDevice(server, owner, team.id, { of: "instance" });
    const taken = await server.request("POST", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: owner.token,
      body: { name: "private" },
    });
    const id = taken.body.id;
    const routes: [string, string, unknown?][] = [
      ["GET", `/api/v1/devices/${device.deviceId}/snapshots`],
      ["POST", `/api/v1/devices/${device.deviceId}/snapshots`, { name: "x" }],
      ["GET", `/api/v1/devices/${device.deviceId}/snapshots/${id}`],
      ["DELETE", `/api/v1/devices/${device.deviceId}/snapshots/${id}`],
      ["POST", `/api/v1/devices/${ofInstance.deviceId}/snapshot`, { name: "x" }],
      ["GET", `/api/v1/applications/${device.applicationId}/snapshots`],
      ["GET", `/api/v1/snapshots/${id}`],
      ["GET", `/api/v1/snapshots/${id}/full`],
      ["PUT", `/api/v1/snapshots/${id}`, { name: "x" }],
      ["DELETE", `/api/v1/snapshots/${id}`],
      ["POST", `/api/v1/snapshots/${id}/export`, { credentialSecret: "a long secret" }],
    ];
    for (const [method, path, body] of routes) {
      const reply = await server.request(method, path, {
        token: outsider.token,
        ...(body ? { body } : {}),
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    // Their own application, filtered by this team's device: 400 naming the filter.
    const theirs = await createApplication(
      server,
      outsider,
      (await server.request("GET", "/api/v1/user/teams", { token: outsider.token })).body.teams[0]
        .id,
    );
    const filtered = await server.request(
      "GET",
      `/api/v1/applications/${theirs}/snapshots?deviceId=${device.deviceId}`,
      { token: outsider.token },
    );
    expect(filtered.status).toBe(400);
    expect(filtered.body.errors[0].path).toBe("deviceId");
    const list = await server.request("GET", `/api/v1/devices/${device.deviceId}/snapshots`, {
      token: owner.token,
    });
    expect(list.body.snapshots.map((s: { name: string }) => s.name)).toEqual(["private"]);
  });
});
