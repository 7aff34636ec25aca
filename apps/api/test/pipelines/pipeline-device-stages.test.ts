// Pipeline stages that deploy to a device group or a device: exactly one target of the pipeline's
// application per stage (400 naming the field otherwise), answered as `deviceGroups` / `devices`;
// `use_active_snapshot` for device stages only. Deploying an instance stage to a device group
// stage makes the snapshot the group's target, which a member's check-in then names (409); a device
// stage's device gets it likewise. Members and viewers cannot deploy; another team gets 404.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, createLogger } from "../../src/index";
import { startServer, type TestServer, TOKEN_SECRET } from "../support/harness";
import { awaitOperation, createApplication } from "../support/team-fixtures";
import { type Person, teamOfRoles } from "../support/team-of-roles";

let server: TestServer;
/** The team's owner, a member and a viewer of it, and a user of no team of it (teamOfRoles). */
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let applicationId: string;
let instanceId: string;
let groupId: string;
let member1: { id: string; token: string };
let loneDevice: { id: string; token: string };

async function device(application: string) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: `dev-${Math.random().toString(36).slice(2, 7)}`, team: teamId, application },
  });
  expect(reply.status, reply.text).toBe(200);
  return { id: reply.body.id as string, token: reply.body.credentials.token as string };
}

/** The agent's check-in, as device-live.test.ts sends it: the snapshot the platform names. */
async function checkIn(d: { id: string; token: string }) {
  const response = await fetch(`${server.url}/api/v1/devices/${d.id}/live/state`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${d.token}`,
      "content-type": "application/json",
      "user-agent": "FlowFuse Device Agent v4.2.1",
    },
    body: JSON.stringify({
      ownerType: "application",
      project: null,
      application: applicationId,
      snapshot: null,
      settings: null,
      state: "running",
      mode: "autonomous",
      agentVersion: "4.2.1",
    }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function pipeline(): Promise<string> {
  const reply = await server.request("POST", "/api/v1/pipelines", {
    token: owner.token,
    body: { applicationId, name: `p-${Math.random().toString(36).slice(2, 7)}` },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id;
}

const addStage = (pipelineId: string, body: Record<string, unknown>) =>
  server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, { token: owner.token, body });

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  ({ teamId, owner, member, viewer, outsider } = await teamOfRoles(server, "Fleet delivery"));
  applicationId = await createApplication(server, owner, teamId);
  const instance = await server.request("POST", "/api/v1/projects", {
    token: owner.token,
    body: { name: "fleet-dev", applicationId },
  });
  instanceId = instance.body.id;
  const group = await server.request(
    "POST",
    `/api/v1/applications/${applicationId}/device-groups`,
    { token: owner.token, body: { name: "line A" } },
  );
  expect(group.status, group.text).toBe(201);
  groupId = group.body.id;
  member1 = await device(applicationId);
  loneDevice = await device(applicationId);
  const added = await server.request(
    "PATCH",
    `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
    { token: owner.token, body: { add: [member1.id] } },
  );
  expect(added.status, added.text).toBe(200);
});
afterAll(() => server?.close());

