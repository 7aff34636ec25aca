// Pipelines and their stages through the real server: FlowFuse's routes and shapes, stages as a
// linked list (added after a `source`, deleted with their neighbours joined), roles (owners write,
// members and viewers read), another team's 404s, and the audit log of every change.
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { createApplication } from "../support/team-fixtures";
import { type Person, teamOfRoles } from "../support/team-of-roles";

let server: TestServer;
/** The team's owner, a member and a viewer of it, and a user of no team of it (teamOfRoles). */
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let applicationId: string;
const instances: string[] = [];

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  ({ teamId, owner, member, viewer, outsider } = await teamOfRoles(server, "Delivery"));
  applicationId = await createApplication(server, owner, teamId);
  for (const name of ["dev-one", "test-one", "prod-one"]) {
    const created = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name, applicationId },
    });
    instances.push(created.body.id);
  }
});
afterAll(() => server?.close());

const names = (pipeline: { stages: { name: string }[] }) => pipeline.stages.map((s) => s.name);

describe("pipelines and stages", () => {
  let pipelineId: string;
  const stage: Record<string, string> = {};

  it("an owner creates a pipeline and links stages after their source", async () => {
    const created = await server.request("POST", "/api/v1/pipelines", {
      token: owner.token,
      body: { applicationId, name: "  Release  " },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), name: "Release", stages: [] });
    pipelineId = created.body.id;

    const add = (body: Record<string, unknown>) =>
      server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
        token: owner.token,
        body,
      });
    const dev = await add({ name: "Development", instanceId: instances[0] });
    expect(dev.status, dev.text).toBe(200);
    expect(dev.body).toMatchObject({
      name: "Development",
      action: "create_snapshot",
      deployToDevices: false,
      instances: [{ id: instances[0], name: "dev-one" }],
    });
    expect(dev.body.NextStageId).toBeUndefined();
    stage.dev = dev.body.id;

    const noSource = await add({ name: "Loose", instanceId: instances[1] });
    expect(noSource.status).toBe(400);
    expect(noSource.body.code).toBe("invalid_input");

    const prod = await add({ name: "Production", instanceId: instances[2], source: stage.dev });
    stage.prod = prod.body.id;
    // Linked in between: Development → Test → Production.
    const test = await add({
      name: "Test",
      instanceId: instances[1],
      source: stage.dev,
      action: "use_latest_snapshot",
    });
    expect(test.status, test.text).toBe(200);
    stage.test = test.body.id;
    expect(test.body.NextStageId).toBe(stage.prod);

    const list = await server.request("GET", `/api/v1/applications/${applicationId}/pipelines`, {
      token: viewer.token,
    });
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(1);
    expect(names(list.body.pipelines[0])).toEqual(["Development", "Test", "Production"]);
    const [first, second, third] = list.body.pipelines[0].stages;
    expect(first.NextStageId).toBe(second.id);
    expect(second.NextStageId).toBe(third.id);
    expect(third.NextStageId).toBeUndefined();

    const team = await server.request("GET", `/api/v1/teams/${teamId}/pipelines`, {
      token: member.token,
    });
    expect(team.body.pipelines[0].application).toEqual({
      id: applicationId,
      name: expect.any(String),
    });
  });

  it("refuses a stage whose instance is not the application's, or a device action", async () => {
    const elsewhere = await createApplication(server, owner, teamId);
    const other = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: "elsewhere-one", applicationId: elsewhere },
    });
    const wrong = await server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
      token: owner.token,
      body: { name: "X", instanceId: other.body.id, source: stage.prod },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([{ path: "instanceId", message: expect.any(String) }]);
    const device = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.test}`,
      {
        token: owner.token,
        body: { action: "use_active_snapshot" },
      },
    );
    expect(device.status).toBe(400);
    expect(device.body.code).toBe("invalid_input");
  });

  it("renames from pipeline.name, edits and deletes stages, joining the list again", async () => {
    const renamed = await server.request("PUT", `/api/v1/pipelines/${pipelineId}`, {
      token: owner.token,
      body: { pipeline: { name: "Ship it" } },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe("Ship it");

    const edited = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.test}`,
      {
        token: owner.token,
        body: { name: "Staging", action: "prompt", deployToDevices: true },
      },
    );
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ name: "Staging", action: "prompt", deployToDevices: true });

    const got = await server.request(
      "GET",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.test}`,
      {
        token: viewer.token,
      },
    );
    expect(got.body).toEqual(edited.body);

    const deleted = await server.request(
      "DELETE",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.test}`,
      { token: owner.token },
    );
    expect(deleted.body).toEqual({ status: "okay" });
    const after = await server.request("GET", `/api/v1/pipelines/${pipelineId}`, {
      token: viewer.token,
    });
    expect(names(after.body)).toEqual(["Development", "Production"]);
    expect(after.body.stages[0].NextStageId).toBe(stage.prod);
  });

  it("lets members and viewers read, not write; another team gets 404 everywhere", async () => {
    for (const who of [member, viewer]) {
      const rename = await server.request("PUT", `/api/v1/pipelines/${pipelineId}`, {
        token: who.token,
        body: { pipeline: { name: "nope" } },
      });
      expect(rename.status).toBe(403);
      const add = await server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
        token: who.token,
        body: { name: "nope", instanceId: instances[1], source: stage.prod },
      });
      expect(add.status).toBe(403);
    }
    for (const [method, path, body] of [
      ["GET", `/api/v1/pipelines/${pipelineId}`, undefined],
      ["PUT", `/api/v1/pipelines/${pipelineId}`, { pipeline: { name: "x" } }],
      ["DELETE", `/api/v1/pipelines/${pipelineId}`, undefined],
      ["GET", `/api/v1/pipelines/${pipelineId}/stages/${stage.dev}`, undefined],
      ["DELETE", `/api/v1/pipelines/${pipelineId}/stages/${stage.dev}`, undefined],
      ["GET", `/api/v1/applications/${applicationId}/pipelines`, undefined],
      ["GET", `/api/v1/teams/${teamId}/pipelines`, undefined],
    ] as const) {
      const reply = await server.request(method, path, { token: outsider.token, body });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
  });

  it("audits every change, stage edits and deletions too", async () => {
    const events = (await auditEntries(server.db))
      .filter((e) => e.team_id === teamId)
      .map((e) => e.event);
    for (const event of [
      "application.pipeline.created",
      "application.pipeline.updated",
      "application.pipeline.stage-added",
      "application.pipeline.stage-updated",
      "application.pipeline.stage-deleted",
      "project.assigned-to-pipeline-stage",
    ]) {
      expect(events, event).toContain(event);
    }
    const deleted = await server.request("DELETE", `/api/v1/pipelines/${pipelineId}`, {
      token: owner.token,
    });
    expect(deleted.body).toEqual({ status: "okay" });
    const gone = await server.request("GET", `/api/v1/pipelines/${pipelineId}`, {
      token: owner.token,
    });
    expect(gone.status).toBe(404);
    const last = await auditEntries(server.db, { event: "application.pipeline.deleted" });
    expect(last.at(-1)?.body.pipeline).toEqual({ id: pipelineId, name: "Ship it" });
  });
});

