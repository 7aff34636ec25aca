import { auditEntries } from "@flowplane/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function createToken(token: string, body: Record<string, unknown>) {
  const reply = await server.request("POST", "/api/v1/user/tokens", { token, body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as { id: string; token: string; teams: { id: string }[]; expiresAt: string };
}

async function createTeam(token: string, name: string) {
  const reply = await server.request("POST", "/api/v1/teams", { token, body: { name } });
  expect(reply.status).toBe(200);
  return reply.body as { id: string };
}

/** Moves a token's expiry into the past, as time would. */
const expire = (id: string) =>
  server.db
    .updateTable("access_tokens")
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where("id", "=", id)
    .execute();

const tokenExists = async (id: string) =>
  (await server.db
    .selectFrom("access_tokens")
    .select("id")
    .where("id", "=", id)
    .executeTakeFirst()) !== undefined;

const status = async (token: string, method: string, path: string, body?: unknown) =>
  (await server.request(method, path, { token, body })).status;

describe("creating and listing tokens", () => {
  test("the value is in the create reply only; lists never show it; it works at once", async () => {
    const user = await server.user();
    const created = await createToken(user.token, { name: "ci" });
    expect(created.token).toMatch(/^fpp_[0-9A-Za-z]{36}$/);
    expect(created).toMatchObject({ name: "ci", readOnly: false, adminOptIn: false, teams: [] });

    const list = await server.request("GET", "/api/v1/user/tokens", { token: created.token });
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(2);
    expect(list.text).not.toContain(created.token);
    for (const token of list.body.tokens) expect(token).not.toHaveProperty("token");
    const me = await server.request("GET", "/api/v1/user", { token: created.token });
    expect(me.body.id).toBe(user.id);
  });

  test("no token value is ever stored in the database or written to the logs", async () => {
    const user = await server.user();
    const created = await createToken(user.token, { name: "secret-check" });
    await server.request("GET", "/api/v1/user", { token: created.token });
    await server.request("GET", "/api/v1/nothing", { token: created.token });
    await server.app.sweepTokens();
    for (const table of [
      "users",
      "teams",
      "team_members",
      "access_tokens",
      "access_token_teams",
      "audit_log",
    ]) {
      const { rows } = await sql<{
        dump: string;
      }>`select ${sql.table(table)}::text as dump from ${sql.table(table)}`.execute(server.db);
      for (const row of rows) {
        expect(row.dump).not.toContain(created.token);
        expect(row.dump).not.toContain(server.adminToken);
        expect(row.dump).not.toContain(created.token.slice(4, 34));
      }
    }
    const logs = server.logs.join("");
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(created.token);
    expect(logs).not.toContain(server.adminToken);
  });

  test("bad input is 400 with the fields at fault", async () => {
    const user = await server.user();
    for (const [body, field] of [
      [{}, "name"],
      [{ name: " " }, "name"],
      [{ name: "x", readOnly: "yes" }, "readOnly"],
      [{ name: "x", expiresAt: "tomorrow" }, "expiresAt"],
      [{ name: "x", expiresAt: Date.now() - 1000 }, "expiresAt"],
      [{ name: "x", teamIds: "abc" }, "teamIds"],
      [{ name: "x", scope: "all" }, "scope"],
    ] as const) {
      const reply = await server.request("POST", "/api/v1/user/tokens", {
        token: user.token,
        body,
      });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
  });

  test("expiresAt takes epoch milliseconds (as FlowFuse) or ISO-8601", async () => {
    const user = await server.user();
    const at = Date.now() + 3_600_000;
    const ms = await createToken(user.token, { name: "ms", expiresAt: at });
    const iso = await createToken(user.token, {
      name: "iso",
      expiresAt: new Date(at).toISOString(),
    });
    expect(ms.expiresAt).toBe(new Date(at).toISOString());
    expect(iso.expiresAt).toBe(new Date(at).toISOString());
  });

  test("teamIds must name teams the caller belongs to (400 invalid_team)", async () => {
    const owner = await server.user();
    const foreign = await createTeam(owner.token, "Not Yours");
    const user = await server.user();
    const reply = await server.request("POST", "/api/v1/user/tokens", {
      token: user.token,
      body: { name: "x", teamIds: [foreign.id] },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("invalid_team");
  });

  test("only administrators may create admin opt-in tokens (403)", async () => {
    const user = await server.user();
    const reply = await server.request("POST", "/api/v1/user/tokens", {
      token: user.token,
      body: { name: "x", adminOptIn: true },
    });
    expect(reply.status).toBe(403);
    const admin = await server.request("POST", "/api/v1/user/tokens", {
      body: { name: "admin", adminOptIn: true },
    });
    expect(admin.status).toBe(200);
    expect(admin.body.adminOptIn).toBe(true);
  });

  test("creating tokens writes user.pat.created with the scope and without the value", async () => {
    const user = await server.user();
    const created = await createToken(user.token, { name: "audited", readOnly: true });
    const entry = (await auditEntries(server.db, { event: "user.pat.created" })).find(
      (e) => (e.body as { token: { id: string } }).token.id === created.id,
    );
    expect(entry).toMatchObject({
      entity_type: "user",
      entity_id: user.id,
      actor_id: user.id,
      token_id: user.tokenId,
      source: "api",
      body: { token: { id: created.id, name: "audited", readOnly: true } },
    });
    expect(JSON.stringify(entry)).not.toContain(created.token);
  });
});

describe("scopes", () => {
  test("a read-only token reads but every write is 403", async () => {
    const owner = await server.user();
    const team = await createTeam(owner.token, "RO Team");
    const ro = await createToken(owner.token, { name: "ro", readOnly: true });
    expect(await status(ro.token, "GET", "/api/v1/user")).toBe(200);
    expect(await status(ro.token, "GET", `/api/v1/teams/${team.id}`)).toBe(200);
    expect(await status(ro.token, "GET", "/api/v1/user/tokens")).toBe(200);
    expect(await status(ro.token, "POST", "/api/v1/teams", { name: "x" })).toBe(403);
    expect(await status(ro.token, "PUT", `/api/v1/teams/${team.id}`, { name: "x" })).toBe(403);
    expect(await status(ro.token, "POST", "/api/v1/user/tokens", { name: "x" })).toBe(403);
    expect(await status(ro.token, "DELETE", `/api/v1/user/tokens/${ro.id}`)).toBe(403);
  });

  test("a team-restricted token sees only its teams; others behave as for a non-member", async () => {
    const owner = await server.user();
    const allowed = await createTeam(owner.token, "Allowed");
    const other = await createTeam(owner.token, "Other");
    const restricted = await createToken(owner.token, { name: "r", teamIds: [allowed.id] });
    expect(restricted.teams).toEqual([{ id: allowed.id, name: "Allowed" }]);

    expect(await status(restricted.token, "GET", `/api/v1/teams/${allowed.id}`)).toBe(200);
    expect(await status(restricted.token, "GET", `/api/v1/teams/${other.id}`)).toBe(404);
    expect(await status(restricted.token, "PUT", `/api/v1/teams/${other.id}`, { name: "x" })).toBe(
      404,
    );
    const teams = await server.request("GET", "/api/v1/user/teams", { token: restricted.token });
    expect(teams.body.teams.map((t: { id: string }) => t.id)).toEqual([allowed.id]);
  });

  test("a team-restricted token cannot delete the account or change its username, email or password (403)", async () => {
    const person = await server.userWithPassword({ email: "reach@example.com" });
    const sid = await server.signIn(person.username, person.password);
    const full = (
      await server.asSession(sid, "POST", "/api/v1/user/tokens", { body: { name: "full" } })
    ).body.token as string;
    const allowed = await createTeam(full, "Reachable");
    const unreachable = await createTeam(full, "Unreachable");
    const restricted = await createToken(full, { name: "r", teamIds: [allowed.id] });
    const refusals = [
      ["DELETE", "/api/v1/user", undefined],
      ["PUT", "/api/v1/user", { username: "taken-over" }],
      ["PUT", "/api/v1/user", { email: "attacker@example.com" }],
      [
        "PUT",
        "/api/v1/user/change_password",
        { old_password: person.password, password: "a new long phrase" },
      ],
    ] as const;
    for (const [method, path, body] of refusals) {
      const reply = await server.request(method, path, { token: restricted.token, body });
      expect(reply.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(403);
      expect(reply.body.error).toContain("restricted to teams");
    }
    // Nothing changed: the account, its email and the team the token could not even read.
    const me = await server.request("GET", "/api/v1/user", { token: full });
    expect(me.body).toMatchObject({ username: person.username, email: "reach@example.com" });
    expect(await status(full, "GET", `/api/v1/teams/${unreachable.id}`)).toBe(200);
    // It still reads the account, and works in its team; an unrestricted token may change it.
    expect(await status(restricted.token, "GET", "/api/v1/user")).toBe(200);
    expect(
      await status(restricted.token, "PUT", `/api/v1/teams/${allowed.id}`, { name: "Renamed" }),
    ).toBe(200);
    expect(await status(full, "PUT", "/api/v1/user", { name: "Still mine" })).toBe(200);
  });

  test("an administrator's token without admin opt-in has no admin rights", async () => {
    const admin = await server.user({ admin: true });
    expect(await status(admin.token, "GET", "/api/v1/teams")).toBe(403);
    const optIn = await server.user({ admin: true, scope: { adminOptIn: true } });
    expect(await status(optIn.token, "GET", "/api/v1/teams")).toBe(200);
  });

  test("an administrator's opt-in token restricted to teams reaches no administration (403)", async () => {
    const owner = await server.user();
    const theirs = await createTeam(owner.token, "Someone Else's");
    const admin = await server.user({ admin: true, scope: { adminOptIn: true } });
    const mine = await createTeam(admin.token, "Admin's Own");
    // Made before such tokens were refused (or narrowed into one): the scope is in the database.
    const restricted = await server.user({
      admin: true,
      scope: { adminOptIn: true, teamIds: [mine.id, theirs.id] },
    });
    await server.db
      .updateTable("access_tokens")
      .set({ user_id: admin.id })
      .where("id", "=", restricted.tokenId)
      .execute();
    const refusals = [
      ["GET", "/api/v1/teams", undefined],
      ["GET", "/api/v1/users", undefined],
      [
        "POST",
        "/api/v1/users",
        {
          username: "made-by-a-team-token",
          name: "x",
          email: "m@example.com",
          password: "a long enough phrase",
        },
      ],
      ["GET", `/api/v1/users/${owner.id}`, undefined],
      ["GET", "/api/v1/admin/audit-log", undefined],
    ] as const;
    for (const [method, path, body] of refusals) {
      const reply = await server.request(method, path, { token: restricted.token, body });
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error).toContain("restricted to teams");
    }
    // A team of its list that the admin is not a member of is not reachable as administrator.
    expect(await status(restricted.token, "GET", `/api/v1/teams/${theirs.id}`)).toBe(404);
    // Its own team and its own account still work; the unrestricted opt-in token administers.
    expect(await status(restricted.token, "GET", `/api/v1/teams/${mine.id}`)).toBe(200);
    expect(await status(restricted.token, "GET", "/api/v1/user")).toBe(200);
    const unrestricted = await server.request("POST", "/api/v1/user/tokens", {
      token: admin.token,
      body: { name: "whole platform", adminOptIn: true },
    });
    expect(unrestricted.status).toBe(200);
    expect(await status(unrestricted.body.token, "GET", "/api/v1/teams")).toBe(200);
    expect(await status(unrestricted.body.token, "GET", `/api/v1/teams/${theirs.id}`)).toBe(200);
  });

  test("admin opt-in and a team restriction together are refused (400 naming adminOptIn)", async () => {
    const admin = await server.user({ admin: true, scope: { adminOptIn: true } });
    const team = await createTeam(admin.token, "Opt-in Team");
    const both = await server.request("POST", "/api/v1/user/tokens", {
      token: admin.token,
      body: { name: "both", adminOptIn: true, teamIds: [team.id] },
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe("invalid_request");
    expect(JSON.stringify(both.body)).toContain("adminOptIn");
    const optIn = await createToken(admin.token, { name: "opt-in", adminOptIn: true });
    const narrowed = await server.request("PUT", `/api/v1/user/tokens/${optIn.id}`, {
      token: admin.token,
      body: { teamIds: [team.id] },
    });
    expect(narrowed.status).toBe(400);
    const after = await server.request("GET", "/api/v1/user/tokens", { token: admin.token });
    expect(after.body.tokens.find((t: { id: string }) => t.id === optIn.id)).toMatchObject({
      adminOptIn: true,
      teams: [],
    });
  });

  test("a token never exceeds its owner: opt-in on a non-admin's token grants nothing", async () => {
    const user = await server.user({ scope: { adminOptIn: true } });
    expect(await status(user.token, "GET", "/api/v1/teams")).toBe(403);
  });
});

describe("the token hierarchy", () => {
  test("a token cannot create a token broader than itself (403); absent fields inherit", async () => {
    const owner = await server.user();
    const a = await createTeam(owner.token, "H-A");
    const b = await createTeam(owner.token, "H-B");
    const expiry = Date.now() + 3_600_000;
    const parent = await createToken(owner.token, {
      name: "parent",
      teamIds: [a.id],
      expiresAt: expiry,
    });
    for (const body of [
      { name: "all teams", teamIds: [] },
      { name: "other team", teamIds: [b.id] },
      { name: "later", expiresAt: expiry + 1000 },
    ]) {
      const reply = await server.request("POST", "/api/v1/user/tokens", {
        token: parent.token,
        body,
      });
      expect(reply.status, body.name).toBe(403);
      expect(reply.body.code).toBe("forbidden");
    }
    const child = await createToken(parent.token, { name: "child" });
    expect(child.teams).toEqual([{ id: a.id, name: "H-A" }]);
    expect(child.expiresAt).toBe(new Date(expiry).toISOString());
    const narrower = await createToken(parent.token, { name: "ro child", readOnly: true });
    expect(narrower.teams).toHaveLength(1);
  });

  test("revoking a token is 204, refuses it from the next request, and revokes its descendants", async () => {
    const user = await server.user();
    const parent = await createToken(user.token, { name: "parent" });
    const child = await createToken(parent.token, { name: "child" });
    const grandchild = await createToken(child.token, { name: "grandchild" });
    const sibling = await createToken(user.token, { name: "sibling" });
    for (const t of [parent, child, grandchild, sibling]) {
      expect(await status(t.token, "GET", "/api/v1/user")).toBe(200);
    }
    const revoke = await server.request("DELETE", `/api/v1/user/tokens/${parent.id}`, {
      token: user.token,
    });
    expect(revoke.status).toBe(204);
    expect(revoke.text).toBe("");
    for (const t of [parent, child, grandchild]) {
      const reply = await server.request("GET", "/api/v1/user", { token: t.token });
      expect(reply.status).toBe(401);
      expect(reply.body.code).toBe("unauthorized");
    }
    expect(await status(sibling.token, "GET", "/api/v1/user")).toBe(200);
    expect(await status(user.token, "DELETE", `/api/v1/user/tokens/${parent.id}`)).toBe(404);

    const entry = (await auditEntries(server.db, { event: "user.pat.deleted" })).find(
      (e) => (e.body as { token: { id: string } }).token.id === parent.id,
    );
    expect(
      (entry?.body as { revokedWithIt: { id: string }[] }).revokedWithIt.map((t) => t.id),
    ).toEqual([child.id, grandchild.id]);
  });

  test("a token may revoke itself but not a broader token; another user's token is 404", async () => {
    const user = await server.user();
    const broad = await createToken(user.token, { name: "broad" });
    const narrow = await createToken(user.token, {
      name: "narrow",
      readOnly: false,
      expiresAt: Date.now() + 60_000,
    });
    expect(await status(narrow.token, "DELETE", `/api/v1/user/tokens/${broad.id}`)).toBe(403);
    expect(await status(broad.token, "GET", "/api/v1/user")).toBe(200);
    expect(await status(narrow.token, "DELETE", `/api/v1/user/tokens/${narrow.id}`)).toBe(204);
    expect(await status(narrow.token, "GET", "/api/v1/user")).toBe(401);

    const stranger = await server.user();
    expect(await status(stranger.token, "DELETE", `/api/v1/user/tokens/${broad.id}`)).toBe(404);
    expect(
      await status(stranger.token, "PUT", `/api/v1/user/tokens/${broad.id}`, { name: "mine" }),
    ).toBe(404);
  });

  test("updating a token changes its scope, and narrows the tokens created with it", async () => {
    const owner = await server.user();
    const a = await createTeam(owner.token, "U-A");
    const b = await createTeam(owner.token, "U-B");
    const parent = await createToken(owner.token, { name: "parent" });
    const child = await createToken(parent.token, { name: "child", teamIds: [a.id, b.id] });

    const updated = await server.request("PUT", `/api/v1/user/tokens/${parent.id}`, {
      token: owner.token,
      body: { name: "renamed", teamIds: [a.id], readOnly: true },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "renamed", readOnly: true, teams: [{ id: a.id }] });

    const list = await server.request("GET", "/api/v1/user/tokens", { token: owner.token });
    const childNow = list.body.tokens.find((t: { id: string }) => t.id === child.id);
    expect(childNow).toMatchObject({ readOnly: true, teams: [{ id: a.id, name: "U-A" }] });
    expect(await status(child.token, "GET", `/api/v1/teams/${b.id}`)).toBe(404);
    expect(await status(child.token, "PUT", `/api/v1/teams/${a.id}`, { name: "x" })).toBe(403);

    const entry = (await auditEntries(server.db, { event: "user.pat.updated" })).find(
      (e) => (e.body as { token: { id: string } }).token.id === parent.id,
    );
    expect(entry?.body).toMatchObject({
      before: { name: "parent", readOnly: false, teamIds: null },
      after: { name: "renamed", readOnly: true, teamIds: [a.id] },
    });
  });

  test("an update may not make a token broader than the token that created it", async () => {
    const owner = await server.user();
    const parent = await createToken(owner.token, { name: "p", expiresAt: Date.now() + 60_000 });
    const child = await createToken(parent.token, { name: "c" });
    const reply = await server.request("PUT", `/api/v1/user/tokens/${child.id}`, {
      token: owner.token,
      body: { expiresAt: null },
    });
    expect(reply.status).toBe(403);
    const cleared = await server.request("PUT", `/api/v1/user/tokens/${parent.id}`, {
      token: owner.token,
      body: { expiresAt: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.expiresAt).toBeNull();
  });
});

describe("expiry and use", () => {
  test("an expired token is refused at once and deleted", async () => {
    const user = await server.user();
    const created = await createToken(user.token, {
      name: "short",
      expiresAt: Date.now() + 60_000,
    });
    await expire(created.id);
    const reply = await server.request("GET", "/api/v1/user", { token: created.token });
    expect(reply.status).toBe(401);
    expect(await tokenExists(created.id)).toBe(false);
  });

  test("the periodic sweep deletes expired tokens nobody used", async () => {
    const user = await server.user();
    const created = await createToken(user.token, {
      name: "swept",
      expiresAt: Date.now() + 60_000,
    });
    await expire(created.id);
    await server.app.sweepTokens();
    expect(await tokenExists(created.id)).toBe(false);
  });

  test("lastUsedAt is recorded without a write per request, and shown in the list", async () => {
    const user = await server.user();
    const created = await createToken(user.token, { name: "used" });
    const before = Date.now();
    await server.request("GET", "/api/v1/user", { token: created.token });
    const unflushed = await server.db
      .selectFrom("access_tokens")
      .select("last_used_at")
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(unflushed.last_used_at).toBeNull();
    await server.app.sweepTokens();
    const list = await server.request("GET", "/api/v1/user/tokens", { token: user.token });
    const used = list.body.tokens.find((t: { id: string }) => t.id === created.id);
    expect(Date.parse(used.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
  });
});