describe("device group and device stages", () => {
  it("names exactly one target of the pipeline's application, else 400 naming the field", async () => {
    const pipelineId = await pipeline();
    const first = await addStage(pipelineId, { name: "dev", instanceId });
    expect(first.status, first.text).toBe(200);
    const source = first.body.id;

    const groupFirst = await addStage(await pipeline(), { name: "g", deviceGroupId: groupId });
    expect(groupFirst.status).toBe(400);
    expect(groupFirst.body.errors[0].path).toBe("deviceGroupId");

    const both = await addStage(pipelineId, {
      name: "x",
      source,
      instanceId,
      deviceGroupId: groupId,
    });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].path).toBe("deviceGroupId");
    const none = await addStage(pipelineId, { name: "x", source });
    expect(none.status).toBe(400);
    expect(none.body.errors[0].path).toBe("instanceId");

    const elsewhere = await createApplication(server, owner, teamId);
    const otherGroup = await server.request(
      "POST",
      `/api/v1/applications/${elsewhere}/device-groups`,
      { token: owner.token, body: { name: "elsewhere" } },
    );
    const otherDevice = await device(elsewhere);
    for (const [field, id] of [
      ["deviceGroupId", otherGroup.body.id],
      ["deviceId", otherDevice.id],
      ["deviceGroupId", "doesnotexist"],
    ]) {
      const refused = await addStage(pipelineId, { name: "x", source, [field!]: id });
      expect(refused.status, `${field} ${refused.text}`).toBe(400);
      expect(refused.body.errors[0].path).toBe(field);
    }
    const active = await addStage(pipelineId, {
      name: "x",
      source,
      deviceGroupId: groupId,
      action: "use_active_snapshot",
    });
    expect(active.status).toBe(400);
    expect(active.body.errors[0].path).toBe("action");

    const groupStage = await addStage(pipelineId, {
      name: "fleet",
      source,
      deviceGroupId: groupId,
    });
    expect(groupStage.status, groupStage.text).toBe(200);
    expect(groupStage.body).toMatchObject({
      name: "fleet",
      action: "create_snapshot",
      instances: [],
      devices: [],
      deviceGroups: [{ id: groupId, name: "line A", deviceCount: 1 }],
    });
    const deviceStage = await addStage(pipelineId, {
      name: "bench",
      source: groupStage.body.id,
      deviceId: loneDevice.id,
    });
    expect(deviceStage.status, deviceStage.text).toBe(200);
    expect(deviceStage.body).toMatchObject({
      action: "use_active_snapshot",
      instances: [],
      deviceGroups: [],
      devices: [{ id: loneDevice.id }],
    });
    // An instance stage cannot take use_active_snapshot; changing the target re-checks it.
    const changed = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${deviceStage.body.id}`,
      { token: owner.token, body: { instanceId } },
    );
    expect(changed.status).toBe(400);
    expect(changed.body.errors[0].path).toBe("action");
    const listed = await server.request("GET", `/api/v1/pipelines/${pipelineId}`, {
      token: viewer.token,
    });
    expect(listed.body.stages.map((stage: { name: string }) => stage.name)).toEqual([
      "dev",
      "fleet",
      "bench",
    ]);
  });

  it("deploys an instance stage to a device group: the group's target is the snapshot, a member's check-in names it", async () => {
    const pipelineId = await pipeline();
    const dev = await addStage(pipelineId, { name: "dev", instanceId });
    const fleet = await addStage(pipelineId, {
      name: "fleet",
      source: dev.body.id,
      deviceGroupId: groupId,
    });
    expect(fleet.status, fleet.text).toBe(200);
    const path = `/api/v1/pipelines/${pipelineId}/stages/${dev.body.id}/deploy`;

    for (const caller of [member, viewer]) {
      expect((await server.request("PUT", path, { token: caller.token, body: {} })).status).toBe(
        403,
      );
    }
    expect((await server.request("PUT", path, { token: outsider.token, body: {} })).status).toBe(
      404,
    );
    expect(
      (
        await server.request("GET", `/api/v1/pipelines/${pipelineId}/stages/${fleet.body.id}`, {
          token: outsider.token,
        })
      ).status,
    ).toBe(404);

    const started = await server.request("PUT", path, { token: owner.token, body: {} });
    expect(started.status, started.text).toBe(200);
    expect(started.body.status).toBe("importing");
    const done = await awaitOperation(server, owner, started.body.operation.id);
    expect(done).toMatchObject({ status: "succeeded", error: null });
    const snapshotId = (done as unknown as { snapshot: { id: string } }).snapshot.id;

    const group = await server.request(
      "GET",
      `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
      { token: member.token },
    );
    expect(group.body.targetSnapshot.id).toBe(snapshotId);
    const told = await checkIn(member1);
    expect(told.status).toBe(409);
    expect(told.body.snapshot).toBe(snapshotId);
    // Not a member: untouched.
    expect((await checkIn(loneDevice)).body?.snapshot ?? null).toBeNull();

    const audit = await server.request("GET", `/api/v1/teams/${teamId}/audit-log`, {
      token: owner.token,
    });
    expect(audit.body.log.map((entry: { event: string }) => entry.event)).toContain(
      "application.pipeline.stage-deployed",
    );
  });

  it("deploys an instance stage to a device stage: the device's target is the snapshot", async () => {
    const pipelineId = await pipeline();
    const dev = await addStage(pipelineId, { name: "dev", instanceId });
    await addStage(pipelineId, { name: "bench", source: dev.body.id, deviceId: loneDevice.id });
    const started = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${dev.body.id}/deploy`,
      { token: owner.token, body: {} },
    );
    const done = await awaitOperation(server, owner, started.body.operation.id);
    expect(done.status).toBe("succeeded");
    const snapshotId = (done as unknown as { snapshot: { id: string } }).snapshot.id;
    const seen = await server.request("GET", `/api/v1/devices/${loneDevice.id}`, {
      token: member.token,
    });
    expect(seen.body.targetSnapshot.id).toBe(snapshotId);
    const told = await checkIn(loneDevice);
    expect(told.status).toBe(409);
    expect(told.body.snapshot).toBe(snapshotId);
  });
});

describe("one deploy at a time to a device group, and none pending forever", () => {
  /** A pipeline whose instance stage deploys to the group. */
  async function toGroup() {
    const pipelineId = await pipeline();
    const dev = await addStage(pipelineId, { name: "dev", instanceId });
    await addStage(pipelineId, { name: "fleet", source: dev.body.id, deviceGroupId: groupId });
    return `/api/v1/pipelines/${pipelineId}/stages/${dev.body.id}/deploy`;
  }

  /** What a deploy under way looks like in the database (another process's, or a dead one's). */
  const pendingOperation = async (minutesSinceHeartbeat: number) => {
    const id = `op-${Math.random().toString(36).slice(2, 10)}`;
    await server.db
      .insertInto("operations")
      .values({
        id,
        team_id: teamId,
        kind: "pipeline.deploy",
        subject: JSON.stringify({
          pipeline: { id: "gone", name: "an earlier pipeline" },
          sourceStage: { id: "s1", name: "dev" },
          targetStage: { id: "s2", name: "fleet" },
        }),
        user_id: owner.id,
        target: `group:${groupId}`,
        updated_at: new Date(Date.now() - minutesSinceHeartbeat * 60_000),
      })
      .execute();
    return id;
  };

  it("two concurrent deploys to one group: the second is refused (409) or runs after the first; the group ends on the last one's snapshot", async () => {
    const [a, b] = await Promise.all([toGroup(), toGroup()]);
    const replies = await Promise.all(
      [a, b].map((path) => server.request("PUT", path, { token: owner.token, body: {} })),
    );
    const started = replies.filter((reply) => reply.status === 200);
    const refused = replies.filter((reply) => reply.status !== 200);
    expect(started.length).toBeGreaterThanOrEqual(1);
    for (const reply of refused) {
      expect(reply.status, reply.text).toBe(409);
      expect(reply.body.code).toBe("deploy_in_progress");
      expect(reply.body.error).toContain(started[0]!.body.operation.id);
    }
    const done = await Promise.all(
      started.map((reply) => awaitOperation(server, owner, reply.body.operation.id)),
    );
    expect(done.map((operation) => operation.status)).toEqual(done.map(() => "succeeded"));
    // Both ran: one after the other (the second was made after the first had finished).
    if (started.length === 2) {
      const [first, second] = await Promise.all(
        started.map((reply) =>
          server.db
            .selectFrom("operations")
            .select(["created_at", "finished_at"])
            .where("id", "=", reply.body.operation.id)
            .executeTakeFirstOrThrow(),
        ),
      );
      const [earlier, later] =
        first!.created_at <= second!.created_at ? [first!, second!] : [second!, first!];
      expect(later.created_at >= earlier.finished_at!).toBe(true);
    }
    const last = done.at(-1) as unknown as { snapshot: { id: string } };
    const group = await server.request(
      "GET",
      `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
      { token: owner.token },
    );
    const snapshots = done.map((operation) => (operation as any).snapshot.id);
    expect(snapshots).toContain(group.body.targetSnapshot.id);
    expect(last.snapshot.id).toBeDefined();
  });

  it("a deploy under way (its process alive) refuses another to the same group with 409 naming it; it ends and the group takes deploys again", async () => {
    const path = await toGroup();
    const underWay = await pendingOperation(0);
    const refused = await server.request("PUT", path, { token: owner.token, body: {} });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ code: "deploy_in_progress" });
    expect(refused.body.error).toContain(underWay);
    // Nothing was made for the refused one.
    const pending = await server.db
      .selectFrom("operations")
      .select("id")
      .where("status", "=", "pending")
      .execute();
    expect(pending.map((row) => row.id)).toEqual([underWay]);
    await server.db
      .updateTable("operations")
      .set({ status: "succeeded", finished_at: new Date() })
      .where("id", "=", underWay)
      .execute();
    const started = await server.request("PUT", path, { token: owner.token, body: {} });
    expect(started.status, started.text).toBe(200);
    expect((await awaitOperation(server, owner, started.body.operation.id)).status).toBe(
      "succeeded",
    );
  });

  it("a deploy left pending by a process that died is failed when the platform starts again, and says so", async () => {
    const path = await toGroup();
    // The process running it died: its heartbeat stopped minutes ago, and nothing will finish it.
    const abandoned = await pendingOperation(5);
    // Restarted: a new server on the same database.
    const restarted = await startServer({
      db: server.testDb,
      dataDir: server.dataDir,
      instances: "in-memory",
    });
    try {
      const failed = await awaitOperation(restarted, owner, abandoned);
      expect(failed).toMatchObject({
        status: "failed",
        error: { code: "deploy_interrupted", error: expect.stringContaining("platform stopped") },
      });
      const audit = await restarted.request("GET", `/api/v1/teams/${teamId}/audit-log`, {
        token: owner.token,
      });
      const entry = audit.body.log.find(
        (e: { event: string; body: { operation?: { id: string } } }) =>
          e.event === "application.pipeline.stage-deploy-failed" &&
          e.body.operation?.id === abandoned,
      );
      expect(entry).toMatchObject({
        trigger: { type: "system" },
        body: { error: { code: "deploy_interrupted" }, targetStage: { name: "fleet" } },
      });
      // The group it held takes deploys again.
      const started = await restarted.request("PUT", path, { token: owner.token, body: {} });
      expect(started.status, started.text).toBe(200);
      expect((await awaitOperation(restarted, owner, started.body.operation.id)).status).toBe(
        "succeeded",
      );
    } finally {
      await restarted.close();
    }
  });

  it("a platform starts while the database is busy: nothing in its start waits for the database", async () => {
    await pendingOperation(5);
    // Another transaction holds the table the start's sweep writes (on PGlite, the one
    // connection with it) until the new server answers.
    let release = () => {};
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = server.db.transaction().execute(async (trx) => {
      await sql`lock table operations in exclusive mode`.execute(trx);
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await isLocked;
    const app = await buildApp({
      db: server.db,
      tokenSecret: TOKEN_SECRET,
      baseUrl: server.origin,
      logger: createLogger("silent"),
    });
    try {
      const url = await app.listen({ host: "127.0.0.1", port: 0 });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      release();
      await holding;
      // Its sweep, under way since it listened, ends before the close does.
      await app.close();
    }
  });
});
