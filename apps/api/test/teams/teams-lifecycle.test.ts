import { PERMISSIONS } from "@flowplane/auth";
import { auditEntries, DEFAULT_TEAM_TYPE_ID, teamLimits } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let admin: string;
beforeAll(async () => {
  server = await startServer();
  admin = (await server.user({ admin: true, scope: { adminOptIn: true } })).token;
});
afterAll(() => server.close());

type Team = { id: string; name: string; slug: string; type: { id: string; name: string } };

async function createTeam(token: string, body: Record<string, unknown>): Promise<Team> {
  const reply = await server.request("POST", "/api/v1/teams", { token, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as Team;
}

async function createType(body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const reply = await server.request("POST", "/api/v1/team-types", { token: admin, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

describe("a team's type", () => {
  test("a new team without `type` gets the default Starter; GET shows the type with its limits", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Untyped" });
    const starter = {
      id: DEFAULT_TEAM_TYPE_ID,
      name: "Starter",
      active: true,
      order: 0,
      description: expect.any(String),
      properties: {
        users: { limit: null },
        instances: { limit: null },
        devices: { limit: null },
        teamBroker: { clients: { limit: null } },
      },
    };
    expect(team.type).toEqual(starter);
    const read = await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token });
    expect(read.body.type).toEqual(starter);
    const mine = await server.request("GET", "/api/v1/user/teams", { token: owner.token });
    expect(mine.body.teams).toEqual([
      expect.objectContaining({
        id: team.id,
        type: { id: DEFAULT_TEAM_TYPE_ID, name: "Starter", active: true },
      }),
    ]);
  });

  test("`type` picks an active type; unknown or inactive is 400 invalid_team_type and creates nothing", async () => {
    const owner = await server.user();
    const gold = await createType({ name: "Gold", order: 20, properties: { users: { limit: 3 } } });
    const team = await createTeam(owner.token, { name: "Golden", type: gold.id });
    expect(team.type).toMatchObject({
      id: gold.id,
      name: "Gold",
      properties: { users: { limit: 3 } },
    });
    expect(await teamLimits(server.db, team.id)).toEqual({ users: { limit: 3 } });
    expect(await teamLimits(server.db, "AAAAAAAAAAAA")).toBeUndefined();
    const admins = await server.request("GET", "/api/v1/teams?limit=1000", { token: admin });
    expect(admins.body.teams.find((t: Team) => t.id === team.id).type.id).toBe(gold.id);

    const retired = await createType({ name: "Retired Plan", active: false });
    for (const type of ["AAAAAAAAAAAA", retired.id]) {
      const reply = await server.request("POST", "/api/v1/teams", {
        token: owner.token,
        body: { name: "Refused", slug: "refused-type", type },
      });
      expect(reply.status, type).toBe(400);
      expect(reply.body.code).toBe("invalid_team_type");
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toEqual(["type"]);
    }
    const free = await server.request("POST", "/api/v1/teams/check-slug", {
      token: owner.token,
      body: { slug: "refused-type" },
    });
    expect(free.status).toBe(200);
  });

  test("the default is the active type with the lowest order", async () => {
    const basic = await createType({ name: "Basic", order: 5 });
    const starterOrder = await server.request("PUT", `/api/v1/team-types/${DEFAULT_TEAM_TYPE_ID}`, {
      token: admin,
      body: { order: 10 },
    });
    expect(starterOrder.status).toBe(200);
    try {
      const owner = await server.user();
      const team = await createTeam(owner.token, { name: "Basic Team" });
      expect(team.type).toMatchObject({ id: basic.id, name: "Basic" });
    } finally {
      await server.request("PUT", `/api/v1/team-types/${DEFAULT_TEAM_TYPE_ID}`, {
        token: admin,
        body: { order: 0 },
      });
    }
  });

  test("a type's new limits show in its teams at once", async () => {
    const type = await createType({
      name: "Elastic",
      order: 20,
      properties: { users: { limit: 2 } },
    });
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Stretchy", type: type.id });
    await server.request("PUT", `/api/v1/team-types/${type.id}`, {
      token: admin,
      body: { name: "Elastic Plus", properties: { users: { limit: 20 } } },
    });
    const read = await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token });
    expect(read.body.type).toMatchObject({
      name: "Elastic Plus",
      properties: { users: { limit: 20 } },
    });
    expect(await teamLimits(server.db, team.id)).toEqual({ users: { limit: 20 } });
  });
});

