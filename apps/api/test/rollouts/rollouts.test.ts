// Rollouts through the REST API, with devices that speak the agent's HTTP protocol as the real
// agent does (check in, download the snapshot they are told to run, report running it) and whose
// "flows" report through the health tab the platform added to what it served them (its URL and
// credential read from the served flows): a good snapshot rolls out wave by wave and becomes the
// group's target; a flow error stops the rollout at its first wave and that device runs its
// previous snapshot again while the others never changed; a restart fails the gate too; waves
// that cannot be met are refused with nothing created; dryRun's plan is what then happens;
// pause, resume, approval and abort; owners act, members and viewers read (403 on actions,
// whatever the state), other teams get 404. (test/rollouts/rollouts-agent.test.ts runs the real
// agent and Node-RED.)
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { type Person, teamOfRoles } from "../support/team-of-roles";
import {
  type HttpDevice,
  rolloutFixture,
  type RolloutFixture,
  waitForRollout,
} from "./rollout-fleet";

let server: TestServer;
let owner: Person;
let member: Person;
let viewer: Person;
let outsider: Person;
let team: { id: string };

beforeAll(async () => {
  server = await startServer();
  const roles = await teamOfRoles(server, "rollouts");
  ({ owner, member, viewer, outsider } = roles);
  team = { id: roles.teamId };
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const create = (fixture: RolloutFixture, body: Record<string, unknown>, token = owner.token) =>
  server.request("POST", "/api/v1/rollouts", {
    token,
    body: { snapshotId: fixture.next, deviceGroupId: fixture.groupId, ...body },
  });

describe("a good snapshot", () => {
  test("rolls out wave by wave, one device then the rest, and becomes the group's target", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 3);
    const plan = await create(fixture, {
      waves: [{ count: 1 }, { percent: 100 }],
      soakSeconds: 1,
      dryRun: true,
    });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.body.dryRun).toBe(true);
    expect(plan.body.waves.map((w: { devices: unknown[] }) => w.devices.length)).toEqual([1, 2]);
    for (const device of plan.body.waves.flatMap((w: { devices: unknown[] }) => w.devices)) {
      expect(device.runs?.id).toBe(fixture.current);
      expect(device.willRun.id).toBe(fixture.next);
    }
    // A dry run created nothing.
    const none = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/rollouts`,
      { token: owner.token },
    );
    expect(none.body.count).toBe(0);

    const created = await create(fixture, {
      waves: [{ count: 1 }, { percent: 100 }],
      soakSeconds: 1,
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    expect(
      created.body.waves.map((w: { devices: { id: string }[] }) => w.devices.map((d) => d.id)),
    ).toEqual(
      plan.body.waves.map((w: { devices: { id: string }[] }) => w.devices.map((d) => d.id)),
    );
    const [first, ...rest] = plan.body.waves.flatMap((w: { devices: { id: string }[] }) =>
      w.devices.map((d) => fixture.devices.find((device) => device.id === d.id)!),
    ) as HttpDevice[];
    // The first wave only: the others are told nothing new while it soaks.
    await waitForRollout(server, owner, id, (r) => r.waves[0].devices[0].state === "deploying");
    for (const device of fixture.devices) await device.follow();
    expect(first!.runs).toBe(fixture.next);
    for (const device of rest) expect(device.runs).toBe(fixture.current);
    await waitForRollout(server, owner, id, (r) => r.waves[0].state === "done", fixture.devices);
    const done = await waitForRollout(
      server,
      owner,
      id,
      (r) => r.state === "succeeded",
      fixture.devices,
    );
    expect(done.waves.every((w: { state: string }) => w.state === "done")).toBe(true);
    for (const device of done.waves.flatMap((w: { devices: unknown[] }) => w.devices)) {
      expect(device.state).toBe("healthy");
    }
    for (const device of fixture.devices) expect(device.runs).toBe(fixture.next);
    const group = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/device-groups/${fixture.groupId}`,
      { token: owner.token },
    );
    expect(group.body.targetSnapshot.id).toBe(fixture.next);
    // Every step is in the application's audit log.
    const log = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/audit-log?limit=100`,
      { token: owner.token },
    );
    const events = (log.body.log as { event: string }[]).map((e) => e.event);
    for (const event of ["created", "wave-started", "succeeded"]) {
      expect(events).toContain(`application.rollout.${event}`);
    }
    // Listed for the application and the group.
    const listed = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/device-groups/${fixture.groupId}/rollouts`,
      { token: viewer.token },
    );
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.rollouts[0]).toMatchObject({
      id,
      state: "succeeded",
      deviceCount: 3,
      waveCount: 2,
    });
  }, 60_000);
});

