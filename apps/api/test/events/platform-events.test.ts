// The platform's own events (issue 39), those no audit entry is, written once per change of state
// with the team, entity and data the catalogue names: a device polling over HTTP online at its
// first check-in, running the snapshot it reports, offline once silent past the timeout, online
// again when it checks in; the agent's crash report; a pipeline deploy started (before its
// outcome); and each change told once however many callers learn it at the same time (as several
// API processes sharing the database would). The real agent and a real Node-RED crash are in
// platform-events-agent.test.ts.
import { DEVICE_ONLINE_MS } from "@flowplane/contract";
import {
  announceDeviceOnline,
  announceDeviceSnapshot,
  announceProjectRuntime,
  announceSilentDevicesOffline,
  type EventRecord,
} from "@flowplane/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { platformEvents } from "../support/platform-events";
import {
  createPipeline,
  createRunningDevice,
  createTeam,
  makeUser,
  type RunningDevice,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { waiter } from "../support/until";

const until = waiter(20_000, 50);

let server: TestServer;
let owner: TestUser;
let team: TestTeam;

/** What an event says, as the catalogue names it. */
const said = (event: EventRecord) => ({
  type: event.type,
  entity: { type: event.entityType, id: event.entityId },
  data: event.data,
});

async function checkIn(device: RunningDevice, snapshot: string | null, state = "running") {
  const response = await fetch(`${server.url}/api/v1/devices/${device.deviceId}/live/state`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${device.deviceToken}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ state, snapshot, agentVersion: "4.2.1" }),
  });
  expect([200, 409]).toContain(response.status);
}

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  owner = await makeUser(server);
  team = await createTeam(server, owner);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const DEVICE_TYPES = ["device.online", "device.offline", "device.snapshot.running"];

describe("a device's platform events", () => {
  let device: RunningDevice;
  let name: string;
  let snapshotName: string;

  beforeAll(async () => {
    device = await createRunningDevice(server, owner, team.id);
    const view = await server.request("GET", `/api/v1/devices/${device.deviceId}`, {
      token: owner.token,
    });
    name = view.body.name;
    const snapshot = await server.request("GET", `/api/v1/snapshots/${device.snapshotId}`, {
      token: owner.token,
    });
    snapshotName = snapshot.body.name;
  });

  const ofDevice = () => ({ type: "device", id: device.deviceId });

  it("is online at its first check-in, running the snapshot it reports, each told once", async () => {
    // createRunningDevice checked in twice; once more changes nothing.
    await checkIn(device, device.snapshotId);
    const events = await platformEvents(server, team.id, DEVICE_TYPES, device.deviceId);
    expect(events.map(said)).toEqual([
      {
        type: "device.online",
        entity: ofDevice(),
        data: { device: { id: device.deviceId, name } },
      },
      {
        type: "device.snapshot.running",
        entity: ofDevice(),
        data: {
          device: { id: device.deviceId, name },
          snapshot: { id: device.snapshotId, name: snapshotName },
        },
      },
    ]);
    expect(events.every((event) => event.teamId === team.id && event.actorId === null)).toBe(true);
  });

  it("reports running no snapshot as a change, with none named", async () => {
    await checkIn(device, null);
    await checkIn(device, null);
    const events = await platformEvents(
      server,
      team.id,
      ["device.snapshot.running"],
      device.deviceId,
    );
    expect(events.at(-1)!.data).toEqual({ device: { id: device.deviceId, name }, snapshot: null });
    expect(events).toHaveLength(2);
  });

  it("is offline once silent past the timeout, and online again when it checks in", async () => {
    await sql`update devices set last_seen_at = now() - interval '31 minutes'
      where id = ${device.deviceId}`.execute(server.db);
    // The sweep, in two processes at once: told once.
    const gone = await Promise.all([
      announceSilentDevicesOffline(server.db, DEVICE_ONLINE_MS),
      announceSilentDevicesOffline(server.db, DEVICE_ONLINE_MS),
    ]);
    expect(gone[0] + gone[1]).toBe(1);
    const shown = await server.request("GET", `/api/v1/devices/${device.deviceId}`, {
      token: owner.token,
    });
    expect(shown.body.onlineStatus).toBe("offline");
    await checkIn(device, null);
    const types = (await platformEvents(server, team.id, DEVICE_TYPES, device.deviceId)).map(
      (event) => event.type,
    );
    expect(types.slice(-2)).toEqual(["device.offline", "device.online"]);
    expect(types.filter((type) => type === "device.online")).toHaveLength(2);
  });

  it("tells a change once however many learn it at the same time", async () => {
    const before = await platformEvents(server, team.id, DEVICE_TYPES, device.deviceId);
    await Promise.all([
      ...[1, 2, 3].map(() => announceDeviceOnline(server.db, device.deviceId, true)),
      ...[1, 2, 3].map(() => announceDeviceSnapshot(server.db, device.deviceId, device.snapshotId)),
    ]);
    await Promise.all([1, 2, 3].map(() => announceDeviceOnline(server.db, device.deviceId, false)));
    const after = await platformEvents(server, team.id, DEVICE_TYPES, device.deviceId);
    expect(after.slice(before.length).map((event) => event.type)).toEqual([
      "device.snapshot.running",
      "device.offline",
    ]);
  });

  it("is crashed when its agent reports Node-RED crashed or in safe mode", async () => {
    for (const event of ["crashed", "safe-mode", "stopped"]) {
      const response = await fetch(`${server.url}/logging/device/${device.deviceId}/audit`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${device.deviceToken}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ event, info: { code: "loop_detected" } }),
      });
      expect(response.status).toBe(200);
    }
    const events = await platformEvents(server, team.id, ["device.crashed"], device.deviceId);
    expect(events.map(said)).toEqual(
      ["crashed", "safe"].map((state) => ({
        type: "device.crashed",
        entity: ofDevice(),
        data: { device: { id: device.deviceId, name }, state },
      })),
    );
  });
});

