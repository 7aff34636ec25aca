// A hosted instance's page over plain HTTP, as a browser without script uses it: its state and
// actions, its log, its variables, its name, its snapshots (taken, rolled back to, exported as a
// file and imported from one), the devices that follow it, and deleting it. What each role is
// offered follows the permission matrix, and the API refuses whatever is posted beyond it; another
// team's instance is 404. Instances run on the in-memory driver.
import { Role } from "@flowplane/contract";
import { addMember, auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PageReply, startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    instances: "in-memory",
    rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
  });
});
afterAll(() => server.close());

async function person() {
  const user = await server.userWithPassword();
  return { ...user, sid: await server.signIn(user.username, user.password) };
}
type Person = Awaited<ReturnType<typeof person>>;

async function stateOf(instanceId: string): Promise<string> {
  const reply = await server.request("GET", `/api/v1/projects/${instanceId}/status`);
  return reply.body.meta.state as string;
}

/** A team with an application and a running instance, its owner, a member, a viewer. */
async function teamWithInstance(teamName = "Line Ops") {
  const owner = await person();
  const team = await server.asSession(owner.sid, "POST", "/api/v1/teams", {
    body: { name: teamName },
  });
  const teamId = team.body.id as string;
  const application = await server.asSession(owner.sid, "POST", "/api/v1/applications", {
    body: { name: "Line 1", teamId },
  });
  const instanceName = `line-${Math.random().toString(36).slice(2, 8)}`;
  const instance = await server.asSession(owner.sid, "POST", "/api/v1/projects", {
    body: { name: instanceName, applicationId: application.body.id },
  });
  expect(instance.status, instance.text).toBe(200);
  const instanceId = instance.body.id as string;
  await expect.poll(() => stateOf(instanceId)).toBe("running");
  const member = await person();
  const viewer = await person();
  await addMember(server.db, { teamId, userId: member.id, role: Role.member });
  await addMember(server.db, { teamId, userId: viewer.id, role: Role.viewer });
  const path = `/teams/${teamId}/instances/${instanceId}`;
  return { owner, member, viewer, teamId, instanceId, instanceName, path };
}

/** The forms of a page: their actions. */
const formActions = (page: PageReply) =>
  [...page.html.matchAll(/<form [^>]*?action="([^"]+)"/g)].map((match) => match[1]!);

const envOf = async (instanceId: string) =>
  (await server.request("GET", `/api/v1/projects/${instanceId}`)).body.settings.env.filter(
    (variable: { name: string }) => !variable.name.startsWith("FF_"),
  );

/** Posts a multipart form (a file input), as a browser does. */
async function postMultipart(path: string, sid: string, form: FormData) {
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { cookie: `sid=${sid}`, origin: server.origin, accept: "text/html" },
    body: form,
    redirect: "manual",
  });
  return {
    status: response.status,
    location: response.headers.get("location"),
    html: await response.text(),
  };
}

