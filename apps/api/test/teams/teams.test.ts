import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function createTeam(name: string, token?: string, slug?: string) {
  const reply = await server.request("POST", "/api/v1/teams", {
    token,
    body: slug === undefined ? { name } : { name, slug },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as { id: string; name: string; slug: string };
}

describe("POST /api/v1/teams", () => {
  test("creates a team whose owner is the caller, with a slug from its name", async () => {
    const alice = await server.user();
    const reply = await server.request("POST", "/api/v1/teams", {
      token: alice.token,
      body: { name: "  Production Line 7 " },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      name: "Production Line 7",
      slug: "production-line-7",
      memberCount: 1,
      links: { self: `http://127.0.0.1:3000/api/v1/teams/${reply.body.id}` },
    });
    expect(reply.body.id).toMatch(/^[A-Za-z0-9]{12}$/);
    const mine = await server.request("GET", "/api/v1/user/teams", { token: alice.token });
    expect(mine.body.teams).toEqual([
      expect.objectContaining({ id: reply.body.id, role: 50, memberCount: 1 }),
    ]);
  });

  test("a taken slug is 409 invalid_slug; a taken name gets a unique slug", async () => {
    await createTeam("Taken", undefined, "taken-slug");
    const clash = await server.request("POST", "/api/v1/teams", {
      body: { name: "Other", slug: "taken-slug" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_slug");

    const first = await createTeam("Same Name");
    const second = await createTeam("Same Name");
    expect(first.slug).toBe("same-name");
    expect(second.slug).toMatch(/^same-name-[a-z0-9]{6}$/);
  });

  test("bad input is 400 invalid_request naming the fields, and writes nothing", async () => {
    const before = await server.db.selectFrom("teams").select("id").execute();
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(129) }, "name"],
      [{ name: 123 }, "name"],
      [{ name: "ok", slug: "Not Valid" }, "slug"],
      [{ name: "ok", slug: "create" }, "slug"],
      [{ name: "ok", type: 5 }, "type"],
      [{ name: "ok", type: "not an id" }, "type"],
      [{ name: "ok", slug: 5 }, "slug"],
    ];
    for (const [body, field] of cases) {
      const reply = await server.request("POST", "/api/v1/teams", { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    const after = await server.db.selectFrom("teams").select("id").execute();
    expect(after).toHaveLength(before.length);
  });

  test("writes team.created to the audit log with the actor and the token", async () => {
    const bob = await server.user();
    const team = await createTeam("Audited", bob.token);
    const entry = (await auditEntries(server.db, { event: "team.created" })).find(
      (e) => e.entity_id === team.id,
    );
    expect(entry).toMatchObject({
      entity_type: "team",
      team_id: team.id,
      actor_id: bob.id,
      source: "api",
      token_id: bob.tokenId,
      body: { team: { id: team.id, name: "Audited", slug: team.slug } },
    });
  });
});

describe("GET /api/v1/teams/{teamId}", () => {
  test("members of any role read the team; non-members and unknown ids get 404", async () => {
    const owner = await server.user();
    const team = await createTeam("Readable", owner.token);
    const dashboard = await server.user({ teams: [{ id: team.id, role: 5 }] });
    const outsider = await server.user();

    for (const token of [owner.token, dashboard.token]) {
      const reply = await server.request("GET", `/api/v1/teams/${team.id}`, { token });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ id: team.id, name: "Readable", memberCount: 2 });
    }
    const hidden = await server.request("GET", `/api/v1/teams/${team.id}`, {
      token: outsider.token,
    });
    const unknown = await server.request("GET", "/api/v1/teams/AAAAAAAAAAAA", {
      token: outsider.token,
    });
    expect(hidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(hidden.body.error).toBe(unknown.body.error);
  });

  test("an administrator's opt-in token reads any team; without opt-in it is a non-member", async () => {
    const owner = await server.user();
    const team = await createTeam("Private", owner.token);
    const admin = await server.user({ admin: true, scope: { adminOptIn: true } });
    const adminNoOptIn = await server.user({ admin: true });
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: admin.token })).status,
    ).toBe(200);
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: adminNoOptIn.token }))
        .status,
    ).toBe(404);
  });
});

