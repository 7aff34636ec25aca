// The device group pages over plain HTTP, as a browser without script uses them: the team's groups
// (each with its application, member count and target), creating one, and a group's page — its
// members added and removed, its target snapshot set and cleared, its variables, its name, and
// deleting it (asked first on a page of its own). What is done is the API's own procedure: owners
// act, members read, viewers are told their role does not show groups; another team's group is a
// 404; the API's errors are shown on the page with their status.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TestServer } from "../support/harness";
import { asPerson, pagesTeam, type SignedInPerson, signedInPerson } from "../support/signed-in";

let server: TestServer;
type Person = SignedInPerson;
let owner: Person, member: Person, viewer: Person, outsider: Person;
let teamId: string;
let applicationId: string;
let snapshotId: string;
let devices: string[];
let otherGroupPath: string;

const person = (teams: { id: string; role: number }[] = []) => signedInPerson(server, teams);
const api = (who: Person, method: string, path: string, body?: unknown) =>
  asPerson(server, who, method, path, body);

beforeAll(async () => {
  let instanceId: string;
  ({ server, owner, member, viewer, teamId, applicationId, instanceId } = await pagesTeam(
    "Fleet",
    "grp-line",
  ));
  const snapshot = await api(owner, "POST", `/api/v1/projects/${instanceId}/snapshots`, {
    name: "v1 <release>",
  });
  expect(snapshot.status, snapshot.text).toBe(200);
  snapshotId = snapshot.body.id;
  devices = [];
  for (const name of ["press-1", "press-2"]) {
    const device = await api(owner, "POST", "/api/v1/devices", {
      name,
      team: teamId,
      application: applicationId,
    });
    expect(device.status, device.text).toBe(200);
    devices.push(device.body.id);
  }
  // Another team, with a group of the same name, that the outsider owns.
  outsider = await person();
  const otherTeam = (await api(outsider, "POST", "/api/v1/teams", { name: "Other" })).body.id;
  const otherApp = (
    await api(outsider, "POST", "/api/v1/applications", { name: "Line 1", teamId: otherTeam })
  ).body.id;
  const otherGroup = await api(outsider, "POST", `/api/v1/applications/${otherApp}/device-groups`, {
    name: "Presses",
  });
  otherGroupPath = `/teams/${otherTeam}/device-groups/${otherGroup.body.id}`;
});
afterAll(() => server?.close());

const groupsPath = () => `/teams/${teamId}/device-groups`;

