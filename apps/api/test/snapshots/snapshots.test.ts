// Snapshots through the real server (instances run by the in-memory driver; the real Node-RED's
// part is snapshots-node-red.test.ts): taken from what an instance's Node-RED stored, listed
// newest first in pages, read, their content without credentials, renamed, deleted; credentials
// encrypted at rest; each role what the matrix says; another team sees nothing.
import { decryptCredentials, encryptCredentials } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { createInstance, createTeam, makeUser, type TestUser } from "../support/team-fixtures";

let server: TestServer;
let owner: TestUser;
let member: { token: string };
let viewer: { token: string };
let outsider: TestUser;
let teamId: string;
let instanceId: string;

const FLOWS = [
  { id: "tab1", type: "tab", label: "Flow 1" },
  { id: "mqtt1", type: "mqtt-broker", broker: "localhost" },
];
const SECRET = "node-red's own secret";

/** What the instance's Node-RED would have stored: flows, credentials under its own secret. */
async function deploy(id: string, password: string) {
  await server.db
    .updateTable("project_storage")
    .set({
      flows: JSON.stringify(FLOWS),
      credentials: JSON.stringify(encryptCredentials(SECRET, { mqtt1: { user: "u", password } })),
      settings: JSON.stringify({ _credentialSecret: SECRET }),
    })
    .where("project_id", "=", id)
    .execute();
}

const snapshotsPath = (id = instanceId) => `/api/v1/projects/${id}/snapshots`;

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  owner = await makeUser(server);
  const team = await createTeam(server, owner);
  teamId = team.id;
  member = await server.user({ teams: [{ id: teamId, role: Role.member }] });
  viewer = await server.user({ teams: [{ id: teamId, role: Role.viewer }] });
  outsider = await makeUser(server);
  await createTeam(server, outsider);
  instanceId = await createInstance(server, owner, teamId);
  await server.request("PUT", `/api/v1/projects/${instanceId}`, {
    token: owner.token,
    body: {
      settings: {
        env: [
          { name: "GREETING", value: "hello" },
          { name: "API_KEY", value: "hidden-value-42", hidden: true },
        ],
      },
    },
  });
  await deploy(instanceId, "first-password");
}, 60_000);

afterAll(async () => {
  // The server made its own database, and drops it as it closes.
  await server?.close();
});