describe("DELETE /api/v1/teams/{teamId}", () => {
  test("the owner deletes the team with its members and invitations; team.deleted stays in the log", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Doomed" });
    const member = await server.user({ teams: [{ id: team.id, role: 30 }] });
    await server.db
      .updateTable("users")
      .set({ default_team_id: team.id })
      .where("id", "=", member.id)
      .execute();
    await server.db
      .insertInto("invitations")
      .values({
        id: "invitation01",
        team_id: team.id,
        invitor_id: owner.id,
        invitee_id: null,
        email: "someone@example.com",
        role: 30,
        expires_at: new Date(Date.now() + 86_400_000),
      })
      .execute();

    const reply = await server.request("DELETE", `/api/v1/teams/${team.id}`, {
      token: owner.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });

    for (const token of [owner.token, member.token, admin]) {
      const read = await server.request("GET", `/api/v1/teams/${team.id}`, { token });
      expect(read.status).toBe(404);
    }
    const members = await server.db
      .selectFrom("team_members")
      .select("user_id")
      .where("team_id", "=", team.id)
      .execute();
    expect(members).toEqual([]);
    const invitations = await server.db
      .selectFrom("invitations")
      .select("id")
      .where("team_id", "=", team.id)
      .execute();
    expect(invitations).toEqual([]);
    const me = await server.request("GET", "/api/v1/user", { token: member.token });
    expect(me.body.defaultTeam).toBeUndefined();
    const mine = await server.request("GET", "/api/v1/user/teams", { token: member.token });
    expect(mine.body).toMatchObject({ count: 0, teams: [] });

    const entries = (await auditEntries(server.db, { event: "team.deleted" })).filter(
      (e) => e.team_id === team.id,
    );
    expect(entries).toEqual([
      expect.objectContaining({
        entity_type: "team",
        entity_id: team.id,
        actor_id: owner.id,
        token_id: owner.tokenId,
        body: { team: { id: team.id, name: "Doomed", slug: team.slug } },
      }),
    ]);
    const again = await server.request("DELETE", `/api/v1/teams/${team.id}`, {
      token: owner.token,
    });
    expect(again.status).toBe(404);
  });

  test("a token restricted to the deleted team reaches no team afterwards, not every team", async () => {
    const owner = await server.user();
    const doomed = await createTeam(owner.token, { name: "Restricted Doomed" });
    const other = await createTeam(owner.token, { name: "Other Team" });
    const restricted = await server.request("POST", "/api/v1/user/tokens", {
      token: owner.token,
      body: { name: "only doomed", teamIds: [doomed.id] },
    });
    expect(restricted.status).toBe(200);
    const token = restricted.body.token as string;
    expect((await server.request("GET", `/api/v1/teams/${doomed.id}`, { token })).status).toBe(200);
    expect((await server.request("GET", `/api/v1/teams/${other.id}`, { token })).status).toBe(404);

    expect(
      (await server.request("DELETE", `/api/v1/teams/${doomed.id}`, { token: owner.token })).status,
    ).toBe(200);

    expect((await server.request("GET", `/api/v1/teams/${doomed.id}`, { token })).status).toBe(404);
    expect((await server.request("GET", `/api/v1/teams/${other.id}`, { token })).status).toBe(404);
    const teams = await server.request("GET", "/api/v1/user/teams", { token });
    expect(teams.status).toBe(200);
    expect(teams.body).toMatchObject({ count: 0, teams: [] });
    const tokens = await server.request("GET", "/api/v1/user/tokens", { token: owner.token });
    expect(
      tokens.body.tokens.find((t: { id: string }) => t.id === restricted.body.id),
    ).toMatchObject({ teams: [] });
    // The owner's unrestricted token still reaches the other team.
    expect(
      (await server.request("GET", `/api/v1/teams/${other.id}`, { token: owner.token })).status,
    ).toBe(200);
  });

  test("members below owner get 403, non-members 404, a read-only owner token 403; the team stays", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Sturdy" });
    const member = await server.user({ teams: [{ id: team.id, role: 30 }] });
    const viewer = await server.user({ teams: [{ id: team.id, role: 10 }] });
    const outsider = await server.user();
    const adminNoOptIn = await server.user({ admin: true });
    const readOnly = await server.user({
      teams: [{ id: team.id, role: 50 }],
      scope: { readOnly: true },
    });
    for (const [who, token, status] of [
      ["member", member.token, 403],
      ["viewer", viewer.token, 403],
      ["read-only owner", readOnly.token, 403],
      ["outsider", outsider.token, 404],
      ["admin without opt-in", adminNoOptIn.token, 404],
    ] as const) {
      const reply = await server.request("DELETE", `/api/v1/teams/${team.id}`, { token });
      expect(reply.status, who).toBe(status);
    }
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token })).status,
    ).toBe(200);
  });

  test("an administrator's opt-in token deletes any team", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Admin Removed" });
    const reply = await server.request("DELETE", `/api/v1/teams/${team.id}`, { token: admin });
    expect(reply.status).toBe(200);
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token })).status,
    ).toBe(404);
  });
});

