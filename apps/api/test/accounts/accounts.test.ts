// Users as administrators manage them and as each manages their own account; sign-in sessions,
// their cookie and their end; suspension and deletion taking effect at once.
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const ORIGIN = "http://127.0.0.1:3000";
let counter = 0;

/** The administrator's token without admin opt-in: ordinary rights. */
async function plainToken() {
  const reply = await server.request("POST", "/api/v1/user/tokens", { body: { name: "plain" } });
  return reply.body.token as string;
}

describe("users, as administrators manage them", () => {
  test("an administrator creates, lists, finds, changes and deletes users", async () => {
    const user = await server.userWithPassword({ email: "Ada@Example.com" });
    const read = await server.request("GET", `/api/v1/users/${user.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: user.id,
      username: user.username,
      email: "Ada@Example.com",
      admin: false,
      suspended: false,
    });
    expect(read.body).not.toHaveProperty("password");
    expect(read.text).not.toContain("scrypt");

    const found = await server.request("GET", `/api/v1/users?query=ada%40example`);
    expect(found.body.users.map((u: any) => u.id)).toEqual([user.id]);
    expect(found.body.count).toBe(1);

    const renamed = await server.request("PUT", `/api/v1/users/${user.id}`, {
      body: { name: "Ada Lovelace" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("Ada Lovelace");

    const deleted = await server.request("DELETE", `/api/v1/users/${user.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: "okay" });
    expect((await server.request("GET", `/api/v1/users/${user.id}`)).status).toBe(404);
  });

  test("the list pages with a cursor and counts every match", async () => {
    for (let i = 0; i < 3; i++) await server.userWithPassword();
    const first = await server.request("GET", "/api/v1/users?limit=2");
    expect(first.body.users).toHaveLength(2);
    expect(first.body.count).toBeGreaterThanOrEqual(4);
    const second = await server.request(
      "GET",
      `/api/v1/users?limit=2&cursor=${first.body.meta.next_cursor}`,
    );
    const ids = [...first.body.users, ...second.body.users].map((u: any) => u.id);
    expect(new Set(ids).size).toBe(4);
  });

  test("taken or reserved usernames are 400 invalid_username; a taken email 400 invalid_email", async () => {
    const address = `taken${counter}@example.com`;
    const user = await server.userWithPassword({ email: address });
    const body = { name: "X", password: "a long secret phrase" };
    for (const username of [user.username, "admin", "root"]) {
      const reply = await server.request("POST", "/api/v1/users", { body: { ...body, username } });
      expect(reply.status, username).toBe(400);
      expect(reply.body.code).toBe("invalid_username");
    }
    const email = await server.request("POST", "/api/v1/users", {
      body: { ...body, username: `fresh${counter}`, email: address.toUpperCase() },
    });
    expect(email.status).toBe(400);
    expect(email.body.code).toBe("invalid_email");
  });

  test("a password too short or made of the user's own names is refused, naming the field", async () => {
    for (const password of ["short", "grace-hopper-1906", "GRACE HOPPER rules"]) {
      const reply = await server.request("POST", "/api/v1/users", {
        body: { username: "grace-hopper", name: "Grace Hopper", password },
      });
      expect(reply.status, password).toBe(400);
      expect(reply.body.errors).toEqual([expect.objectContaining({ path: "password" })]);
    }
  });

  test("non-administrators, and an administrator's token without admin opt-in, get 403", async () => {
    const user = await server.userWithPassword();
    const member = await server.user();
    const plain = await plainToken();
    for (const token of [member.token, plain]) {
      for (const [method, path, body] of [
        ["GET", "/api/v1/users"],
        ["POST", "/api/v1/users", { username: "nope", name: "N", password: "long enough pw" }],
        ["GET", `/api/v1/users/${user.id}`],
        ["PUT", `/api/v1/users/${user.id}`, { name: "Hacked" }],
        ["DELETE", `/api/v1/users/${user.id}`],
        ["GET", `/api/v1/users/${user.id}/teams`],
      ] as const) {
        const reply = await server.request(method, path, { token, body });
        expect(reply.status, `${method} ${path}`).toBe(403);
      }
    }
    expect((await server.request("GET", `/api/v1/users/${user.id}`)).body.name).not.toBe("Hacked");
  });

  test("a user reads and changes their own record by id, but not the administrators' fields", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    expect((await server.asSession(sid, "GET", `/api/v1/users/${user.id}`)).status).toBe(200);
    expect((await server.asSession(sid, "GET", `/api/v1/users/${user.id}/teams`)).body.count).toBe(
      0,
    );
    const own = await server.asSession(sid, "PUT", `/api/v1/users/${user.id}`, {
      body: { name: "Me" },
    });
    expect(own.status).toBe(200);
    for (const field of ["admin", "suspended", "password_expired"]) {
      const reply = await server.asSession(sid, "PUT", `/api/v1/users/${user.id}`, {
        body: { [field]: field !== "suspended" },
      });
      expect(reply.status, field).toBe(400);
      expect(reply.body.errors).toEqual([{ path: field, message: "Administrators only" }]);
    }
    expect((await server.request("GET", `/api/v1/users/${user.id}`)).body.admin).toBe(false);
  });

  test("the last active administrator cannot be deleted, suspended or demoted", async () => {
    const me = (await server.request("GET", "/api/v1/user")).body;
    const others = (await server.request("GET", "/api/v1/users?limit=1000")).body.users.filter(
      (u: any) => u.admin && !u.suspended && u.id !== me.id,
    );
    for (const other of others) {
      await server.request("PUT", `/api/v1/users/${other.id}`, { body: { admin: false } });
    }
    for (const [method, body] of [
      ["PUT", { suspended: true }],
      ["PUT", { admin: false }],
      ["DELETE", undefined],
    ] as const) {
      const reply = await server.request(method, `/api/v1/users/${me.id}`, { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error).toMatch(/last platform administrator/);
    }
    // Their own account too: DELETE /user declares its 400.
    const own = await server.request("DELETE", "/api/v1/user");
    expect(own.status).toBe(400);
    expect(own.body.error).toMatch(/last platform administrator/);
    // With a second administrator, the first may step down.
    const second = await server.userWithPassword({ admin: true });
    const demoted = await server.request("PUT", `/api/v1/users/${me.id}`, {
      body: { admin: false },
    });
    expect(demoted.status).toBe(200);
    // (Restore: the second administrator promotes the first again.)
    const secondSid = await server.signIn(second.username, second.password);
    const restored = await server.asSession(secondSid, "PUT", `/api/v1/users/${me.id}`, {
      body: { admin: true },
    });
    expect(restored.status).toBe(200);
  });
});

