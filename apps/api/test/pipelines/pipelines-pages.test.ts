// The pipeline pages over plain HTTP, as a browser without script uses them: the team's pipelines
// with their stages, creating one, a pipeline's page — renaming, stages added, edited and deleted,
// deleting it (asked first) — and a deploy started from the page: the redirect names its operation
// and the page shows it under way (with a Refresh link) or its outcome, succeeded or failed with
// the reason. Owners act, members and viewers read; another team's pipeline is a 404; the API's
// errors are shown on the page with their status. Instances run on the in-memory driver.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TestServer } from "../support/harness";
import { asPerson, pagesTeam, type SignedInPerson, signedInPerson } from "../support/signed-in";

let server: TestServer;
type Person = SignedInPerson;
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let applicationId: string;
let instanceId: string;
let groupId: string;
let otherPipelinePath: string;

const person = (teams: { id: string; role: number }[] = []) => signedInPerson(server, teams);
const api = (who: Person, method: string, path: string, body?: unknown) =>
  asPerson(server, who, method, path, body);

beforeAll(async () => {
  ({ server, owner, member, viewer, teamId, applicationId, instanceId } = await pagesTeam(
    "Delivery",
    "pl-dev",
  ));
  const group = await api(owner, "POST", `/api/v1/applications/${applicationId}/device-groups`, {
    name: "fleet <a>",
  });
  groupId = group.body.id;
  outsider = await person();
  const otherTeam = (await api(outsider, "POST", "/api/v1/teams", { name: "Other" })).body.id;
  const otherApp = (
    await api(outsider, "POST", "/api/v1/applications", { name: "Line 1", teamId: otherTeam })
  ).body.id;
  const other = await api(outsider, "POST", "/api/v1/pipelines", {
    applicationId: otherApp,
    name: "Release",
  });
  otherPipelinePath = `/teams/${otherTeam}/pipelines/${other.body.id}`;
});
afterAll(() => server?.close());

const pipelinesPath = () => `/teams/${teamId}/pipelines`;

async function awaitOperation(id: string) {
  for (let tries = 0; tries < 200; tries++) {
    const reply = await api(owner, "GET", `/api/v1/operations/${id}`);
    if (reply.body.status !== "pending") return reply.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`operation ${id} still pending`);
}