describe("GET /api/v1/teams/slug/{slug}", () => {
  test("members read the team by slug, as by id; non-members and unknown slugs get 404", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Sluggish", slug: "sluggish" });
    const dashboard = await server.user({ teams: [{ id: team.id, role: 5 }] });
    const outsider = await server.user();
    const byId = await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token });
    for (const token of [owner.token, dashboard.token, admin]) {
      const reply = await server.request("GET", "/api/v1/teams/slug/sluggish", { token });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(byId.body);
    }
    const hidden = await server.request("GET", "/api/v1/teams/slug/sluggish", {
      token: outsider.token,
    });
    const unknown = await server.request("GET", "/api/v1/teams/slug/no-such-team", {
      token: outsider.token,
    });
    expect(hidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(hidden.body.error).toBe(unknown.body.error);
  });

  test("a token restricted to other teams gets 404; a malformed slug is 400", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Fenced", slug: "fenced" });
    const elsewhere = await createTeam(owner.token, { name: "Elsewhere" });
    const restricted = await server.request("POST", "/api/v1/user/tokens", {
      token: owner.token,
      body: { name: "elsewhere only", teamIds: [elsewhere.id] },
    });
    expect(restricted.status).toBe(200);
    const reply = await server.request("GET", `/api/v1/teams/slug/${team.slug}`, {
      token: restricted.body.token,
    });
    expect(reply.status).toBe(404);
    const bad = await server.request("GET", "/api/v1/teams/slug/Not%20A%20Slug", {
      token: owner.token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(["slug"]);
  });
});

describe("POST /api/v1/teams/check-slug", () => {
  test("200 when free, 409 invalid_slug when taken, 400 when malformed", async () => {
    const owner = await server.user();
    await createTeam(owner.token, { name: "Holder", slug: "held" });
    const free = await server.request("POST", "/api/v1/teams/check-slug", {
      token: owner.token,
      body: { slug: "not-held" },
    });
    expect(free.status).toBe(200);
    expect(free.body).toEqual({ status: "okay" });
    const taken = await server.request("POST", "/api/v1/teams/check-slug", {
      token: owner.token,
      body: { slug: "held" },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe("invalid_slug");
    for (const body of [{}, { slug: "Upper Case" }, { slug: "ok", extra: 1 }]) {
      const reply = await server.request("POST", "/api/v1/teams/check-slug", {
        token: owner.token,
        body,
      });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
  });

  test("a read-only token may not create teams, so it may not check slugs either (403)", async () => {
    const readOnly = await server.user({ scope: { readOnly: true } });
    const reply = await server.request("POST", "/api/v1/teams/check-slug", {
      token: readOnly.token,
      body: { slug: "anything" },
    });
    expect(reply.status).toBe(403);
  });
});

describe("GET /api/v1/teams/{teamId}/user", () => {
  test("each role sees its own level and the team permissions it grants", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Roles" });
    const member = await server.user({ teams: [{ id: team.id, role: 30 }] });
    const viewer = await server.user({ teams: [{ id: team.id, role: 10 }] });
    const dashboard = await server.user({ teams: [{ id: team.id, role: 5 }] });
    const read = async (token: string) => {
      const reply = await server.request("GET", `/api/v1/teams/${team.id}/user`, { token });
      expect(reply.status).toBe(200);
      return reply.body as { role: number; permissions: string[] };
    };

    const asOwner = await read(owner.token);
    expect(asOwner.role).toBe(50);
    expect(asOwner.permissions).toEqual(
      expect.arrayContaining(["team:read", "team:edit", "team:delete", "team:user:invite"]),
    );
    const asMember = await read(member.token);
    expect(asMember.role).toBe(30);
    expect(asMember.permissions).toContain("team:user:list");
    expect(asMember.permissions).not.toContain("team:edit");
    expect(asMember.permissions).not.toContain("team:delete");
    expect(asMember.permissions).toContain("broker:clients:list");
    expect(asMember.permissions).not.toContain("broker:clients:create");
    const asViewer = await read(viewer.token);
    expect(asViewer.role).toBe(10);
    expect(asViewer.permissions).toEqual(expect.arrayContaining(["team:read", "team:user:list"]));
    expect(asViewer.permissions).not.toContain("team:edit");
    const asDashboard = await read(dashboard.token);
    expect(asDashboard).toEqual({ role: 5, permissions: ["team:read", "project:status"] });
    // Never anything outside the team's permissions.
    for (const body of [asOwner, asMember, asViewer]) {
      expect(
        body.permissions.every((p) => PERMISSIONS[p as keyof typeof PERMISSIONS]?.kind === "team"),
      ).toBe(true);
      expect(body.permissions).not.toContain("team:create");
      expect(body.permissions).not.toContain("team:list");
    }
  });

  test("an administrator acting as one who is not a member is role 99 with every team permission", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Visited" });
    const reply = await server.request("GET", `/api/v1/teams/${team.id}/user`, { token: admin });
    expect(reply.status).toBe(200);
    expect(reply.body.role).toBe(99);
    const asOwner = await server.request("GET", `/api/v1/teams/${team.id}/user`, {
      token: owner.token,
    });
    expect(reply.body.permissions).toEqual(expect.arrayContaining(asOwner.body.permissions));
  });

  test("non-members, administrators without opt-in and unknown teams get 404", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, { name: "Closed" });
    const outsider = await server.user();
    const adminNoOptIn = await server.user({ admin: true });
    for (const token of [outsider.token, adminNoOptIn.token]) {
      const reply = await server.request("GET", `/api/v1/teams/${team.id}/user`, { token });
      expect(reply.status).toBe(404);
    }
    const unknown = await server.request("GET", "/api/v1/teams/AAAAAAAAAAAA/user", {
      token: owner.token,
    });
    expect(unknown.status).toBe(404);
  });
});
