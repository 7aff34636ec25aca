// The team's device pages over plain HTTP, as a browser without script uses them: the devices
// list (filters, bulk moves and deletes where one bad device fails only itself), registering a
// device (its one-time code shown once), the provisioning tokens, and a device's page (variables,
// developer mode, audit log, deletion). What each form does is the API's own procedure; what is
// checked is that a page offers only what the caller's role allows, that the API refuses the rest
// whatever is posted, and that another team's devices are 404.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PageReply, startServer, type TestServer } from "../support/harness";
import { createDeviceGroup } from "../support/team-fixtures";

let server: TestServer;
type Person = { id: string; sid: string };
let owner: Person;
let member: Person;
let viewer: Person;
let outsider: Person;
let teamId: string;
let otherTeamId: string;
let applicationId: string;
let groupId: string;
let groupDeviceId: string;
let plainDeviceId: string;
let otherDeviceId: string;

const admin = () => ({ token: server.adminToken });

async function person(team?: { id: string; role: number }): Promise<Person> {
  const user = await server.userWithPassword();
  if (team) await addMember(server.db, { teamId: team.id, userId: user.id, role: team.role });
  return { id: user.id, sid: await server.signIn(user.username, user.password) };
}

async function device(name: string, team: string, application?: string) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: server.adminToken,
    body: { name, team, ...(application && { application }) },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

const formActions = (page: PageReply) =>
  [...page.html.matchAll(/<form [^>]*?action="([^"]+)"/g)].map((match) => match[1]!);

