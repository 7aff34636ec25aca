// Signing out everywhere (DELETE /api/v1/user/sessions): every session of the person ends at once,
// browsers' and hosted instances' editors' alike, and their tokens stay; other people are not
// touched; a read-only or team-restricted token may not do it.
import { insertSession } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { createApplication, createTeam, makeUser } from "../support/team-fixtures";

let server: TestServer;
let instanceId: string;

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  const applicationId = await createApplication(server, owner, team.id);
  const created = await server.request("POST", "/api/v1/projects", {
    token: owner.token,
    body: { name: "signed-out", applicationId },
  });
  expect(created.status, created.text).toBe(200);
  instanceId = created.body.id;
});
afterAll(() => server?.close());

/** A person signed in twice in browsers, with an editor session and a token of their own. */
async function signedInPerson() {
  const person = await server.userWithPassword();
  const browsers = [
    await server.signIn(person.username, person.password),
    await server.signIn(person.username, person.password),
  ];
  await insertSession(server.db, {
    userId: person.id,
    digest: `editor-${Math.random()}`,
    expiresAt: new Date(Date.now() + 3_600_000),
    projectId: instanceId,
  });
  const token = (
    await server.asSession(browsers[0]!, "POST", "/api/v1/user/tokens", { body: { name: "mine" } })
  ).body.token as string;
  return { ...person, browsers, token };
}

const sessionsOf = async (userId: string) =>
  (await server.db.selectFrom("sessions").select("id").where("user_id", "=", userId).execute())
    .length;

describe("signing out everywhere", () => {
  it("ends every browser and editor session of the person; their tokens stay; others are untouched", async () => {
    const person = await signedInPerson();
    const other = await signedInPerson();
    expect(await sessionsOf(person.id)).toBe(3);
    const reply = await server.request("DELETE", "/api/v1/user/sessions", {
      token: person.token,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await sessionsOf(person.id)).toBe(0);
    for (const sid of person.browsers) {
      expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);
    }
    expect((await server.request("GET", "/api/v1/user", { token: person.token })).status).toBe(200);
    expect(await sessionsOf(other.id)).toBe(3);
    expect((await server.asSession(other.browsers[0]!, "GET", "/api/v1/user")).status).toBe(200);
    const log = await server.request("GET", "/api/v1/user/audit-log", { token: person.token });
    expect(log.body.log[0]).toMatchObject({
      event: "user.signed-out-everywhere",
      body: { user: { id: person.id }, sessions: 3 },
    });
  });

  it("from a browser, ends that browser's session too", async () => {
    const person = await signedInPerson();
    const reply = await server.asSession(person.browsers[1]!, "DELETE", "/api/v1/user/sessions");
    expect(reply.status, reply.text).toBe(200);
    expect((await server.asSession(person.browsers[1]!, "GET", "/api/v1/user")).status).toBe(401);
    expect(await sessionsOf(person.id)).toBe(0);
  });

  it("is refused to a read-only token and to a token restricted to teams (403), which end nothing", async () => {
    const person = await signedInPerson();
    const team = await server.request("POST", "/api/v1/teams", {
      token: person.token,
      body: { name: `Everywhere ${Math.random().toString(36).slice(2, 7)}` },
    });
    for (const scope of [{ readOnly: true }, { teamIds: [team.body.id] }]) {
      const narrow = await server.request("POST", "/api/v1/user/tokens", {
        token: person.token,
        body: { name: "narrow", ...scope },
      });
      expect(narrow.status, narrow.text).toBe(200);
      const refused = await server.request("DELETE", "/api/v1/user/sessions", {
        token: narrow.body.token,
      });
      expect(refused.status, JSON.stringify(scope)).toBe(403);
    }
    expect(await sessionsOf(person.id)).toBe(3);
  });
});