describe("the gate", () => {
  test("a flow's uncaught error stops the rollout at its first wave and rolls that device back", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 3);
    const created = await create(fixture, {
      waves: [{ count: 1 }, { percent: 100 }],
      soakSeconds: 30,
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const firstId = created.body.waves[0].devices[0].id as string;
    const first = fixture.devices.find((d) => d.id === firstId)!;
    first.onStart = () =>
      first.report({
        event: "error",
        message: "TypeError: boom",
        source: { id: "fn1", type: "function", name: "thrower" },
      });
    const ended = await waitForRollout(
      server,
      owner,
      id,
      (r) => r.state === "rolled_back",
      fixture.devices,
    );
    expect(ended.reason).toMatch(/1 device failed/);
    const device = ended.waves[0].devices[0];
    expect(device.state).toBe("rolled_back");
    expect(device.reason).toMatch(/uncaught error: TypeError: boom \(function node "thrower"\)/);
    for (const other of ended.waves[1].devices) expect(other.state).toBe("pending");
    // It runs its previous snapshot again; the others never changed.
    for (const d of fixture.devices) await d.follow();
    for (const d of fixture.devices) expect(d.runs).toBe(fixture.current);
    for (const d of fixture.devices.filter((d) => d !== first)) expect(d.downloads).toBe(1);
    // The group's target is what it was.
    const group = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/device-groups/${fixture.groupId}`,
      { token: owner.token },
    );
    expect(group.body.targetSnapshot.id).toBe(fixture.current);
  }, 60_000);

  test("a second start of the flows (a restart) fails the device", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const created = await create(fixture, { waves: [{ count: 1 }, { count: 1 }], soakSeconds: 30 });
    const id = created.body.id as string;
    const first = fixture.devices.find((d) => d.id === created.body.waves[0].devices[0].id)!;
    first.onStart = async () => {
      await first.report({ event: "started" });
    };
    const ended = await waitForRollout(
      server,
      owner,
      id,
      (r) => r.state === "rolled_back",
      fixture.devices,
    );
    expect(ended.waves[0].devices[0].reason).toMatch(/restarted/);
  }, 60_000);

  test("the agent's report of a crash loop fails the device", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const created = await create(fixture, { waves: [{ count: 1 }, { count: 1 }], soakSeconds: 30 });
    const id = created.body.id as string;
    const first = fixture.devices.find((d) => d.id === created.body.waves[0].devices[0].id)!;
    first.onStart = () =>
      first.audit({
        event: "crashed",
        timestamp: Date.now(),
        info: { code: "loop_detected", info: "Node-RED restart loop detected" },
      });
    const ended = await waitForRollout(
      server,
      owner,
      id,
      (r) => r.state === "rolled_back",
      fixture.devices,
    );
    expect(ended.waves[0].devices[0].reason).toBe(
      "The agent reports crashed: Node-RED restart loop detected",
    );
    expect(ended.waves[1].devices[0].state).toBe("pending");
  }, 60_000);

  test("the health route takes only its own credential", async () => {
    const reply = await fetch(`${server.url}/api/v1/rollouts/x1/devices/y1/health`, {
      method: "POST",
      headers: { authorization: "Bearer nope", "content-type": "application/json" },
      body: JSON.stringify({ event: "started" }),
    });
    expect(reply.status).toBe(401);
  });
});

describe("what cannot be met", () => {
  test.each([
    ["no wave", []],
    ["a count of 0", [{ count: 0 }]],
    ["a percentage above 100", [{ percent: 150 }]],
    ["a first wave larger than the target", [{ count: 5 }, { percent: 100 }]],
    ["a wave left with no device", [{ count: 2 }, { count: 1 }, { percent: 100 }]],
  ])("%s is 400 and nothing is created", async (_, waves) => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const reply = await create(fixture, { waves });
    expect(reply.status, reply.text).toBe(400);
    const list = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/rollouts`,
      { token: owner.token },
    );
    expect(list.body.count).toBe(0);
  });
});

