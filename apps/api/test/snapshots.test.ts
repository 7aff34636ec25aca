// Snapshots through the real server (instances run by the in-memory driver; the real Node-RED's
// part is snapshots-node-red.test.ts): taken from what an instance's Node-RED stored, listed
// newest first in pages, read, their content without credentials, renamed, deleted; credentials
// encrypted at rest; each role what the matrix says; another team sees nothing.
import { encryptCredentials } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./harness";
import { createInstance, createTeam, makeUser, type TestUser } from "./team-fixtures";

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
  await server?.close();
  await server?.testDb.drop();
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
  });
});
