// Team members: who may list them, change a role and remove one (or leave); a team never loses its
// last owner, even to concurrent requests; a removed member's tokens and sessions lose the team at
// once.
import { Role } from "@flowplane/contract";
import { addMember, auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Reply, startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

let counter = 0;

/** A team owned by a new user, with one new user in each role below owner. */
async function teamWithEveryRole() {
  const owner = await server.user();
  const created = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: `Crew ${++counter}` },
  });
  expect(created.status, created.text).toBe(200);
  const team = created.body as { id: string; name: string };
  const role = (level: number) => server.user({ teams: [{ id: team.id, role: level }] });
  return {
    team,
    owner,
    member: await role(Role.member),
    viewer: await role(Role.viewer),
    dashboard: await role(Role.dashboard),
    outsider: await server.user(),
  };
}

const membersPath = (teamId: string) => `/api/v1/teams/${teamId}/members`;
const memberPath = (teamId: string, userId: string) => `${membersPath(teamId)}/${userId}`;

/** `member` made a second owner of the team by its owner. */
const makeSecondOwner = (teamId: string, owner: { token: string }, memberId: string) =>
  server.request("PUT", memberPath(teamId, memberId), {
    token: owner.token,
    body: { role: Role.owner },
  });

/** A refusal to leave the team without an owner: `status` invalid_request, the owner still one. */
async function expectOnlyOwnerKept(
  refused: Reply,
  status: number,
  teamId: string,
  ownerId: string,
) {
  expect(refused.status).toBe(status);
  expect(refused.body.code).toBe("invalid_request");
  expect(refused.body.error).toMatch(/only owner/);
  expect(await server.roleOf(teamId, ownerId)).toBe(50);
}

describe("GET /api/v1/teams/{teamId}/members", () => {
  test("viewers and up list the members with their roles; no email is shown", async () => {
    const { team, owner, member, viewer, dashboard } = await teamWithEveryRole();
    for (const caller of [owner, member, viewer]) {
      const reply = await server.request("GET", membersPath(team.id), { token: caller.token });
      expect(reply.status).toBe(200);
      expect(reply.body.count).toBe(4);
      expect(reply.body.meta).toEqual({});
      const roles = Object.fromEntries(
        reply.body.members.map((m: { id: string; role: number }) => [m.id, m.role]),
      );
      expect(roles).toEqual({
        [owner.id]: 50,
        [member.id]: 30,
        [viewer.id]: 10,
        [dashboard.id]: 5,
      });
      expect(reply.body.members[0]).toEqual({
        id: expect.any(String),
        username: expect.any(String),
        name: "Test User",
        admin: false,
        suspended: false,
        createdAt: expect.any(String),
        role: expect.any(Number),
      });
    }
  });

  test("a dashboard user gets 403; a non-member and an unknown team 404", async () => {
    const { team, dashboard, outsider } = await teamWithEveryRole();
    expect(
      (await server.request("GET", membersPath(team.id), { token: dashboard.token })).status,
    ).toBe(403);
    expect(
      (await server.request("GET", membersPath(team.id), { token: outsider.token })).status,
    ).toBe(404);
    expect(
      (await server.request("GET", membersPath("AAAAAAAAAAAA"), { token: outsider.token })).status,
    ).toBe(404);
  });

  test("a read-only token lists them (a read)", async () => {
    const { team, owner } = await teamWithEveryRole();
    const readOnly = await server.user({
      teams: [{ id: team.id, role: Role.viewer }],
      scope: { readOnly: true },
    });
    expect(
      (await server.request("GET", membersPath(team.id), { token: readOnly.token })).status,
    ).toBe(200);
    expect(owner).toBeDefined();
  });
});