describe("an instance's crash", () => {
  it("is told once, and its recovery once, in order", async () => {
    const { instanceIds } = await createPipeline(server, owner, team.id);
    const [id] = instanceIds;
    const view = await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token });
    const project = { id, name: view.body.name };
    const crash = { crashed: true as const, reason: "exit code 1" };
    await Promise.all([1, 2].map(() => announceProjectRuntime(server.db, id, crash)));
    await Promise.all([1, 2].map(() => announceProjectRuntime(server.db, id, { crashed: false })));
    // Running without a crash before: nothing to recover from.
    await announceProjectRuntime(server.db, id, { crashed: false });
    const events = await platformEvents(server, team.id, ["project.crashed", "project.recovered"]);
    expect(events.map(said)).toEqual([
      {
        type: "project.crashed",
        entity: { type: "project", id },
        data: { project, reason: "exit code 1" },
      },
      { type: "project.recovered", entity: { type: "project", id }, data: { project } },
    ]);
  });
});

describe("a pipeline deploy", () => {
  it("is told started, by whom, before its outcome", async () => {
    const pipeline = await createPipeline(server, owner, team.id);
    const path = `/api/v1/pipelines/${pipeline.pipelineId}/stages/${pipeline.stageId}/deploy`;
    const started = await server.request("PUT", path, { token: owner.token, body: {} });
    expect(started.status, started.text).toBe(200);
    const types = [
      "application.pipeline.stage-deploy-started",
      "application.pipeline.stage-deployed",
      "application.pipeline.stage-deploy-failed",
    ];
    const events = await until("the deploy's outcome", async () => {
      const seen = await platformEvents(server, team.id, types);
      return seen.length === 2 ? seen : undefined;
    });
    expect(events.map((event) => event.type)).toEqual(types.slice(0, 2));
    const names = async (path: string) =>
      (await server.request("GET", path, { token: owner.token })).body;
    const pipelineView = await names(`/api/v1/pipelines/${pipeline.pipelineId}`);
    const application = await names(`/api/v1/applications/${pipeline.applicationId}`);
    const stageName = (id: string) =>
      pipelineView.stages.find((stage: { id: string }) => stage.id === id).name;
    expect(said(events[0]!)).toEqual({
      type: "application.pipeline.stage-deploy-started",
      entity: { type: "application", id: pipeline.applicationId },
      data: {
        application: { id: pipeline.applicationId, name: application.name },
        pipeline: { id: pipeline.pipelineId, name: pipelineView.name },
        pipelineStage: { id: pipeline.stageId, name: stageName(pipeline.stageId) },
        pipelineStageTarget: { id: pipeline.lastStageId, name: stageName(pipeline.lastStageId) },
      },
    });
    expect(events[0]!.actorId).toBe(owner.id);
    expect(events[0]!.teamId).toBe(team.id);
  });
});