describe("PUT /api/v1/teams/{teamId}", () => {
  test("the owner renames the team and its slug; team.settings.updated is logged", async () => {
    const owner = await server.user();
    const team = await createTeam("Before", owner.token);
    const reply = await server.request("PUT", `/api/v1/teams/${team.id}`, {
      token: owner.token,
      body: { name: "After", slug: "after-slug" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id: team.id, name: "After", slug: "after-slug" });
    expect(Date.parse(reply.body.updatedAt)).toBeGreaterThanOrEqual(
      Date.parse(reply.body.createdAt),
    );

    const read = await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token });
    expect(read.body.name).toBe("After");
    const entry = (await auditEntries(server.db, { event: "team.settings.updated" })).find(
      (e) => e.entity_id === team.id,
    );
    expect(entry?.body).toEqual({
      updates: [
        { key: "name", old: "Before", new: "After" },
        { key: "slug", old: team.slug, new: "after-slug" },
      ],
    });
    expect(entry).toMatchObject({ actor_id: owner.id, token_id: owner.tokenId, source: "api" });
  });

  test("members below owner get 403; non-members 404; nothing changes", async () => {
    const owner = await server.user();
    const team = await createTeam("Guarded", owner.token);
    const member = await server.user({ teams: [{ id: team.id, role: 30 }] });
    const viewer = await server.user({ teams: [{ id: team.id, role: 10 }] });
    const outsider = await server.user();
    for (const [who, token, status] of [
      ["member", member.token, 403],
      ["viewer", viewer.token, 403],
      ["outsider", outsider.token, 404],
    ] as const) {
      const reply = await server.request("PUT", `/api/v1/teams/${team.id}`, {
        token,
        body: { name: "Hijacked" },
      });
      expect(reply.status, who).toBe(status);
    }
    const read = await server.request("GET", `/api/v1/teams/${team.id}`, { token: owner.token });
    expect(read.body.name).toBe("Guarded");
  });

  test("a read-only token of the owner cannot rename a team (403)", async () => {
    const owner = await server.user();
    const team = await createTeam("Read Only", owner.token);
    const readOnly = await server.request("POST", "/api/v1/user/tokens", {
      token: owner.token,
      body: { name: "ro", readOnly: true },
    });
    const reply = await server.request("PUT", `/api/v1/teams/${team.id}`, {
      token: readOnly.body.token,
      body: { name: "Nope" },
    });
    expect(reply.status).toBe(403);
  });

  test("renaming to a taken slug is 409; no change at all is 400; teamId in the body is 400", async () => {
    const owner = await server.user();
    const team = await createTeam("Renamer", owner.token);
    await createTeam("Holder", owner.token, "held-slug");
    const clash = await server.request("PUT", `/api/v1/teams/${team.id}`, {
      token: owner.token,
      body: { slug: "held-slug" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("invalid_slug");
    const empty = await server.request("PUT", `/api/v1/teams/${team.id}`, {
      token: owner.token,
      body: {},
    });
    expect(empty.status).toBe(400);
    const smuggled = await server.request("PUT", `/api/v1/teams/${team.id}`, {
      token: owner.token,
      body: { teamId: "other", name: "x" },
    });
    expect(smuggled.status).toBe(400);
    expect(smuggled.body.errors).toEqual([{ path: "teamId", message: "Unknown field" }]);
  });
});

describe("GET /api/v1/teams (administrators)", () => {
  test("an admin opt-in token pages through every team with limit and cursor", async () => {
    const owner = await server.user();
    for (let i = 0; i < 3; i++) await createTeam(`Paged ${i}`, owner.token);
    const total = (await server.db.selectFrom("teams").select("id").execute()).length;

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const reply = await server.request(
        "GET",
        `/api/v1/teams?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.count).toBe(total);
      expect(reply.body.teams.length).toBeLessThanOrEqual(2);
      seen.push(...reply.body.teams.map((t: { id: string }) => t.id));
      cursor = reply.body.meta.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  test("non-admins and admins without opt-in get 403; a bad limit is 400", async () => {
    const user = await server.user();
    const admin = await server.user({ admin: true });
    expect((await server.request("GET", "/api/v1/teams", { token: user.token })).status).toBe(403);
    expect((await server.request("GET", "/api/v1/teams", { token: admin.token })).status).toBe(403);
    for (const query of ["limit=0", "limit=100000", "limit=abc", "unknown=1"]) {
      const reply = await server.request("GET", `/api/v1/teams?${query}`);
      expect(reply.status, query).toBe(400);
    }
  });
});

describe("GET /api/v1/user and /api/v1/user/teams", () => {
  test("the token's owner and their teams, each with the role and member count", async () => {
    const carol = await server.user({ username: "carol" });
    const own = await createTeam("Carol's", carol.token);
    const owner = await server.user();
    const joined = await createTeam("Joined", owner.token);
    await server.db
      .insertInto("team_members")
      .values({ team_id: joined.id, user_id: carol.id, role: 10 })
      .execute();

    const me = await server.request("GET", "/api/v1/user", { token: carol.token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: carol.id, username: "carol", admin: false });

    const teams = await server.request("GET", "/api/v1/user/teams", { token: carol.token });
    expect(teams.body.count).toBe(2);
    expect(teams.body.teams).toEqual([
      expect.objectContaining({ id: own.id, role: 50, memberCount: 1 }),
      expect.objectContaining({ id: joined.id, role: 10, memberCount: 2 }),
    ]);
  });
});