describe("an instance's page", () => {
  test("the team page links each instance's name to its page; the owner sees state, editor, log and every form", async () => {
    const { owner, teamId, instanceId, instanceName, path } = await teamWithInstance();
    const team = await server.page("GET", `/teams/${teamId}`, { sid: owner.sid });
    expect(team.html).toContain(`<a href="${path}">${instanceName}</a>`);

    const page = await server.page("GET", path, { sid: owner.sid });
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain(`Instance ${instanceName}`);
    expect(page.html).toContain('<span class="state state-running">Running</span>');
    const instance = await server.request("GET", `/api/v1/projects/${instanceId}`);
    expect(page.html).toContain(`<a href="${instance.body.url}">Open editor`);
    expect(page.html).toContain("[system]</span> now running");
    expect(page.html).toContain(`data-poll="/api/v1/projects/${instanceId}/logs"`);
    expect(page.html).toContain('aria-current="page">Applications</a>');
    expect(page.html).toContain("Line 1</a>");
    expect(page.html).toContain("FF_INSTANCE_NAME");
    const actions = formActions(page);
    for (const action of [
      "actions/stop",
      "actions/restart",
      "actions/suspend",
      "settings",
      "delete",
      "env",
      "snapshots",
      "snapshots/import",
    ]) {
      expect(actions, action).toContain(`${path}/${action}`);
    }
    expect(actions).not.toContain(`${path}/actions/start`);
  });

  test("an owner stops, starts and suspends it with plain forms; each notice follows", async () => {
    const { owner, instanceId, path } = await teamWithInstance();
    const stop = await server.page("POST", `${path}/actions/stop`, { sid: owner.sid });
    expect(stop.location).toBe(`${path}?done=stopped`);
    expect(await stateOf(instanceId)).toBe("stopped");
    const stopped = await server.page("GET", stop.location!, { sid: owner.sid });
    expect(stopped.html).toContain("The instance is stopped.");
    expect(stopped.html).not.toContain("Open editor");
    expect(stopped.html).toContain("[system]</span> now stopped");
    const start = await server.page("POST", `${path}/actions/start`, { sid: owner.sid });
    expect(start.location).toBe(`${path}?done=started`);
    const suspend = await server.page("POST", `${path}/actions/suspend`, { sid: owner.sid });
    expect(suspend.location).toBe(`${path}?done=suspended`);
    expect(await stateOf(instanceId)).toBe("suspended");
    // Suspended: stopping is the API's 400, shown on the page.
    const refused = await server.page("POST", `${path}/actions/stop`, { sid: owner.sid });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('role="alert"');
    const unknown = await server.page("POST", `${path}/actions/explode`, { sid: owner.sid });
    expect(unknown.status).toBe(404);
  });

  test("variables: added, changed, hidden kept, deleted; a bad name is the API's error beside the field", async () => {
    const { member, instanceId, path } = await teamWithInstance();
    // A member changes the variables.
    const added = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { name: "API_URL", value: "http://a.example" },
    });
    expect(added.location, added.html).toBe(`${path}?done=env-added`);
    const secret = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { name: "API_KEY", value: "s3cret-value", hidden: "yes" },
    });
    expect(secret.location).toBe(`${path}?done=env-added`);
    const page = await server.page("GET", `${path}?done=env-added`, { sid: member.sid });
    expect(page.html).toContain("The variable is added.");
    expect(page.html).toContain("http://a.example");
    expect(page.html).not.toContain("s3cret-value");

    const changed = await server.page("POST", `${path}/env/change`, {
      sid: member.sid,
      form: { name: "API_URL", value: "http://b.example" },
    });
    expect(changed.location).toBe(`${path}?done=env-changed`);
    // The hidden one sent empty keeps its value.
    await server.page("POST", `${path}/env/change`, {
      sid: member.sid,
      form: { name: "API_KEY", value: "" },
    });
    const stored = await server.db
      .selectFrom("projects")
      .select("settings")
      .where("id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.settings)).toContain("s3cret-value");
    expect(await envOf(instanceId)).toEqual([
      { name: "API_URL", value: "http://b.example", hidden: false },
      { name: "API_KEY", value: "", hidden: true },
    ]);

    const bad = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { name: "9LIVES", value: "x" },
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('<p class="field-error" id="env-name-error">');
    expect(bad.html).toContain('value="9LIVES"');
    const twice = await server.page("POST", `${path}/env`, {
      sid: member.sid,
      form: { name: "API_URL", value: "x" },
    });
    expect(twice.status).toBe(400);
    expect(twice.html).toContain("Already a variable of the instance");

    const deleted = await server.page("POST", `${path}/env/delete`, {
      sid: member.sid,
      form: { name: "API_URL" },
    });
    expect(deleted.location).toBe(`${path}?done=env-deleted`);
    expect((await envOf(instanceId)).map((v: { name: string }) => v.name)).toEqual(["API_KEY"]);
    const missing = await server.page("POST", `${path}/env/delete`, {
      sid: member.sid,
      form: { name: "NOPE" },
    });
    expect(missing.status).toBe(400);
  });

  test("renaming: owners; a taken name is the API's 409 beside the field", async () => {
    const a = await teamWithInstance();
    const b = await teamWithInstance();
    const taken = await server.page("POST", `${a.path}/settings`, {
      sid: a.owner.sid,
      form: { name: b.instanceName },
    });
    expect(taken.status).toBe(409);
    expect(taken.html).toContain('id="instance-rename-error">Name in use');
    const renamed = await server.page("POST", `${a.path}/settings`, {
      sid: a.owner.sid,
      form: { name: `${a.instanceName}-x` },
    });
    expect(renamed.location).toBe(`${a.path}?done=renamed`);
    const page = await server.page("GET", a.path, { sid: a.owner.sid });
    expect(page.html).toContain(`Instance ${a.instanceName}-x`);
    const byMember = await server.page("POST", `${a.path}/settings`, {
      sid: a.member.sid,
      form: { name: "not-mine" },
    });
    expect(byMember.status).toBe(403);
  });

  test("snapshots: taken, exported as a file, imported from a file and pasted, rolled back to", async () => {
    const { owner, member, instanceId, path } = await teamWithInstance();
    const blank = await server.page("POST", `${path}/snapshots`, {
      sid: member.sid,
      form: { name: " " },
    });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('id="snapshot-name-error"');
    const taken = await server.page("POST", `${path}/snapshots`, {
      sid: member.sid,
      form: { name: "Before <b>change</b>", description: "The first" },
    });
    expect(taken.location).toBe(`${path}?done=snapshot`);
    const list = await server.request("GET", `/api/v1/projects/${instanceId}/snapshots`);
    const snapshotId = list.body.snapshots[0].id as string;
    const page = await server.page("GET", path, { sid: member.sid });
    expect(page.html).toContain("Before &lt;b&gt;change&lt;/b&gt;");
    expect(formActions(page)).toContain(`${path}/snapshots/${snapshotId}/rollback`);
    // Members do not import (owners do).
    expect(formActions(page)).not.toContain(`${path}/snapshots/import`);

    const short = await server.page("POST", `${path}/snapshots/${snapshotId}/export`, {
      sid: member.sid,
      form: { credentialSecret: "short" },
    });
    expect(short.status).toBe(400);
    expect(short.html).toContain(`id="export-secret-${snapshotId}-error"`);
    const exported = await server.page("POST", `${path}/snapshots/${snapshotId}/export`, {
      sid: member.sid,
      form: { credentialSecret: "a long enough secret" },
    });
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toContain("application/json");
    expect(exported.headers.get("content-disposition")).toMatch(
      /^attachment; filename=".+\.json"$/,
    );
    expect(exported.headers.get("cache-control")).toBe("no-store");
    const file = JSON.parse(exported.html);
    expect(file.name).toBe("Before <b>change</b>");

    // Imported from a file (multipart, as a browser sends a file input).
    const form = new FormData();
    form.append("file", new Blob([exported.html], { type: "application/json" }), "export.json");
    form.append("snapshot", "");
    form.append("credentialSecret", "a long enough secret");
    const imported = await postMultipart(`${path}/snapshots/import`, owner.sid, form);
    expect(imported.location, imported.html).toBe(`${path}?done=imported`);
    // Pasted, URL-encoded.
    const pasted = await server.page("POST", `${path}/snapshots/import`, {
      sid: owner.sid,
      form: { snapshot: exported.html, credentialSecret: "a long enough secret" },
    });
    expect(pasted.location, pasted.html).toBe(`${path}?done=imported`);
    expect(
      (await server.request("GET", `/api/v1/projects/${instanceId}/snapshots`)).body.count,
    ).toBe(3);
    expect(
      (await auditEntries(server.db, { event: "project.snapshot.imported" })).length,
    ).toBeGreaterThanOrEqual(2);

    const garbage = await server.page("POST", `${path}/snapshots/import`, {
      sid: owner.sid,
      form: { snapshot: "{not json", credentialSecret: "" },
    });
    expect(garbage.status).toBe(400);
    expect(garbage.html).toContain('id="import-text-error"');
    const byMember = await server.page("POST", `${path}/snapshots/import`, {
      sid: member.sid,
      form: { snapshot: exported.html, credentialSecret: "a long enough secret" },
    });
    expect(byMember.status).toBe(403);

    const rolled = await server.page("POST", `${path}/snapshots/${snapshotId}/rollback`, {
      sid: member.sid,
    });
    expect(rolled.location, rolled.html).toBe(`${path}?done=rolled-back`);
    const rollbacks = await auditEntries(server.db, { event: "project.snapshot.rolled-back" });
    expect(rollbacks.some((entry) => entry.actor_id === member.id)).toBe(true);
  });

  test("the devices that follow it are listed, each linking to its page", async () => {
    const { owner, teamId, instanceId, path } = await teamWithInstance();
    const device = await server.request("POST", "/api/v1/devices", {
      body: { name: "press-<1>", team: teamId, instance: instanceId },
    });
    expect(device.status, device.text).toBe(200);
    const page = await server.page("GET", path, { sid: owner.sid });
    expect(page.html).toContain(
      `<a href="/teams/${teamId}/devices/${device.body.id}">press-&lt;1&gt;</a>`,
    );
  });

  test("deleting: owners, asked first without script, then to the team's page", async () => {
    const { owner, member, teamId, instanceId, instanceName, path } = await teamWithInstance();
    const byMember = await server.page("POST", `${path}/delete`, {
      sid: member.sid,
      form: { confirmed: "yes" },
    });
    expect(byMember.status).toBe(403);
    const asked = await server.page("POST", `${path}/delete`, { sid: owner.sid });
    expect(asked.status).toBe(200);
    expect(asked.html).toContain(`Delete the instance “<strong>${instanceName}</strong>”`);
    expect(asked.html).toContain('name="confirmed" value="yes"');
    expect(await stateOf(instanceId)).toBe("running");
    const deleted = await server.page("POST", `${path}/delete`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(deleted.location).toBe(`/teams/${teamId}?done=deleted`);
    const team = await server.page("GET", deleted.location!, { sid: owner.sid });
    expect(team.html).toContain("The instance is deleted.");
    expect((await server.page("GET", path, { sid: owner.sid })).status).toBe(404);
  });
});