describe("the current user", () => {
  test("PUT /user changes the profile; the default team must be one of the user's", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    const team = await server.asSession(sid, "POST", "/api/v1/teams", { body: { name: "Mine" } });
    const other = await server.request("POST", "/api/v1/teams", { body: { name: "Not mine" } });

    const changed = await server.asSession(sid, "PUT", "/api/v1/user", {
      body: { name: "New Name", email: `me${counter}@example.com`, defaultTeam: team.body.id },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: "New Name", defaultTeam: team.body.id });

    const foreign = await server.asSession(sid, "PUT", "/api/v1/user", {
      body: { defaultTeam: other.body.id },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe("invalid_team");

    const taken = await server.asSession(sid, "PUT", "/api/v1/user", {
      body: { username: "admin" },
    });
    expect(taken.body.code).toBe("invalid_username");
  });

  test("changing the password: the old one must be right, the new one strong; other sessions end", async () => {
    const user = await server.userWithPassword();
    const here = await server.signIn(user.username, user.password);
    const elsewhere = await server.signIn(user.username, user.password);

    const wrong = await server.asSession(here, "PUT", "/api/v1/user/change_password", {
      body: { old_password: "not it at all", password: "a brand new secret" },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("password_change_failed");
    const weak = await server.asSession(here, "PUT", "/api/v1/user/change_password", {
      body: { old_password: user.password, password: "short" },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe("password_change_failed_too_weak");

    const changed = await server.asSession(here, "PUT", "/api/v1/user/change_password", {
      body: { old_password: user.password, password: "a brand new secret" },
    });
    expect(changed.status).toBe(200);
    expect((await server.asSession(here, "GET", "/api/v1/user")).status).toBe(200);
    expect((await server.asSession(elsewhere, "GET", "/api/v1/user")).status).toBe(401);
    const old = await server.request("POST", "/account/login", {
      token: null,
      body: { username: user.username, password: user.password },
    });
    expect(old.status).toBe(401);
    await server.signIn(user.username, "a brand new secret");
  });

  test("DELETE /user deletes the account, its tokens and sessions, and the teams it owned alone", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    const alone = await server.asSession(sid, "POST", "/api/v1/teams", { body: { name: "Alone" } });
    const token = await server.asSession(sid, "POST", "/api/v1/user/tokens", {
      body: { name: "t" },
    });

    const deleted = await server.asSession(sid, "DELETE", "/api/v1/user");
    expect(deleted.status).toBe(200);
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);
    expect((await server.request("GET", "/api/v1/user", { token: token.body.token })).status).toBe(
      401,
    );
    expect((await server.request("GET", `/api/v1/teams/${alone.body.id}`)).status).toBe(404);
  });

  test("a user who alone owns a team with other members cannot be deleted until that changes", async () => {
    const user = await server.userWithPassword();
    const team = await server.request("POST", "/api/v1/teams", { body: { name: "Shared" } });
    // The administrator made the team; make the user its only owner, with the administrator a member.
    await server.db
      .updateTable("team_members")
      .set({ role: Role.member })
      .where("team_id", "=", team.body.id)
      .execute();
    await server.db
      .insertInto("team_members")
      .values({ team_id: team.body.id, user_id: user.id, role: Role.owner })
      .execute();
    const refused = await server.request("DELETE", `/api/v1/users/${user.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/Shared/);
    expect((await server.request("GET", `/api/v1/users/${user.id}`)).status).toBe(200);
  });
});

describe("signing in", () => {
  test("sign-in sets an HttpOnly, SameSite=Lax session cookie that authenticates /api/v1", async () => {
    const user = await server.userWithPassword();
    const reply = await server.request("POST", "/account/login", {
      token: null,
      body: { username: user.username.toUpperCase(), password: user.password },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    const cookie = reply.headers.getSetCookie().find((c) => c.startsWith("sid="))!;
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).not.toMatch(/; Secure/i);
    const sid = cookie.split(";")[0]!.slice(4);
    const me = await server.asSession(sid, "GET", "/api/v1/user");
    expect(me.status).toBe(200);
    expect(me.body.username).toBe(user.username);
  });

  describe("behind https", () => {
    let https: TestServer;
    beforeAll(async () => {
      https = await startServer({ baseUrl: "https://flowplane.example" });
    });
    afterAll(() => https.close());

    test("the cookie is Secure", async () => {
      const created = await https.request("POST", "/api/v1/users", {
        body: { username: "secure-user", name: "S", password: "a long secret phrase" },
      });
      expect(created.status).toBe(200);
      const reply = await https.request("POST", "/account/login", {
        token: null,
        body: { username: "secure-user", password: "a long secret phrase" },
      });
      expect(reply.headers.getSetCookie()[0]).toMatch(/; Secure/i);
    });
  });

  test(
    "an email signs in too; an unknown user and a wrong password get the same 401 in about the same time",
    {
      // Six scrypt hashes of 32 MiB each (the user, the sign-in, four refusals): a fraction of a
      // second each on a quiet machine, several seconds each on one saturated by other work.
      timeout: 120_000,
    },
    async () => {
      const email = `sign${++counter}@example.com`;
      const user = await server.userWithPassword({ email });
      await server.signIn(email.toUpperCase(), user.password);

      const timed = async (username: string) => {
        const started = performance.now();
        const reply = await server.request("POST", "/account/login", {
          token: null,
          body: { username, password: "wrong but long" },
        });
        return { reply, ms: performance.now() - started };
      };
      // Two of each, alternating, and the faster of each pair: a busy machine (other test files run
      // Node-RED meanwhile) slows single requests, never makes one faster.
      const samples: Awaited<ReturnType<typeof timed>>[] = [];
      for (let i = 0; i < 2; i++)
        samples.push(await timed("nobody-at-all"), await timed(user.username));
      const fastest = (parity: number) =>
        samples.filter((_, i) => i % 2 === parity).sort((x, y) => x.ms - y.ms)[0]!;
      const unknown = fastest(0);
      const wrong = fastest(1);
      for (const { reply } of samples) {
        expect(reply.status).toBe(401);
        expect(reply.body).toMatchObject({
          code: "unauthorized",
          error: "Wrong username or password",
        });
        expect(reply.headers.getSetCookie()).toEqual([]);
      }
      // Both pay for one password hash: neither is an order of magnitude faster.
      expect(unknown.ms).toBeGreaterThan(wrong.ms / 4);
      expect(wrong.ms).toBeGreaterThan(unknown.ms / 4);
    },
  );

  test("a suspended user is refused with 403 user_suspended, only with the right password", async () => {
    const user = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { suspended: true } });
    const right = await server.request("POST", "/account/login", {
      token: null,
      body: { username: user.username, password: user.password },
    });
    expect(right.status).toBe(403);
    expect(right.body.code).toBe("user_suspended");
    const wrong = await server.request("POST", "/account/login", {
      token: null,
      body: { username: user.username, password: "not the password" },
    });
    expect(wrong.status).toBe(401);
  });

  test("sign-out ends the session on the server", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    const out = await server.asSession(sid, "POST", "/account/logout");
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/^sid=;/);
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);
  });

  test("writes made with the cookie must not come from another origin; bearer tokens need none", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    for (const origin of ["https://evil.example", "http://127.0.0.1:3001", "null"]) {
      const reply = await server.asSession(sid, "POST", "/api/v1/teams", {
        body: { name: "Forged" },
        origin,
      });
      expect(reply.status, String(origin)).toBe(403);
      expect(reply.body.code).toBe("csrf_failed");
    }
    // Reads need no Origin; a page of ours may write.
    expect(
      (await server.asSession(sid, "GET", "/api/v1/user/teams", { origin: null })).status,
    ).toBe(200);
    expect(
      (await server.asSession(sid, "POST", "/api/v1/teams", { body: { name: "Real" } })).status,
    ).toBe(200);
    const teams = await server.asSession(sid, "GET", "/api/v1/user/teams");
    expect(teams.body.teams.map((t: any) => t.name)).toEqual(["Real"]);
    // Signing in from another site is refused too; a script sending no Origin may sign in.
    const forged = await server.request("POST", "/account/login", {
      token: null,
      body: { username: user.username, password: user.password },
      headers: { origin: "https://evil.example" },
    });
    expect(forged.status).toBe(403);
    const bearer = await server.request("POST", "/api/v1/teams", {
      body: { name: "By token" },
      headers: { origin: "https://evil.example" },
    });
    expect(bearer.status).toBe(200);
  });

  // Time is moved in the database, not waited for: a busy machine can take longer than any short
  // lifetime between two requests, and a test must not depend on how fast it runs.
  test("a session ends at its maximum age, and after its idle timeout", async () => {
    const user = await server.userWithPassword();
    // The user's one session (signing in again below follows the first one's end).
    const sessionOf = () =>
      server.db
        .selectFrom("sessions")
        .select(["id", "expires_at"])
        .where("user_id", "=", user.id)
        .executeTakeFirst();

    const before = Date.now();
    const sid = await server.signIn(user.username, user.password);
    const after = Date.now();
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(200);
    const session = (await sessionOf())!;
    // Seven days from sign-in (SESSION_MAX_AGE_HOURS' default), whatever the activity.
    const week = 7 * 24 * 3600_000;
    expect(session.expires_at.getTime()).toBeGreaterThanOrEqual(before + week - 1_000);
    expect(session.expires_at.getTime()).toBeLessThanOrEqual(after + week + 1_000);
    await server.db
      .updateTable("sessions")
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where("id", "=", session.id)
      .execute();
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);
    expect(await sessionOf()).toBeUndefined();

    // Unused for longer than SESSION_IDLE_HOURS' default (32 h): ended, though not yet expired.
    const again = await server.signIn(user.username, user.password);
    expect((await server.asSession(again, "GET", "/api/v1/user")).status).toBe(200);
    const idle = (await sessionOf())!;
    await server.db
      .updateTable("sessions")
      .set({ last_seen_at: new Date(Date.now() - 33 * 3600_000) })
      .where("id", "=", idle.id)
      .execute();
    expect((await server.asSession(again, "GET", "/api/v1/user")).status).toBe(401);
    expect(await sessionOf()).toBeUndefined();
  });

  test("a token created in a browser does not end with the session", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    const token = await server.asSession(sid, "POST", "/api/v1/user/tokens", {
      body: { name: "kept" },
    });
    expect(token.status).toBe(200);
    expect(token.body.expiresAt).toBeNull();
    await server.asSession(sid, "POST", "/account/logout");
    expect((await server.request("GET", "/api/v1/user", { token: token.body.token })).status).toBe(
      200,
    );
  });

  test("an expired password allows only reading yourself and changing it", async () => {
    const user = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { password_expired: true } });
    const sid = await server.signIn(user.username, user.password);
    const me = await server.asSession(sid, "GET", "/api/v1/user");
    expect(me.body.password_expired).toBe(true);
    const blocked = await server.asSession(sid, "GET", "/api/v1/user/teams");
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe("password_expired");
    const changed = await server.asSession(sid, "PUT", "/api/v1/user/change_password", {
      body: { old_password: user.password, password: "my own new secret" },
    });
    expect(changed.status).toBe(200);
    expect((await server.asSession(sid, "GET", "/api/v1/user/teams")).status).toBe(200);
    expect((await server.asSession(sid, "GET", "/api/v1/user")).body).not.toHaveProperty(
      "password_expired",
    );
  });
});

describe("suspension and deletion take effect at once", () => {
  test("suspending a user fails their tokens and sessions on the next request; reinstating restores the tokens", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    const token = (
      await server.asSession(sid, "POST", "/api/v1/user/tokens", { body: { name: "t" } })
    ).body.token as string;
    expect((await server.request("GET", "/api/v1/user", { token })).status).toBe(200);

    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { suspended: true } });
    expect((await server.request("GET", "/api/v1/user", { token })).status).toBe(401);
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);

    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { suspended: false } });
    expect((await server.request("GET", "/api/v1/user", { token })).status).toBe(200);
    // The session was ended by the suspension, not merely paused.
    expect((await server.asSession(sid, "GET", "/api/v1/user")).status).toBe(401);
  });
});

describe("settings", () => {
  test("GET /settings tells any signed-in caller the platform's version", async () => {
    const member = await server.user();
    const reply = await server.request("GET", "/api/v1/settings", { token: member.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ version: expect.any(String), base_url: ORIGIN });
  });
});

describe("audit", () => {
  test("account changes are logged with FlowFuse's event names and never a password", async () => {
    const user = await server.userWithPassword();
    const sid = await server.signIn(user.username, user.password);
    await server.asSession(sid, "PUT", "/api/v1/user", { body: { name: "Audited" } });
    await server.asSession(sid, "PUT", "/api/v1/user/change_password", {
      body: { old_password: user.password, password: "another long secret" },
    });
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { name: "By admin" } });
    await server.asSession(sid, "POST", "/account/logout");
    await server.request("DELETE", `/api/v1/users/${user.id}`);

    const entries = (await auditEntries(server.db)).filter((e) => e.entity_id === user.id);
    expect(entries.map((e) => e.event)).toEqual([
      "users.created-user",
      "account.login",
      "user.updated-user",
      "user.updated-password",
      "users.updated-user",
      "account.logout",
      "users.deleted-user",
    ]);
    const login = entries.find((e) => e.event === "account.login")!;
    expect(login.source).toBeNull();
    expect(entries.find((e) => e.event === "users.updated-user")!.source).toBe("api");
    const text = JSON.stringify(entries);
    expect(text).not.toContain(user.password);
    expect(text).not.toContain("another long secret");
    expect(text).not.toContain("scrypt");
  });
});