beforeAll(async () => {
  server = await startServer({
    instances: "in-memory",
    rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
  });
  const team = await server.request("POST", "/api/v1/teams", { body: { name: "Plant" } });
  teamId = team.body.id;
  const other = await server.request("POST", "/api/v1/teams", { body: { name: "Elsewhere" } });
  otherTeamId = other.body.id;
  owner = await person({ id: teamId, role: Role.owner });
  member = await person({ id: teamId, role: Role.member });
  viewer = await person({ id: teamId, role: Role.viewer });
  outsider = await person({ id: otherTeamId, role: Role.owner });
  ({
    applicationId,
    groupId,
    deviceId: groupDeviceId,
  } = await createDeviceGroup(server, admin(), teamId));
  const joined = await server.request(
    "PATCH",
    `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
    { body: { add: [groupDeviceId] } },
  );
  expect(joined.status, joined.text).toBe(200);
  plainDeviceId = await device("press <7>", teamId);
  otherDeviceId = await device("elsewhere-1", otherTeamId);
});
afterAll(() => server?.close());

describe("the team's devices list", () => {
  test("an owner sees every device with its state and owner, and the forms of owners", async () => {
    const page = await server.page("GET", `/teams/${teamId}/devices`, { sid: owner.sid });
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain(
      `<a href="/teams/${teamId}/devices/${plainDeviceId}">press &lt;7&gt;</a>`,
    );
    expect(page.html).toContain(`/teams/${teamId}/devices/${groupDeviceId}`);
    expect(page.html).toMatch(/Application App[^<]* · group group/);
    expect(page.html).toContain("Unassigned");
    expect(page.html).not.toContain("elsewhere-1");
    expect(formActions(page)).toContain(`/teams/${teamId}/devices/bulk`);
    expect(page.html).toContain(`href="/teams/${teamId}/devices/new"`);
    expect(page.html).toContain(`href="/teams/${teamId}/devices/provisioning"`);
    expect(page.html).toContain('aria-current="page">Devices<');
  });

  test("filters by application and by device group", async () => {
    const byApplication = await server.page(
      "GET",
      `/teams/${teamId}/devices?application=${applicationId}`,
      { sid: owner.sid },
    );
    expect(byApplication.html).toContain(groupDeviceId);
    expect(byApplication.html).not.toContain(plainDeviceId);
    const byGroup = await server.page("GET", `/teams/${teamId}/devices?group=${groupId}`, {
      sid: member.sid,
    });
    expect(byGroup.status).toBe(200);
    expect(byGroup.html).toContain(groupDeviceId);
    expect(byGroup.html).not.toContain(plainDeviceId);
    const unknown = await server.page("GET", `/teams/${teamId}/devices?group=nosuchgroup`, {
      sid: owner.sid,
    });
    expect(unknown.status).toBe(404);
  });

  test("members and viewers see the devices but no bulk form; another team's member gets 404", async () => {
    for (const someone of [member, viewer]) {
      const page = await server.page("GET", `/teams/${teamId}/devices`, { sid: someone.sid });
      expect(page.status).toBe(200);
      expect(page.html).toContain("press &lt;7&gt;");
      expect(formActions(page)).toEqual(["/sign-out", `/teams/${teamId}/devices`]);
      expect(page.html).not.toContain("/devices/new");
    }
    const viewerPage = await server.page("GET", `/teams/${teamId}/devices`, { sid: viewer.sid });
    expect(viewerPage.html).not.toContain('id="filter-group"');
    const refused = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: member.sid,
      form: { devices: plainDeviceId, action: "delete", confirmed: "yes" },
    });
    expect(refused.status).toBe(403);
    const stranger = await server.page("GET", `/teams/${teamId}/devices`, { sid: outsider.sid });
    expect(stranger.status).toBe(404);
  });

  test("a bulk move with one bad device moves the others and says which failed", async () => {
    const moving = await device("mover", teamId);
    const reply = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: owner.sid,
      form: {
        devices: [moving, otherDeviceId],
        action: "move",
        target: `application:${applicationId}`,
      },
    });
    expect(reply.status, reply.html).toBe(200);
    expect(reply.html).toMatch(/<strong>mover<\/strong>[^]*?moved/);
    expect(reply.html).toMatch(
      /An unknown device[^]*?failed[^<]*<\/span> Every device must be one of the team&#39;s/,
    );
    const moved = await server.request("GET", `/api/v1/devices/${moving}`);
    expect(moved.body.application.id).toBe(applicationId);
    const untouched = await server.request("GET", `/api/v1/devices/${otherDeviceId}`);
    expect(untouched.body.application).toBeNull();

    const all = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: owner.sid,
      form: { devices: [moving], action: "move", target: "none" },
    });
    expect(all.location).toBe(`/teams/${teamId}/devices?done=moved`);
    const none = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: owner.sid,
      form: { action: "move", target: "none" },
    });
    expect(none.status).toBe(400);
    expect(none.html).toContain("Check the devices to move or delete first.");
  });

  test("a bulk delete asks first without script, then deletes", async () => {
    const doomed = await device("doomed", teamId);
    const asked = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: owner.sid,
      form: { devices: doomed, action: "delete" },
    });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain("Delete these devices");
    expect(asked.html).toContain(`name="devices" value="${doomed}"`);
    const done = await server.page("POST", `/teams/${teamId}/devices/bulk`, {
      sid: owner.sid,
      form: { devices: doomed, action: "delete", confirmed: "yes" },
    });
    expect(done.location).toBe(`/teams/${teamId}/devices?done=deleted`);
    expect((await server.request("GET", `/api/v1/devices/${doomed}`)).status).toBe(404);
  });
});

describe("registering a device", () => {
  test("an owner creates one; its one-time code and command line are shown once", async () => {
    const form = await server.page("GET", `/teams/${teamId}/devices/new`, { sid: owner.sid });
    expect(form.status).toBe(200);
    expect(formActions(form)).toContain(`/teams/${teamId}/devices/new`);
    const created = await server.page("POST", `/teams/${teamId}/devices/new`, {
      sid: owner.sid,
      form: { name: "line-9", type: "Pi", owner: `application:${applicationId}` },
    });
    expect(created.status, created.html).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const command = /flowfuse-device-agent --otc ([a-z-]+) --ff-url ([^"]+)"/.exec(created.html);
    expect(command?.[2]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(created.html).toContain("token: fpd_");
    const list = await server.request("GET", `/api/v1/teams/${teamId}/devices?query=line-9`);
    const id = list.body.devices[0].id as string;
    expect(list.body.devices[0].application.id).toBe(applicationId);
    const again = await server.page("GET", `/teams/${teamId}/devices/${id}`, { sid: owner.sid });
    expect(again.html).not.toContain(command![1]);
    const reload = await server.page("GET", `/teams/${teamId}/devices/new`, { sid: owner.sid });
    expect(reload.html).not.toContain(command![1]);

    const blank = await server.page("POST", `/teams/${teamId}/devices/new`, {
      sid: owner.sid,
      form: { name: "" },
    });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('aria-invalid="true"');
  });

  test("a member sees no form and the API refuses a post; another team is 404", async () => {
    const form = await server.page("GET", `/teams/${teamId}/devices/new`, { sid: member.sid });
    expect(form.html).toContain("Only the team's owners register devices.");
    expect(formActions(form)).toEqual(["/sign-out"]);
    const refused = await server.page("POST", `/teams/${teamId}/devices/new`, {
      sid: member.sid,
      form: { name: "sneaky" },
    });
    expect(refused.status).toBe(403);
    const stranger = await server.page("GET", `/teams/${teamId}/devices/new`, {
      sid: outsider.sid,
    });
    expect(stranger.status).toBe(404);
  });
});

describe("provisioning tokens", () => {
  test("an owner creates one (its value shown once) and revokes it", async () => {
    const created = await server.page("POST", `/teams/${teamId}/devices/provisioning`, {
      sid: owner.sid,
      form: { name: "line rollout", owner: `application:${applicationId}`, expiresAt: "" },
    });
    expect(created.status, created.html).toBe(200);
    const value = /provisioningToken: (fpv_\S+)/.exec(created.html)?.[1];
    expect(value).toBeDefined();
    expect(created.html).toContain(`provisioningTeam: ${teamId}`);
    const list = await server.page("GET", `/teams/${teamId}/devices/provisioning`, {
      sid: owner.sid,
    });
    expect(list.html).toContain("line rollout");
    expect(list.html).toMatch(/Application App/);
    expect(list.html).not.toContain(value!);
    const tokenId = /provisioning\/(\w+)\/delete/.exec(list.html)![1]!;
    const asked = await server.page(
      "POST",
      `/teams/${teamId}/devices/provisioning/${tokenId}/delete`,
      { sid: owner.sid },
    );
    expect(asked.html).toContain("Revoke the provisioning token");
    const revoked = await server.page(
      "POST",
      `/teams/${teamId}/devices/provisioning/${tokenId}/delete`,
      { sid: owner.sid, form: { confirmed: "yes" } },
    );
    expect(revoked.location).toBe(`/teams/${teamId}/devices/provisioning?done=deleted`);

    const bad = await server.page("POST", `/teams/${teamId}/devices/provisioning`, {
      sid: owner.sid,
      form: { name: "no/slashes" },
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Letters, digits, spaces");
  });

  test("members and viewers are refused; another team is 404", async () => {
    for (const someone of [member, viewer]) {
      const page = await server.page("GET", `/teams/${teamId}/devices/provisioning`, {
        sid: someone.sid,
      });
      expect(page.status).toBe(403);
    }
    const stranger = await server.page("GET", `/teams/${teamId}/devices/provisioning`, {
      sid: outsider.sid,
    });
    expect(stranger.status).toBe(404);
  });
});

describe("a device's page", () => {
  test("its snapshots: listed, taken by members (the API's refusal shown), none for viewers", async () => {
    const path = `/teams/${teamId}/devices/${groupDeviceId}`;
    const shown = await server.page("GET", path, { sid: member.sid });
    expect(shown.status, shown.html).toBe(200);
    expect(shown.html).toContain("No snapshot of this device yet.");
    expect(formActions(shown)).toContain(`${path}/snapshots`);
    // A device that has reported nothing has nothing to keep: the API's 400, on the page.
    const refused = await server.page("POST", `${path}/snapshots`, {
      sid: member.sid,
      form: { name: "Before the change" },
    });
    expect(refused.status, refused.html).toBe(400);
    expect(refused.html).toContain('id="device-snapshots"');
    const asViewer = await server.page("GET", path, { sid: viewer.sid });
    expect(formActions(asViewer)).not.toContain(`${path}/snapshots`);
    const viewerPost = await server.page("POST", `${path}/snapshots`, {
      sid: viewer.sid,
      form: { name: "Not mine to take" },
    });
    expect(viewerPost.status).toBe(403);
    const otherTeam = await server.page(
      "POST",
      `/teams/${teamId}/devices/${otherDeviceId}/snapshots`,
      {
        sid: outsider.sid,
        form: { name: "x" },
      },
    );
    expect(otherTeam.status).toBe(404);
  });

  test("members change its variables and developer mode; the audit log shows them", async () => {
    const path = `/teams/${teamId}/devices/${plainDeviceId}`;
    const saved = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { rows: "1", "env-name-0": "LINE", "env-value-0": "nine", "env-hidden-0": "on" },
    });
    expect(saved.location).toBe(`${path}?done=env#device-env`);
    const settings = await server.request("GET", `/api/v1/devices/${plainDeviceId}/settings`);
    expect(settings.body.env).toEqual([{ name: "LINE", value: "", hidden: true }]);
    const bad = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { rows: "1", "env-name-0": "1 bad name", "env-value-0": "x" },
    });
    expect(bad.status).toBe(400);
    const mode = await server.page("POST", `${path}/mode`, {
      sid: member.sid,
      form: { mode: "developer" },
    });
    expect(mode.location).toBe(`${path}?done=developer#device-editor`);
    const page = await server.page("GET", path, { sid: member.sid });
    expect(page.html).toContain("Developer mode is <strong>on</strong>");
    expect(page.html).toContain("device.settings.updated");
    expect(page.html).toContain("developer-mode.enabled");
    expect(formActions(page)).not.toContain(`${path}/delete`);
    await server.page("POST", `${path}/mode`, { sid: member.sid, form: { mode: "autonomous" } });
  });

  test("viewers see no forms; another team's member gets 404; an owner deletes after confirming", async () => {
    const path = `/teams/${teamId}/devices/${plainDeviceId}`;
    const seen = await server.page("GET", path, { sid: viewer.sid });
    expect(seen.status).toBe(200);
    expect(formActions(seen)).toEqual(["/sign-out"]);
    expect(seen.html).toContain("LINE");
    const refused = await server.page("POST", `${path}/env`, {
      sid: viewer.sid,
      form: { rows: "0" },
    });
    expect(refused.status).toBe(403);
    expect((await server.page("GET", path, { sid: outsider.sid })).status).toBe(404);
    const elsewhere = `/teams/${teamId}/devices/${otherDeviceId}`;
    expect((await server.page("GET", elsewhere, { sid: outsider.sid })).status).toBe(404);
    expect(
      (
        await server.page("POST", `${elsewhere}/delete`, {
          sid: outsider.sid,
          form: { confirmed: "yes" },
        })
      ).status,
    ).toBe(404);

    const owned = await server.page("GET", path, { sid: owner.sid });
    expect(formActions(owned)).toContain(`${path}/delete`);
    const asked = await server.page("POST", `${path}/delete`, { sid: owner.sid });
    expect(asked.html).toContain("Delete the device");
    const deleted = await server.page("POST", `${path}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(deleted.location).toBe(`/teams/${teamId}/devices?done=device-deleted`);
  });
});