describe("FlowFuse's answers: another team's application, a target used twice, the last stage", () => {
  let pipelineId: string;
  const stage: Record<string, string> = {};
  const counts = async () => ({
    pipelines: (await server.db.selectFrom("pipelines").select("id").execute()).length,
    stages: (await server.db.selectFrom("pipeline_stages").select("id").execute()).length,
    operations: (await server.db.selectFrom("operations").select("id").execute()).length,
    snapshots: (await server.db.selectFrom("snapshots").select("id").execute()).length,
    audit: (await auditEntries(server.db)).length,
  });

  beforeAll(async () => {
    const created = await server.request("POST", "/api/v1/pipelines", {
      token: owner.token,
      body: { applicationId, name: "Checks" },
    });
    pipelineId = created.body.id;
    const add = (body: Record<string, unknown>) =>
      server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
        token: owner.token,
        body,
      });
    stage.first = (await add({ name: "First", instanceId: instances[0] })).body.id;
    stage.last = (
      await add({ name: "Last", instanceId: instances[1], source: stage.first, action: "none" })
    ).body.id;
  });

  it("another team's owner naming this team's application gets 404, and nothing is made", async () => {
    const elsewhere = await server.request("POST", "/api/v1/teams", {
      token: outsider.token,
      body: { name: "Elsewhere" },
    });
    expect(elsewhere.status).toBe(200);
    const before = await counts();
    for (const id of [applicationId, "00000000-0000-4000-8000-000000000000"]) {
      const reply = await server.request("POST", "/api/v1/pipelines", {
        token: outsider.token,
        body: { applicationId: id, name: "Mine now" },
      });
      expect(reply.status, reply.text).toBe(404);
      expect(reply.body.code).toBe("not_found");
    }
    expect(await counts()).toEqual(before);
  });

  it("refuses an instance already in the pipeline as another stage, and changes nothing", async () => {
    const before = await counts();
    const again = await server.request("POST", `/api/v1/pipelines/${pipelineId}/stages`, {
      token: owner.token,
      body: { name: "Again", instanceId: instances[0], source: stage.last },
    });
    expect(again.status, again.text).toBe(400);
    expect(again.body.code).toBe("invalid_input");
    expect(again.body.errors).toEqual([{ path: "instanceId", message: expect.any(String) }]);
    // Changing a stage to another stage's instance is refused too; keeping its own is not.
    const swap = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.last}`,
      { token: owner.token, body: { instanceId: instances[0] } },
    );
    expect(swap.status, swap.text).toBe(400);
    expect(swap.body.code).toBe("invalid_input");
    expect(await counts()).toEqual(before);
    const pipeline = await server.request("GET", `/api/v1/pipelines/${pipelineId}`, {
      token: owner.token,
    });
    expect(
      pipeline.body.stages.map((s: { instances: { id: string }[] }) => s.instances[0]!.id),
    ).toEqual([instances[0], instances[1]]);
    const same = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.last}`,
      { token: owner.token, body: { instanceId: instances[1], name: "Last" } },
    );
    expect(same.status, same.text).toBe(200);
  });

  it("refuses a deploy from the last stage, making no snapshot, operation or entry", async () => {
    const before = await counts();
    const reply = await server.request(
      "PUT",
      `/api/v1/pipelines/${pipelineId}/stages/${stage.last}/deploy`,
      { token: owner.token, body: {} },
    );
    expect(reply.status, reply.text).toBe(404);
    expect(reply.body).toMatchObject({ code: "not_found", error: "Target stage not found" });
    expect(await counts()).toEqual(before);
  });

  it("logs the pipeline's events in the team's log, stage-added naming its stage", async () => {
    const log = await server.request(
      "GET",
      `/api/v1/teams/${teamId}/audit-log?scope=team&limit=100`,
      { token: owner.token },
    );
    expect(log.status, log.text).toBe(200);
    const ours = log.body.log.filter(
      (e: { body: { pipeline?: { id: string } } }) => e.body.pipeline?.id === pipelineId,
    );
    expect(ours.map((e: { event: string }) => e.event).sort()).toEqual([
      "application.pipeline.created",
      "application.pipeline.stage-added",
      "application.pipeline.stage-added",
      "application.pipeline.stage-updated",
    ]);
    for (const entry of ours) {
      expect(entry.scope).toEqual({ type: "team", id: teamId });
      expect(entry.body).toMatchObject({
        team: { id: teamId, name: "Delivery" },
        application: { id: applicationId, name: expect.any(String) },
        pipeline: { id: pipelineId, name: "Checks" },
      });
    }
    const added = ours.filter(
      (e: { event: string }) => e.event === "application.pipeline.stage-added",
    );
    expect(added.map((e: { body: { pipelineStage: unknown } }) => e.body.pipelineStage)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: stage.first, name: "First" }),
        expect.objectContaining({ id: stage.last, name: "Last" }),
      ]),
    );
  });
});