describe("device group pages", () => {
  let groupPath: string;

  test("an owner creates a group in an application; the list shows it with its application", async () => {
    const empty = await server.page("GET", groupsPath(), { sid: owner.sid });
    expect(empty.status).toBe(200);
    expect(empty.html).toContain("No device groups yet");
    expect(empty.html).toContain('aria-current="page">Groups</a>');

    const blank = await server.page("POST", groupsPath(), {
      sid: owner.sid,
      form: { applicationId, name: " ", description: "" },
    });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('aria-invalid="true"');

    const foreign = await server.page("POST", groupsPath(), {
      sid: owner.sid,
      form: { applicationId: "nope", name: "Presses" },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain("Not an application of this team");

    const created = await server.page("POST", groupsPath(), {
      sid: owner.sid,
      form: { applicationId, name: "Presses", description: "All <presses>" },
    });
    expect(created.status, created.html).toBe(303);
    expect(created.location).toMatch(/\/device-groups\/\w+\?done=created$/);
    groupPath = created.location!.replace(/\?.*$/, "");
    const page = await server.page("GET", created.location!, { sid: owner.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("The device group is created");
    expect(page.html).toContain("All &lt;presses&gt;");

    const list = await server.page("GET", groupsPath(), { sid: owner.sid });
    expect(list.html).toContain(`href="${groupPath}"`);
    expect(list.html).toContain("Line 1");
  });

  test("members are added and removed, the target set and cleared, variables saved", async () => {
    const add = await server.page("POST", `${groupPath}/add`, {
      sid: owner.sid,
      form: { deviceId: devices },
    });
    expect(add.location).toBe(`${groupPath}?done=added`);
    let page = await server.page("GET", groupPath, { sid: owner.sid });
    expect(page.html).toContain("press-1");
    expect(page.html).toContain(`action="${groupPath}/remove"`);

    const remove = await server.page("POST", `${groupPath}/remove`, {
      sid: owner.sid,
      form: { deviceId: devices[1]! },
    });
    expect(remove.location).toBe(`${groupPath}?done=removed`);
    const group = await api(
      owner,
      "GET",
      `/api/v1/applications/${applicationId}/device-groups/${groupPath.split("/").at(-1)}`,
    );
    expect(group.body.devices.map((d: { id: string }) => d.id)).toEqual([devices[0]]);

    const badAdd = await server.page("POST", `${groupPath}/add`, {
      sid: owner.sid,
      form: { deviceId: "x".repeat(10) },
    });
    expect(badAdd.status).toBe(400);
    expect(badAdd.html).toContain("not a device of the application");

    const target = await server.page("POST", `${groupPath}/target`, {
      sid: owner.sid,
      form: { targetSnapshotId: snapshotId },
    });
    expect(target.location).toBe(`${groupPath}?done=target`);
    page = await server.page("GET", groupPath, { sid: owner.sid });
    expect(page.html).toContain("Every member runs <strong>v1 &lt;release&gt;</strong>");
    const list = await server.page("GET", groupsPath(), { sid: owner.sid });
    expect(list.html).toContain("v1 &lt;release&gt;");

    const badTarget = await server.page("POST", `${groupPath}/target`, {
      sid: owner.sid,
      form: { targetSnapshotId: "nosuchsnapshot" },
    });
    expect(badTarget.status).toBe(400);
    expect(badTarget.html).toContain("No such snapshot in the group");

    const cleared = await server.page("POST", `${groupPath}/target`, {
      sid: owner.sid,
      form: { targetSnapshotId: "" },
    });
    expect(cleared.location).toBe(`${groupPath}?done=cleared`);

    const env = await server.page("POST", `${groupPath}/env`, {
      sid: owner.sid,
      form: {
        rows: "2",
        "name-0": "LINE",
        "value-0": "one",
        "name-1": "SECRET",
        "value-1": "s3",
        "hidden-1": "yes",
      },
    });
    expect(env.location).toBe(`${groupPath}?done=env`);
    page = await server.page("GET", groupPath, { sid: owner.sid });
    expect(page.html).toContain('value="LINE"');
    expect(page.html).toContain('value="one"');
    expect(page.html).not.toContain("s3");
    const badEnv = await server.page("POST", `${groupPath}/env`, {
      sid: owner.sid,
      form: { rows: "1", "name-0": "bad name!", "value-0": "x" },
    });
    expect(badEnv.status).toBe(400);
    expect(badEnv.html).toContain('value="bad name!"');

    const renamed = await server.page("POST", `${groupPath}/edit`, {
      sid: owner.sid,
      form: { name: "Presses A", description: "" },
    });
    expect(renamed.location).toBe(`${groupPath}?done=edited`);
  });

  test("members read a group, viewers are told their role does not show groups; neither may act", async () => {
    const asMember = await server.page("GET", groupPath, { sid: member.sid });
    expect(asMember.status).toBe(200);
    expect(asMember.html).toContain("Presses A");
    expect(asMember.html).not.toContain(`action="${groupPath}/remove"`);
    expect(asMember.html).not.toContain(`action="${groupPath}/env"`);
    expect(asMember.html).toContain("LINE");
    const memberList = await server.page("GET", groupsPath(), { sid: member.sid });
    expect(memberList.html).toContain("Presses A");
    expect(memberList.html).not.toContain("Create a device group");
    const refused = await server.page("POST", `${groupPath}/edit`, {
      sid: member.sid,
      form: { name: "Mine" },
    });
    expect(refused.status).toBe(403);

    const viewerList = await server.page("GET", groupsPath(), { sid: viewer.sid });
    expect(viewerList.status).toBe(200);
    expect(viewerList.html).toContain("does not show its device groups");
    expect((await server.page("GET", groupPath, { sid: viewer.sid })).status).toBe(403);
    expect(
      (
        await server.page("POST", `${groupPath}/delete`, {
          sid: viewer.sid,
          form: { confirmed: "yes" },
        })
      ).status,
    ).toBe(403);
  });

  test("another team's group is a 404, under either team's URL", async () => {
    expect((await server.page("GET", otherGroupPath, { sid: owner.sid })).status).toBe(404);
    expect((await server.page("GET", groupPath, { sid: outsider.sid })).status).toBe(404);
    expect((await server.page("GET", groupsPath(), { sid: outsider.sid })).status).toBe(404);
    const underOurs = otherGroupPath.replace(/\/teams\/\w+/, `/teams/${teamId}`);
    expect((await server.page("GET", underOurs, { sid: owner.sid })).status).toBe(404);
    expect(
      (
        await server.page("POST", `${underOurs}/delete`, {
          sid: owner.sid,
          form: { confirmed: "yes" },
        })
      ).status,
    ).toBe(404);
  });

  test("deleting asks first without script, then deletes", async () => {
    const asked = await server.page("POST", `${groupPath}/delete`, { sid: owner.sid });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("Delete the device group “<strong>Presses A</strong>”");
    const deleted = await server.page("POST", `${groupPath}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(deleted.location).toBe(`${groupsPath()}?done=deleted`);
    expect((await server.page("GET", groupPath, { sid: owner.sid })).status).toBe(404);
  });
});