describe("owners act, members and viewers read, others see nothing", () => {
  test("pause, resume, approval, abort", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const created = await create(fixture, {
      waves: [{ count: 1 }, { count: 1 }],
      soakSeconds: 0,
      requireApproval: true,
    });
    const id = created.body.id as string;
    const path = (verb: string) => `/api/v1/rollouts/${id}/${verb}`;
    // Permissions before state: a member's and a viewer's actions are 403 whatever the state.
    for (const user of [member, viewer]) {
      for (const verb of ["pause", "resume", "abort", "approve"]) {
        const reply = await server.request("POST", path(verb), { token: user.token });
        expect(reply.status, `${verb}: ${reply.text}`).toBe(403);
      }
      const read = await server.request("GET", `/api/v1/rollouts/${id}`, { token: user.token });
      expect(read.status).toBe(200);
    }
    for (const verb of ["pause", "abort"]) {
      const reply = await server.request("POST", path(verb), { token: outsider.token });
      expect(reply.status).toBe(404);
    }
    expect(
      (await server.request("GET", `/api/v1/rollouts/${id}`, { token: outsider.token })).status,
    ).toBe(404);
    const listed = await server.request(
      "GET",
      `/api/v1/applications/${fixture.applicationId}/rollouts`,
      { token: outsider.token },
    );
    expect(listed.status).toBe(404);

    // Approval: the second wave waits for it.
    const waiting = await waitForRollout(
      server,
      owner,
      id,
      (r) => r.state === "waiting_approval",
      fixture.devices,
    );
    expect(waiting.waves[1].state).toBe("waiting_approval");
    expect((await server.request("POST", path("resume"), { token: owner.token })).status).toBe(409);
    const paused = await server.request("POST", path("pause"), { token: owner.token });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body.state).toBe("paused");
    const resumed = await server.request("POST", path("resume"), { token: owner.token });
    expect(resumed.body.state).toBe("running");
    await waitForRollout(server, owner, id, (r) => r.state === "waiting_approval", fixture.devices);
    const approved = await server.request("POST", path("approve"), { token: owner.token });
    expect(approved.status, approved.text).toBe(200);
    // The second wave's device is sent the snapshot; it does not check in, so with no soak the
    // rollout cannot finish before the abort.
    await waitForRollout(server, owner, id, (r) => r.waves[1].devices[0].state === "deploying");
    // Abort: every device it deployed goes back; the rollout says why.
    const aborted = await server.request("POST", path("abort"), { token: owner.token });
    expect(aborted.status, aborted.text).toBe(200);
    expect(aborted.body.state).toBe("aborted");
    for (const wave of aborted.body.waves) {
      for (const device of wave.devices) expect(device.state).toBe("rolled_back");
    }
    for (const d of fixture.devices) await d.follow();
    for (const d of fixture.devices) expect(d.runs).toBe(fixture.current);
    expect((await server.request("POST", path("abort"), { token: owner.token })).status).toBe(409);
  }, 60_000);
});