describe("PUT /api/v1/teams/{teamId}/members/{userId}", () => {
  test("an owner changes a member's role, and team.user.role-changed is logged", async () => {
    const { team, owner, viewer } = await teamWithEveryRole();
    const reply = await server.request("PUT", memberPath(team.id, viewer.id), {
      token: owner.token,
      body: { role: Role.member },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await server.roleOf(team.id, viewer.id)).toBe(30);

    const entry = (await auditEntries(server.db, { event: "team.user.role-changed" })).find(
      (e) => e.team_id === team.id,
    );
    expect(entry).toMatchObject({
      entity_type: "team",
      entity_id: team.id,
      actor_id: owner.id,
      token_id: owner.tokenId,
      source: "api",
      body: { user: { id: viewer.id }, role: { old: 10, new: 30 } },
    });
  });

  test("members, viewers and dashboard users get 403, non-members 404, a read-only owner token 403", async () => {
    const { team, owner, member, viewer, dashboard, outsider } = await teamWithEveryRole();
    const readOnly = await server.user({
      teams: [{ id: team.id, role: Role.owner }],
      scope: { readOnly: true },
    });
    const cases: [string, string, number][] = [
      ["member", member.token, 403],
      ["viewer", viewer.token, 403],
      ["dashboard", dashboard.token, 403],
      ["outsider", outsider.token, 404],
      ["read-only owner token", readOnly.token, 403],
    ];
    for (const [who, token, status] of cases) {
      // Even raising themselves: the role is the owners' to give.
      const self = who === "outsider" ? owner.id : viewer.id;
      const reply = await server.request("PUT", memberPath(team.id, self), {
        token,
        body: { role: Role.owner },
      });
      expect(reply.status, who).toBe(status);
    }
    expect(await server.roleOf(team.id, viewer.id)).toBe(10);
    expect(await server.roleOf(team.id, owner.id)).toBe(50);
  });

  test("a role other than 5, 10, 30 or 50 is 400 invalid_team_role; a non-number 400 invalid_request", async () => {
    const { team, owner, member } = await teamWithEveryRole();
    for (const role of [0, 1, 20, 99, 51]) {
      const reply = await server.request("PUT", memberPath(team.id, member.id), {
        token: owner.token,
        body: { role },
      });
      expect(reply.status, String(role)).toBe(400);
      expect(reply.body.code).toBe("invalid_team_role");
    }
    for (const body of [{ role: "owner" }, {}, { role: 30, extra: 1 }]) {
      const reply = await server.request("PUT", memberPath(team.id, member.id), {
        token: owner.token,
        body,
      });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
    expect(await server.roleOf(team.id, member.id)).toBe(30);
  });

  test("an unknown user, or a user who is not a member, is 404", async () => {
    const { team, owner, outsider } = await teamWithEveryRole();
    for (const userId of [outsider.id, "AAAAAAAAAAAA"]) {
      const reply = await server.request("PUT", memberPath(team.id, userId), {
        token: owner.token,
        body: { role: Role.member },
      });
      expect(reply.status, userId).toBe(404);
    }
    expect(await server.roleOf(team.id, outsider.id)).toBeUndefined();
  });

  test("the only owner cannot be demoted (403 invalid_request); with a second owner they can", async () => {
    const { team, owner, member } = await teamWithEveryRole();
    const refused = await server.request("PUT", memberPath(team.id, owner.id), {
      token: owner.token,
      body: { role: Role.member },
    });
    await expectOnlyOwnerKept(refused, 403, team.id, owner.id);

    await makeSecondOwner(team.id, owner, member.id);
    const stepDown = await server.request("PUT", memberPath(team.id, owner.id), {
      token: owner.token,
      body: { role: Role.viewer },
    });
    expect(stepDown.status).toBe(200);
    expect(await server.roleOf(team.id, owner.id)).toBe(10);
  });

  test("two owners demoting each other at once: one succeeds, the team keeps an owner", async () => {
    for (let round = 0; round < 5; round++) {
      const { team, owner, member } = await teamWithEveryRole();
      await makeSecondOwner(team.id, owner, member.id);
      const [a, b] = await Promise.all([
        server.request("PUT", memberPath(team.id, member.id), {
          token: owner.token,
          body: { role: Role.member },
        }),
        server.request("PUT", memberPath(team.id, owner.id), {
          token: member.token,
          body: { role: Role.member },
        }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 403]);
      const owners = await server.db
        .selectFrom("team_members")
        .select("user_id")
        .where("team_id", "=", team.id)
        .where("role", "=", Role.owner)
        .execute();
      expect(owners).toHaveLength(1);
    }
  });
});

describe("DELETE /api/v1/teams/{teamId}/members/{userId}", () => {
  test("an owner removes a member, and team.user.removed is logged with the member and role", async () => {
    const { team, owner, member } = await teamWithEveryRole();
    const reply = await server.request("DELETE", memberPath(team.id, member.id), {
      token: owner.token,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await server.roleOf(team.id, member.id)).toBeUndefined();
    const entry = (await auditEntries(server.db, { event: "team.user.removed" })).find(
      (e) => e.team_id === team.id,
    );
    expect(entry).toMatchObject({
      entity_type: "team",
      entity_id: team.id,
      actor_id: owner.id,
      body: { user: { id: member.id }, role: 30 },
    });
  });

  test("any member may leave; members below owner cannot remove others (403)", async () => {
    const { team, member, viewer, dashboard } = await teamWithEveryRole();
    for (const [caller, target] of [
      [member, viewer],
      [viewer, dashboard],
      [dashboard, member],
    ] as const) {
      const reply = await server.request("DELETE", memberPath(team.id, target.id), {
        token: caller.token,
      });
      expect(reply.status).toBe(403);
    }
    for (const leaver of [dashboard, viewer, member]) {
      const reply = await server.request("DELETE", memberPath(team.id, leaver.id), {
        token: leaver.token,
      });
      expect(reply.status, reply.text).toBe(200);
      expect(await server.roleOf(team.id, leaver.id)).toBeUndefined();
    }
    const left = await auditEntries(server.db, { event: "team.user.removed" });
    expect(
      left.filter((e) => e.team_id === team.id && e.actor_id === e.body.user?.id),
    ).toHaveLength(3);
  });

  test("a non-member gets 404, even naming themselves; an unknown or non-member userId 404", async () => {
    const { team, owner, outsider } = await teamWithEveryRole();
    expect(
      (await server.request("DELETE", memberPath(team.id, outsider.id), { token: outsider.token }))
        .status,
    ).toBe(404);
    for (const userId of [outsider.id, "AAAAAAAAAAAA"]) {
      const reply = await server.request("DELETE", memberPath(team.id, userId), {
        token: owner.token,
      });
      expect(reply.status, userId).toBe(404);
    }
  });

  test("a read-only token cannot leave or remove (403)", async () => {
    const { team } = await teamWithEveryRole();
    const readOnly = await server.user({
      teams: [{ id: team.id, role: Role.owner }],
      scope: { readOnly: true },
    });
    const reply = await server.request("DELETE", memberPath(team.id, readOnly.id), {
      token: readOnly.token,
    });
    expect(reply.status).toBe(403);
    expect(await server.roleOf(team.id, readOnly.id)).toBe(50);
  });

  test("the only owner cannot be removed or leave (400 invalid_request); with a second owner they can", async () => {
    const { team, owner, member } = await teamWithEveryRole();
    const refused = await server.request("DELETE", memberPath(team.id, owner.id), {
      token: owner.token,
    });
    await expectOnlyOwnerKept(refused, 400, team.id, owner.id);

    await makeSecondOwner(team.id, owner, member.id);
    const left = await server.request("DELETE", memberPath(team.id, owner.id), {
      token: owner.token,
    });
    expect(left.status).toBe(200);
    // The new owner is now the only one.
    const last = await server.request("DELETE", memberPath(team.id, member.id), {
      token: member.token,
    });
    expect(last.status).toBe(400);
  });

  test("two owners leaving at once: one leaves, the other stays the owner", async () => {
    for (let round = 0; round < 5; round++) {
      const { team, owner, member } = await teamWithEveryRole();
      await makeSecondOwner(team.id, owner, member.id);
      const replies = await Promise.all(
        [owner, member].map((leaver) =>
          server.request("DELETE", memberPath(team.id, leaver.id), { token: leaver.token }),
        ),
      );
      expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
      const owners = await server.db
        .selectFrom("team_members")
        .select("user_id")
        .where("team_id", "=", team.id)
        .where("role", "=", Role.owner)
        .execute();
      expect(owners).toHaveLength(1);
    }
  });

  test("a removed member's token and session get 404 for the team on their next request", async () => {
    const { team, owner } = await teamWithEveryRole();
    const person = await server.userWithPassword();
    const sid = await server.signIn(person.username, person.password);
    await addMember(server.db, { teamId: team.id, userId: person.id, role: Role.member });
    const made = await server.asSession(sid, "POST", "/api/v1/user/tokens", {
      body: { name: "cli" },
    });
    expect(made.status, made.text).toBe(200);
    const token = made.body.token as string;

    const teamPath = `/api/v1/teams/${team.id}`;
    expect((await server.request("GET", teamPath, { token })).status).toBe(200);
    expect((await server.asSession(sid, "GET", teamPath)).status).toBe(200);
    expect((await server.asSession(sid, "GET", membersPath(team.id))).status).toBe(200);

    const removed = await server.request("DELETE", memberPath(team.id, person.id), {
      token: owner.token,
    });
    expect(removed.status).toBe(200);

    expect((await server.request("GET", teamPath, { token })).status).toBe(404);
    expect((await server.request("GET", membersPath(team.id), { token })).status).toBe(404);
    expect((await server.asSession(sid, "GET", teamPath)).status).toBe(404);
    expect((await server.asSession(sid, "GET", membersPath(team.id))).status).toBe(404);
    const mine = await server.asSession(sid, "GET", "/api/v1/user/teams");
    expect(mine.body.teams.map((t: { id: string }) => t.id)).not.toContain(team.id);
  });

  test("a removed member's tokens no longer name the team, and it stops being their default team", async () => {
    const { team, owner, member } = await teamWithEveryRole();
    const restricted = await server.request("POST", "/api/v1/user/tokens", {
      token: member.token,
      body: { name: "restricted", teamIds: [team.id] },
    });
    expect(restricted.status, restricted.text).toBe(200);
    await server.request("PUT", "/api/v1/user", {
      token: member.token,
      body: { defaultTeam: team.id },
    });

    await server.request("DELETE", memberPath(team.id, member.id), { token: owner.token });

    const named = await server.db
      .selectFrom("access_token_teams")
      .select("token_id")
      .where("token_id", "=", restricted.body.id)
      .execute();
    expect(named).toEqual([]);
    const me = await server.request("GET", "/api/v1/user", { token: member.token });
    expect(me.body).not.toHaveProperty("defaultTeam");
    // Back in the team, the restricted token still reaches nothing.
    await addMember(server.db, { teamId: team.id, userId: member.id, role: Role.member });
    const again = await server.request("GET", `/api/v1/teams/${team.id}`, {
      token: restricted.body.token,
    });
    expect(again.status).toBe(404);
  });

  test("an administrator's opt-in token manages members of a team it is not in", async () => {
    const { team, member } = await teamWithEveryRole();
    const listed = await server.request("GET", membersPath(team.id));
    expect(listed.status).toBe(200);
    const changed = await server.request("PUT", memberPath(team.id, member.id), {
      body: { role: Role.viewer },
    });
    expect(changed.status).toBe(200);
    const removed = await server.request("DELETE", memberPath(team.id, member.id));
    expect(removed.status).toBe(200);
  });
});