describe("pipeline pages", () => {
  let path: string;
  let stages: { id: string; name: string }[];

  test("an owner creates a pipeline; the list shows it with its application", async () => {
    const empty = await server.page("GET", pipelinesPath(), { sid: owner.sid });
    expect(empty.status).toBe(200);
    expect(empty.html).toContain("No pipelines yet");
    expect(empty.html).toContain('aria-current="page">Pipelines</a>');

    const blank = await server.page("POST", pipelinesPath(), {
      sid: owner.sid,
      form: { applicationId, name: "" },
    });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('aria-invalid="true"');
    const foreign = await server.page("POST", pipelinesPath(), {
      sid: owner.sid,
      form: { applicationId: "nope", name: "Release" },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain("Not an application of this team");

    const created = await server.page("POST", pipelinesPath(), {
      sid: owner.sid,
      form: { applicationId, name: "Release <1>" },
    });
    expect(created.status, created.html).toBe(303);
    path = created.location!.replace(/\?.*$/, "");
    const page = await server.page("GET", created.location!, { sid: owner.sid });
    expect(page.html).toContain("The pipeline is created");
    expect(page.html).toContain("Pipeline Release &lt;1&gt;");
    const list = await server.page("GET", pipelinesPath(), { sid: owner.sid });
    expect(list.html).toContain(`href="${path}"`);
    expect(list.html).toContain("Line 1");
  });

  test("stages are added in order, edited, and the API's refusals shown", async () => {
    const dev = await server.page("POST", `${path}/stages`, {
      sid: owner.sid,
      form: { name: "dev", target: `instance:${instanceId}`, action: "create_snapshot" },
    });
    expect(dev.location).toBe(`${path}?done=added`);
    const groupFirst = await server.page("POST", `${path}/stages`, {
      sid: owner.sid,
      form: { name: "again", target: `instance:${instanceId}` },
    });
    expect(groupFirst.status).toBe(400);
    expect(groupFirst.html).toContain('value="again"');
    const fleet = await server.page("POST", `${path}/stages`, {
      sid: owner.sid,
      form: { name: "fleet", target: `group:${groupId}` },
    });
    expect(fleet.location).toBe(`${path}?done=added`);
    const pipeline = await api(owner, "GET", `/api/v1/pipelines/${path.split("/").at(-1)}`);
    stages = pipeline.body.stages;
    expect(stages.map((stage) => stage.name)).toEqual(["dev", "fleet"]);

    const page = await server.page("GET", path, { sid: owner.sid });
    expect(page.html).toContain("Instance <strong>pl-dev</strong>");
    expect(page.html).toContain("Device group <strong>fleet &lt;a&gt;</strong>");
    expect(page.html).toContain("Deploy to fleet");

    const edited = await server.page("POST", `${path}/stages/${stages[0]!.id}/edit`, {
      sid: owner.sid,
      form: { name: "development", target: `instance:${instanceId}`, action: "create_snapshot" },
    });
    expect(edited.location).toBe(`${path}?done=edited`);
    const badAction = await server.page("POST", `${path}/stages/${stages[1]!.id}/edit`, {
      sid: owner.sid,
      form: { name: "fleet", target: `group:${groupId}`, action: "use_active_snapshot" },
    });
    expect(badAction.status).toBe(400);
    expect(badAction.html).toContain('aria-invalid="true"');

    const renamed = await server.page("POST", `${path}/rename`, {
      sid: owner.sid,
      form: { name: "Release" },
    });
    expect(renamed.location).toBe(`${path}?done=renamed`);
  });

  test("a deploy started from the page: its operation is named, then its outcome shown", async () => {
    const last = await server.page("POST", `${path}/stages/${stages[1]!.id}/deploy`, {
      sid: owner.sid,
    });
    expect(last.status).toBe(404);
    expect(last.html).toContain("Target stage not found");

    const started = await server.page("POST", `${path}/stages/${stages[0]!.id}/deploy`, {
      sid: owner.sid,
    });
    expect(started.status, started.html).toBe(303);
    const match = /\?operation=(\w+)#deploy$/.exec(started.location!);
    expect(match, started.location!).not.toBeNull();
    const operationId = match![1]!;
    const first = await server.page("GET", started.location!.replace(/#.*$/, ""), {
      sid: owner.sid,
    });
    expect(first.html).toContain("Deploy from development to fleet");
    expect(first.html).toMatch(/Under way|Succeeded/);
    if (first.html.includes("Under way")) expect(first.html).toContain(">Refresh</a>");

    expect((await awaitOperation(operationId)).status).toBe("succeeded");
    const done = await server.page("GET", `${path}?operation=${operationId}`, { sid: owner.sid });
    expect(done.html).toContain("Succeeded");
    expect(done.html).not.toContain(">Refresh</a>");
    const group = await api(
      owner,
      "GET",
      `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
    );
    expect(done.html).toContain(`Snapshot ${group.body.targetSnapshot.name}`);
    // Members read it too; another team's operation is not shown here.
    const asMember = await server.page("GET", `${path}?operation=${operationId}`, {
      sid: member.sid,
    });
    expect(asMember.html).toContain("Succeeded");
    const asOutsider = await server.page("GET", `${otherPipelinePath}?operation=${operationId}`, {
      sid: outsider.sid,
    });
    expect(asOutsider.status).toBe(200);
    expect(asOutsider.html).not.toContain("Succeeded");
  });

  test("a failed deploy shows the reason", async () => {
    const id = `op${Math.random().toString(36).slice(2, 10)}`;
    await server.db
      .insertInto("operations")
      .values({
        id,
        team_id: teamId,
        kind: "pipeline.deploy",
        subject: JSON.stringify({
          pipeline: { id: path.split("/").at(-1), name: "Release" },
          sourceStage: { id: stages[0]!.id, name: "development" },
          targetStage: { id: stages[1]!.id, name: "fleet" },
        }),
        user_id: owner.id,
        status: "failed",
        error_code: "deploy_failed",
        error_message: "Node-RED did not <start>",
        finished_at: new Date(),
      })
      .execute();
    const page = await server.page("GET", `${path}?operation=${id}`, { sid: owner.sid });
    expect(page.html).toContain("Failed");
    expect(page.html).toContain("Node-RED did not &lt;start&gt;");
    expect(page.html).toContain("<code>deploy_failed</code>");
  });

  test("members and viewers read the pipelines; neither may act", async () => {
    for (const who of [member, viewer]) {
      const list = await server.page("GET", pipelinesPath(), { sid: who.sid });
      expect(list.status).toBe(200);
      expect(list.html).toContain("Release");
      expect(list.html).not.toContain("Create a pipeline");
      const page = await server.page("GET", path, { sid: who.sid });
      expect(page.status).toBe(200);
      expect(page.html).toContain("development");
      expect(page.html).not.toContain("Deploy to fleet");
      expect(page.html).not.toContain(`action="${path}/stages"`);
      const refused = await server.page("POST", `${path}/stages/${stages[0]!.id}/deploy`, {
        sid: who.sid,
      });
      expect(refused.status).toBe(403);
      const rename = await server.page("POST", `${path}/rename`, {
        sid: who.sid,
        form: { name: "Mine" },
      });
      expect(rename.status).toBe(403);
    }
  });

  test("another team's pipeline is a 404, under either team's URL", async () => {
    expect((await server.page("GET", otherPipelinePath, { sid: owner.sid })).status).toBe(404);
    expect((await server.page("GET", path, { sid: outsider.sid })).status).toBe(404);
    expect((await server.page("GET", pipelinesPath(), { sid: outsider.sid })).status).toBe(404);
    const underOurs = otherPipelinePath.replace(/\/teams\/\w+/, `/teams/${teamId}`);
    expect((await server.page("GET", underOurs, { sid: owner.sid })).status).toBe(404);
    const deleted = await server.page("POST", `${underOurs}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(deleted.status).toBe(404);
  });

  test("deleting a stage and the pipeline asks first without script", async () => {
    const asked = await server.page("POST", `${path}/stages/${stages[1]!.id}/delete`, {
      sid: owner.sid,
    });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("Delete the stage “fleet”");
    const stageGone = await server.page("POST", `${path}/stages/${stages[1]!.id}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(stageGone.location).toBe(`${path}?done=stage-deleted`);
    const askedPipeline = await server.page("POST", `${path}/delete`, { sid: owner.sid });
    expect(askedPipeline.html).toContain("Delete the pipeline “Release”");
    const gone = await server.page("POST", `${path}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(gone.location).toBe(`${pipelinesPath()}?done=deleted`);
    expect((await server.page("GET", path, { sid: owner.sid })).status).toBe(404);
  });
});