describe("while a rollout is under way", () => {
  test("its group's target is the rollout's: a change of it is 409, and another rollout to it too", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 1);
    const created = await create(fixture, { waves: [{ count: 1 }], reportTimeoutSeconds: 600 });
    expect(created.status, created.text).toBe(200);
    const groupPath = `/api/v1/applications/${fixture.applicationId}/device-groups/${fixture.groupId}`;
    const set = await server.request("PUT", groupPath, {
      token: owner.token,
      body: { targetSnapshotId: fixture.current },
    });
    expect(set.status, set.text).toBe(409);
    expect(set.body.code).toBe("rollout_in_progress");
    // A rename is not a change of target.
    const renamed = await server.request("PUT", groupPath, {
      token: owner.token,
      body: { name: "renamed while rolling out" },
    });
    expect(renamed.status, renamed.text).toBe(200);
    const again = await create(fixture, { waves: [{ count: 1 }] });
    expect(again.status, again.text).toBe(409);
    expect(again.body.code).toBe("rollout_in_progress");
    const byDevice = await server.request("POST", "/api/v1/rollouts", {
      token: owner.token,
      body: { snapshotId: fixture.next, devices: [fixture.devices[0]!.id], waves: [{ count: 1 }] },
    });
    expect(byDevice.status, byDevice.text).toBe(400);
    expect(byDevice.body.errors[0].path).toBe("devices.0");
    const aborted = await server.request("POST", `/api/v1/rollouts/${created.body.id}/abort`, {
      token: owner.token,
    });
    expect(aborted.body.state).toBe("aborted");
    const after = await server.request("PUT", groupPath, {
      token: owner.token,
      body: { targetSnapshotId: fixture.next },
    });
    expect(after.status, after.text).toBe(200);
  });
});

describe("devices that change under a rollout", () => {
  test("a device that runs the snapshot already is left out of the plan", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const [runsIt, other] = fixture.devices as [HttpDevice, HttpDevice];
    const own = await server.request("PUT", `/api/v1/devices/${runsIt.id}`, {
      token: owner.token,
      body: { targetSnapshot: fixture.next },
    });
    expect(own.status, own.text).toBe(200);
    // Out of the group, it follows its own target: the rollout's snapshot.
    const groupPath = `/api/v1/applications/${fixture.applicationId}/device-groups/${fixture.groupId}`;
    await server.request("PATCH", groupPath, { token: owner.token, body: { remove: [runsIt.id] } });
    await runsIt.follow();
    expect(runsIt.runs).toBe(fixture.next);
    const plan = await server.request("POST", "/api/v1/rollouts", {
      token: owner.token,
      body: {
        snapshotId: fixture.next,
        devices: [runsIt.id, other.id],
        waves: [{ count: 1 }],
        dryRun: true,
      },
    });
    expect(plan.status, plan.text).toBe(400);
    const onlyIt = await server.request("POST", "/api/v1/rollouts", {
      token: owner.token,
      body: { snapshotId: fixture.next, devices: [runsIt.id], waves: [{ count: 1 }] },
    });
    expect(onlyIt.status).toBe(400);
    expect(onlyIt.body.error).toMatch(/runs this snapshot already/);
  });

  test("a rollout whose devices are deleted fails, and one moved away leaves it", async () => {
    const fixture = await rolloutFixture(server, owner, team.id, 2);
    const created = await create(fixture, { waves: [{ count: 1 }, { count: 1 }], soakSeconds: 30 });
    const id = created.body.id as string;
    const [first, second] = created.body.waves.map(
      (w: { devices: { id: string }[] }) => w.devices[0]!.id,
    ) as [string, string];
    await waitForRollout(server, owner, id, (r) => r.waves[0].devices[0].state === "deploying");
    // The second moves to another application: it leaves the rollout.
    const elsewhere = await server.request("POST", "/api/v1/applications", {
      token: owner.token,
      body: { name: "elsewhere", teamId: team.id },
    });
    const moved = await server.request("PUT", `/api/v1/devices/${second}`, {
      token: owner.token,
      body: { application: elsewhere.body.id },
    });
    expect(moved.status, moved.text).toBe(200);
    const left = await waitForRollout(server, owner, id, (r) => r.waves.length === 1);
    expect(left.waves[0].devices.map((d: { id: string }) => d.id)).toEqual([first]);
    const deleted = await server.request("DELETE", `/api/v1/devices/${first}`, {
      token: owner.token,
    });
    expect(deleted.status, deleted.text).toBeLessThan(300);
    const ended = await waitForRollout(server, owner, id, (r) => r.state === "failed");
    expect(ended.reason).toBe("Its devices were deleted");
  });
});