describe("by role", () => {
  test("a member changes variables and takes snapshots; no action, rename, delete or import", async () => {
    const { member, instanceId, path } = await teamWithInstance();
    const page = await server.page("GET", path, { sid: member.sid });
    expect(page.status).toBe(200);
    const actions = formActions(page);
    expect(actions).toContain(`${path}/env`);
    expect(actions).toContain(`${path}/snapshots`);
    for (const action of [
      "actions/stop",
      "actions/restart",
      "settings",
      "delete",
      "snapshots/import",
    ]) {
      expect(actions, action).not.toContain(`${path}/${action}`);
    }
    const stop = await server.page("POST", `${path}/actions/stop`, { sid: member.sid });
    expect(stop.status).toBe(403);
    expect(stop.html).toContain('role="alert"');
    expect(await stateOf(instanceId)).toBe("running");
  });

  test("a viewer sees state, log, variables and snapshots, and no form; the API refuses what is posted", async () => {
    const { owner, viewer, instanceId, path } = await teamWithInstance();
    await server.asSession(owner.sid, "POST", `/api/v1/projects/${instanceId}/snapshots`, {
      body: { name: "Kept" },
    });
    await server.page("POST", `${path}/env`, {
      sid: owner.sid,
      form: { name: "SEEN", value: "yes-seen" },
    });
    const page = await server.page("GET", path, { sid: viewer.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("now running");
    expect(page.html).toContain("yes-seen");
    expect(page.html).toContain("Kept");
    expect(formActions(page)).toEqual(["/sign-out"]);
    const snapshots = await server.request("GET", `/api/v1/projects/${instanceId}/snapshots`);
    const snapshotId = snapshots.body.snapshots[0].id as string;
    const forged = [
      [`${path}/actions/stop`, {}],
      [`${path}/env`, { name: "X", value: "y" }],
      [`${path}/env/delete`, { name: "SEEN" }],
      [`${path}/settings`, { name: "renamed-by-viewer" }],
      [`${path}/snapshots`, { name: "Sneaky" }],
      [`${path}/snapshots/${snapshotId}/rollback`, {}],
      [`${path}/snapshots/${snapshotId}/export`, { credentialSecret: "a long enough secret" }],
      [`${path}/delete`, { confirmed: "yes" }],
    ] as const;
    for (const [target, form] of forged) {
      const reply = await server.page("POST", target, { sid: viewer.sid, form });
      expect(reply.status, target).toBe(403);
    }
    expect(await stateOf(instanceId)).toBe("running");
    expect((await envOf(instanceId)).map((v: { name: string }) => v.name)).toEqual(["SEEN"]);
  });

  test("another team's member gets 404; an instance of another team under this team's address is 404", async () => {
    const a = await teamWithInstance("Team A");
    const b = await teamWithInstance("Team B");
    const outsider: Person = b.owner;
    const seen = await server.page("GET", a.path, { sid: outsider.sid });
    expect(seen.status).toBe(404);
    expect(seen.html).not.toContain(a.instanceName);
    for (const target of [
      `${a.path}/actions/stop`,
      `${a.path}/env`,
      `${a.path}/snapshots`,
      `${a.path}/delete`,
    ]) {
      const reply = await server.page("POST", target, {
        sid: outsider.sid,
        form: { name: "X", value: "y", confirmed: "yes" },
      });
      expect(reply.status, target).toBe(404);
    }
    // B's instance under A's address, by someone in both teams: not A's page.
    await addMember(server.db, { teamId: b.teamId, userId: a.owner.id, role: Role.owner });
    const mixed = `/teams/${a.teamId}/instances/${b.instanceId}`;
    expect((await server.page("GET", mixed, { sid: a.owner.sid })).status).toBe(404);
    const stop = await server.page("POST", `${mixed}/actions/stop`, { sid: a.owner.sid });
    expect(stop.status).toBe(404);
    expect(await stateOf(b.instanceId)).toBe("running");
    expect(await stateOf(a.instanceId)).toBe("running");
  });
});