describe("instance snapshots", () => {
  let snapshotId: string;

  it("a member takes one: the instance's flows, variables and modules; credentials never in the clear", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: { name: "First", description: "before the change" },
    });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({
      name: "First",
      description: "before the change",
      ownerType: "instance",
      projectId: instanceId,
      project: { id: instanceId },
      modules: { "node-red": "4.1.15" },
    });
    expect(taken.text).not.toContain("first-password");
    snapshotId = taken.body.id;

    const row = await server.db
      .selectFrom("snapshots")
      .selectAll()
      .where("id", "=", snapshotId)
      .executeTakeFirstOrThrow();
    // At rest: neither the credential nor the hidden variable's value, nor the instance's secret.
    const stored = JSON.stringify(row);
    expect(stored).not.toContain("first-password");
    expect(stored).not.toContain("hidden-value-42");
    expect(row.secrets).toBeTruthy();

    const full = await server.request("GET", `/api/v1/snapshots/${snapshotId}/full`, {
      token: member.token,
    });
    expect(full.status).toBe(200);
    expect(full.body.flows).toEqual({ flows: FLOWS });
    expect(full.body.settings).toMatchObject({
      env: { GREETING: "hello", API_KEY: "" },
      hiddenEnv: ["API_KEY"],
      modules: { "node-red": "4.1.15" },
    });
    expect(full.text).not.toContain("first-password");
    expect(full.text).not.toContain("hidden-value-42");

    const [entry] = await auditEntries(server.db, { event: "project.snapshot.created" });
    expect(entry).toMatchObject({ entity_type: "project", entity_id: instanceId, team_id: teamId });
    expect(entry!.body.snapshot).toEqual({ id: snapshotId, name: "First" });
  });

  it("lists newest first, paged with limit and cursor; viewers read, the full content is members'", async () => {
    const ids = [snapshotId];
    for (const name of ["Second", "Third"]) {
      const reply = await server.request("POST", snapshotsPath(), {
        token: owner.token,
        body: { name },
      });
      ids.push(reply.body.id);
    }
    const first = await server.request("GET", `${snapshotsPath()}?limit=2`, {
      token: viewer.token,
    });
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(3);
    expect(first.body.snapshots.map((s: { name: string }) => s.name)).toEqual(["Third", "Second"]);
    expect(first.body.meta.next_cursor).toBe(ids[1]);
    const second = await server.request(
      "GET",
      `${snapshotsPath()}?limit=2&cursor=${first.body.meta.next_cursor}`,
      { token: viewer.token },
    );
    expect(second.body.snapshots.map((s: { name: string }) => s.name)).toEqual(["First"]);
    expect(second.body.meta).toEqual({});

    const one = await server.request("GET", `${snapshotsPath()}/${snapshotId}`, {
      token: viewer.token,
    });
    expect(one.body).toMatchObject({ id: snapshotId, name: "First" });
    const same = await server.request("GET", `/api/v1/snapshots/${snapshotId}`, {
      token: viewer.token,
    });
    expect(same.body).toEqual(one.body);

    const full = await server.request("GET", `/api/v1/snapshots/${snapshotId}/full`, {
      token: viewer.token,
    });
    expect(full.status).toBe(403);
    const taken = await server.request("POST", snapshotsPath(), {
      token: viewer.token,
      body: { name: "Nope" },
    });
    expect(taken.status).toBe(403);
  });

  it("owners rename and delete; the content stays as it was taken", async () => {
    const byMember = await server.request("PUT", `/api/v1/snapshots/${snapshotId}`, {
      token: member.token,
      body: { name: "Mine now" },
    });
    expect(byMember.status).toBe(403);
    const renamed = await server.request("PUT", `/api/v1/snapshots/${snapshotId}`, {
      token: owner.token,
      body: { name: "Renamed", description: "" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Renamed", description: "" });
    const content = await server.request("PUT", `/api/v1/snapshots/${snapshotId}`, {
      token: owner.token,
      body: { flows: [] },
    });
    expect(content.status).toBe(400);
    expect((await auditEntries(server.db, { event: "project.snapshot.updated" })).length).toBe(1);

    const other = await server.request("POST", snapshotsPath(), {
      token: owner.token,
      body: { name: "To delete" },
    });
    const byMemberDelete = await server.request("DELETE", `/api/v1/snapshots/${other.body.id}`, {
      token: member.token,
    });
    expect(byMemberDelete.status).toBe(403);
    const deleted = await server.request("DELETE", `${snapshotsPath()}/${other.body.id}`, {
      token: owner.token,
    });
    expect(deleted.body).toEqual({ status: "okay" });
    const gone = await server.request("GET", `/api/v1/snapshots/${other.body.id}`, {
      token: owner.token,
    });
    expect(gone.status).toBe(404);
    const alsoGone = await server.request("DELETE", `/api/v1/snapshots/${snapshotId}`, {
      token: owner.token,
    });
    expect(alsoGone.status).toBe(200);
    expect((await auditEntries(server.db, { event: "project.snapshot.deleted" })).length).toBe(2);
  });

  it("a snapshot named with another instance of the team is 404", async () => {
    const otherInstance = await createInstance(server, owner, teamId);
    const taken = await server.request("POST", snapshotsPath(otherInstance), {
      token: owner.token,
      body: { name: "elsewhere" },
    });
    const crossed = await server.request("GET", `${snapshotsPath()}/${taken.body.id}`, {
      token: owner.token,
    });
    expect(crossed.status).toBe(404);
  });

  it("given content: flows with credentials encrypted with a secret the caller gives", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: {
        name: "Given",
        flows: {
          flows: FLOWS,
          credentials: encryptCredentials("a caller secret", { mqtt1: { password: "p" } }),
        },
        credentialSecret: "a caller secret",
        settings: { modules: { "node-red": "4.1.15", "node-red-contrib-x": "1.2.3" } },
      },
    });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body.modules).toEqual({ "node-red": "4.1.15", "node-red-contrib-x": "1.2.3" });
    const wrong = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: {
        name: "Given",
        flows: { flows: FLOWS, credentials: encryptCredentials("a caller secret", { mqtt1: {} }) },
        credentialSecret: "not the secret",
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("bad_request");
  });

  it("rollback gives the instance the snapshot's flows, credentials under its own secret, variables", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: { name: "Before" },
    });
    // The instance changes: other flows, another password, other variables.
    await server.db
      .updateTable("project_storage")
      .set({
        flows: JSON.stringify([{ id: "tab2", type: "tab" }]),
        credentials: JSON.stringify(encryptCredentials(SECRET, { other: { password: "later" } })),
      })
      .where("project_id", "=", instanceId)
      .execute();
    await server.request("PUT", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
      body: { settings: { env: [{ name: "GREETING", value: "changed" }] } },
    });

    const byViewer = await server.request(
      "POST",
      `/api/v1/projects/${instanceId}/actions/rollback`,
      {
        token: viewer.token,
        body: { snapshot: taken.body.id },
      },
    );
    expect(byViewer.status).toBe(403);
    const rolled = await server.request("POST", `/api/v1/projects/${instanceId}/actions/rollback`, {
      token: member.token,
      body: { snapshot: taken.body.id },
    });
    expect(rolled.status, rolled.text).toBe(200);
    const storage = await server.db
      .selectFrom("project_storage")
      .selectAll()
      .where("project_id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(storage.flows).toEqual(FLOWS);
    expect(decryptCredentials(SECRET, storage.credentials as { $: string })).toEqual({
      mqtt1: { user: "u", password: "first-password" },
    });
    const after = await server.request("GET", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
    });
    expect(after.body.settings.env.slice(0, 2)).toEqual([
      { name: "GREETING", value: "hello", hidden: false },
      { name: "API_KEY", value: "", hidden: true },
    ]);
    const row = await server.db
      .selectFrom("projects")
      .select("settings")
      .where("id", "=", instanceId)
      .executeTakeFirstOrThrow();
    expect(row.settings.env?.find((v) => v.name === "API_KEY")?.value).toBe("hidden-value-42");
    expect((await auditEntries(server.db, { event: "project.snapshot.rolled-back" })).length).toBe(
      1,
    );

    const otherInstance = await createInstance(server, owner, teamId);
    const foreign = await server.request("POST", snapshotsPath(otherInstance), {
      token: owner.token,
      body: { name: "not this one's" },
    });
    const refused = await server.request(
      "POST",
      `/api/v1/projects/${instanceId}/actions/rollback`,
      {
        token: member.token,
        body: { snapshot: foreign.body.id },
      },
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "invalid_snapshot",
      errors: [{ path: "snapshot" }],
    });
  });

  it("export encrypts credentials and hidden values with the caller's secret; import opens them with it", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: { name: "To move", description: "moved" },
    });
    const noSecret = await server.request("POST", `/api/v1/snapshots/${taken.body.id}/export`, {
      token: member.token,
      body: {},
    });
    expect(noSecret.status).toBe(400);
    const exported = await server.request("POST", `/api/v1/snapshots/${taken.body.id}/export`, {
      token: member.token,
      body: { credentialSecret: "the caller's secret" },
    });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.text).not.toContain("first-password");
    expect(exported.text).not.toContain("hidden-value-42");
    expect(exported.body.exportedBy.id).toBeTruthy();
    expect(decryptCredentials("the caller's secret", exported.body.flows.credentials)).toEqual({
      mqtt1: { user: "u", password: "first-password" },
    });
    expect(decryptCredentials("the caller's secret", exported.body.settings.secretEnv)).toEqual({
      API_KEY: "hidden-value-42",
    });
    const viaInstance = await server.request("POST", `${snapshotsPath()}/${taken.body.id}/export`, {
      token: viewer.token,
      body: { credentialSecret: "the caller's secret" },
    });
    expect(viaInstance.status).toBe(403);

    const second = await createInstance(server, owner, teamId);
    const { exportedBy: _by, id: _id, ...snapshot } = exported.body;
    const body = (secret: string) => ({
      ownerId: second,
      ownerType: "instance",
      snapshot: {
        name: snapshot.name,
        description: snapshot.description,
        flows: snapshot.flows,
        settings: {
          settings: snapshot.settings.settings,
          env: snapshot.settings.env,
          hiddenEnv: snapshot.settings.hiddenEnv,
          secretEnv: snapshot.settings.secretEnv,
          modules: snapshot.settings.modules,
        },
      },
      credentialSecret: secret,
    });
    const wrong = await server.request("POST", "/api/v1/snapshots/import", {
      token: owner.token,
      body: body("not the secret at all"),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("bad_request");
    const byMember = await server.request("POST", "/api/v1/snapshots/import", {
      token: member.token,
      body: body("the caller's secret"),
    });
    expect(byMember.status).toBe(403);
    const imported = await server.request("POST", "/api/v1/snapshots/import", {
      token: owner.token,
      body: body("the caller's secret"),
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body).toMatchObject({ name: "To move", projectId: second });
    expect((await auditEntries(server.db, { event: "project.snapshot.imported" })).length).toBe(1);

    const rolled = await server.request("POST", `/api/v1/projects/${second}/actions/rollback`, {
      token: owner.token,
      body: { snapshot: imported.body.id },
    });
    expect(rolled.status, rolled.text).toBe(200);
    const storage = await server.db
      .selectFrom("project_storage")
      .selectAll()
      .where("project_id", "=", second)
      .executeTakeFirstOrThrow();
    const secondSecret = (storage.settings as { _credentialSecret: string })._credentialSecret;
    expect(secondSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(decryptCredentials(secondSecret, storage.credentials as { $: string })).toEqual({
      mqtt1: { user: "u", password: "first-password" },
    });
    const project = await server.db
      .selectFrom("projects")
      .select("settings")
      .where("id", "=", second)
      .executeTakeFirstOrThrow();
    expect(project.settings.env).toEqual([
      { name: "GREETING", value: "hello", hidden: false },
      { name: "API_KEY", value: "hidden-value-42", hidden: true },
    ]);
  });

  it("the device target is a snapshot of the instance's application; another's is 400 naming the field", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: { name: "For devices" },
    });
    const none = await server.request("GET", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: viewer.token,
    });
    expect(none.body).toEqual({ targetSnapshot: null });
    const set = await server.request("POST", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: member.token,
      body: { targetSnapshot: taken.body.id },
    });
    expect(set.status, set.text).toBe(200);
    const read = await server.request("GET", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: viewer.token,
    });
    expect(read.body).toEqual({ targetSnapshot: taken.body.id });
    expect(
      (await auditEntries(server.db, { event: "project.snapshot.device-target-set" })).at(-1)!.body
        .snapshot,
    ).toEqual({ id: taken.body.id, name: "For devices" });

    // Another application of the team, and another team.
    const otherApp = await createInstance(server, owner, teamId);
    const inOtherApp = await server.request("POST", snapshotsPath(otherApp), {
      token: owner.token,
      body: { name: "other application" },
    });
    const outsiderInstance = await createInstance(
      server,
      outsider,
      (await server.request("GET", "/api/v1/user/teams", { token: outsider.token })).body.teams[0]
        .id,
    );
    const inOtherTeam = await server.request("POST", snapshotsPath(outsiderInstance), {
      token: outsider.token,
      body: { name: "other team" },
    });
    for (const id of [inOtherApp.body.id, inOtherTeam.body.id, "doesnotexist1"]) {
      const refused = await server.request(
        "POST",
        `/api/v1/projects/${instanceId}/devices/settings`,
        { token: member.token, body: { targetSnapshot: id } },
      );
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: "invalid_snapshot",
        errors: [{ path: "targetSnapshot" }],
      });
    }
    const cleared = await server.request(
      "POST",
      `/api/v1/projects/${instanceId}/devices/settings`,
      {
        token: member.token,
        body: { targetSnapshot: null },
      },
    );
    expect(cleared.status).toBe(200);
    const setOnCreate = await server.request("POST", snapshotsPath(), {
      token: member.token,
      body: { name: "Target at once", setAsTarget: true },
    });
    const now = await server.request("GET", `/api/v1/projects/${instanceId}/devices/settings`, {
      token: viewer.token,
    });
    expect(now.body).toEqual({ targetSnapshot: setOnCreate.body.id });
  });

  it("another team's member gets 404 on every snapshot route", async () => {
    const taken = await server.request("POST", snapshotsPath(), {
      token: owner.token,
      body: { name: "Private" },
    });
    const id = taken.body.id;
    const calls: [string, string, unknown?][] = [
      ["GET", snapshotsPath()],
      ["POST", snapshotsPath(), { name: "x" }],
      ["GET", `${snapshotsPath()}/${id}`],
      ["DELETE", `${snapshotsPath()}/${id}`],
      ["GET", `/api/v1/snapshots/${id}`],
      ["GET", `/api/v1/snapshots/${id}/full`],
      ["PUT", `/api/v1/snapshots/${id}`, { name: "x" }],
      ["DELETE", `/api/v1/snapshots/${id}`],
      ["POST", `/api/v1/snapshots/${id}/export`, { credentialSecret: "a long secret" }],
      ["POST", `${snapshotsPath()}/${id}/export`, { credentialSecret: "a long secret" }],
      ["POST", `/api/v1/projects/${instanceId}/actions/rollback`, { snapshot: id }],
      ["GET", `/api/v1/projects/${instanceId}/devices/settings`],
      ["POST", `/api/v1/projects/${instanceId}/devices/settings`, { targetSnapshot: id }],
    ];
    for (const [method, path, body] of calls) {
      const reply = await server.request(method, path, {
        token: outsider.token,
        ...(body ? { body } : {}),
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    const still = await server.request("GET", `/api/v1/snapshots/${id}`, { token: owner.token });
    expect(still.body.name).toBe("Private");
    // Importing into another team's instance: the body names it, so 400 naming the field.
    const imported = await server.request("POST", "/api/v1/snapshots/import", {
      token: outsider.token,
      body: {
        ownerId: instanceId,
        ownerType: "instance",
        snapshot: { name: "x", flows: { flows: [] }, settings: {} },
      },
    });
    expect(imported.status).toBe(400);
    expect(imported.body.errors).toEqual([expect.objectContaining({ path: "ownerId" })]);
  });
});
