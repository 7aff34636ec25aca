// Invitations: owners invite by username or email, list, resend and revoke; the invited user lists,
// accepts (joining with the invited role) or rejects. Expired invitations are gone; the team type's
// member limit counts members and pending invitations.
import { Role } from "@flowplane/contract";
import { addMember, auditEntries, newId } from "@flowplane/db";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const DAY_MS = 24 * 60 * 60 * 1000;
let counter = 0;

type Person = { id: string; token: string; tokenId: string; username: string; email?: string };

/** A user with a token, and their username. */
async function person(options: { email?: string } = {}): Promise<Person> {
  const username = `guest-${++counter}-${Math.random().toString(36).slice(2, 6)}`;
  const user = await server.user({ username });
  if (options.email) {
    await server.db
      .updateTable("users")
      .set({ email: options.email })
      .where("id", "=", user.id)
      .execute();
  }
  return { ...user, username, email: options.email };
}

async function teamOf(owner: Person) {
  const created = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: `Guests ${++counter}` },
  });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string; name: string; slug: string };
}

const invitationsPath = (teamId: string) => `/api/v1/teams/${teamId}/invitations`;

function invite(teamId: string, owner: Person, user: string, role?: number) {
  return server.request("POST", invitationsPath(teamId), {
    token: owner.token,
    body: role === undefined ? { user } : { user, role },
  });
}

async function teamInvitations(teamId: string, owner: Person) {
  const reply = await server.request("GET", invitationsPath(teamId), { token: owner.token });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.count).toBe(reply.body.invitations.length);
  return reply.body.invitations as any[];
}

async function myInvitations(user: Person) {
  const reply = await server.request("GET", "/api/v1/user/invitations", { token: user.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.invitations as any[];
}

/** A team owned by a new user, with a member, a viewer and an outsider. */
async function setting() {
  const owner = await person();
  const team = await teamOf(owner);
  const member = await person();
  await addMember(server.db, { teamId: team.id, userId: member.id, role: Role.member });
  const viewer = await person();
  await addMember(server.db, { teamId: team.id, userId: viewer.id, role: Role.viewer });
  return { owner, team, member, viewer, outsider: await person() };
}

describe("inviting", () => {
  test("an owner invites a user by username; both see the invitation, with its shape", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    const before = Date.now();
    const reply = await invite(team.id, owner, guest.username, Role.viewer);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });

    const [listed] = await teamInvitations(team.id, owner);
    expect(listed).toEqual({
      id: expect.any(String),
      role: 10,
      createdAt: expect.any(String),
      sentAt: expect.any(String),
      expiresAt: expect.any(String),
      team: {
        id: team.id,
        name: team.name,
        slug: team.slug,
        links: { self: `http://127.0.0.1:3000/api/v1/teams/${team.id}` },
      },
      invitor: expect.objectContaining({ id: owner.id, username: owner.username }),
      // Until they accept, the team sees only the name it invited.
      invitee: { username: guest.username },
    });
    const expires = Date.parse(listed.expiresAt) - before;
    expect(expires).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect(expires).toBeLessThan(7 * DAY_MS + 60_000);
    // The invitee sees themselves.
    expect(await myInvitations(guest)).toEqual([
      {
        ...listed,
        invitee: {
          id: guest.id,
          username: guest.username,
          name: "Test User",
          admin: false,
          suspended: false,
          createdAt: expect.any(String),
        },
      },
    ]);

    const entry = (await auditEntries(server.db, { event: "team.user.invited" })).find(
      (e) => e.team_id === team.id,
    );
    expect(entry).toMatchObject({
      actor_id: owner.id,
      body: { invitation: { id: listed.id, role: 10 }, user: { id: guest.id } },
    });
  });

  test("the role defaults to member; a username or email matches in any case", async () => {
    const { owner, team } = await setting();
    const byName = await person();
    const email = `Mixed.${counter}@Example.com`;
    const byEmail = await person({ email });
    const reply = await invite(
      team.id,
      owner,
      ` ${byName.username.toUpperCase()} , ${email.toLowerCase().replace("example", "EXAMPLE")} `,
    );
    expect(reply.body).toEqual({ status: "okay" });
    const listed = await teamInvitations(team.id, owner);
    expect(listed.map((i) => [i.invitee.username ?? i.invitee.email, i.role]).sort()).toEqual(
      [
        [byName.username, 30],
        [email.toLowerCase().replace("example", "EXAMPLE"), 30],
      ].sort(),
    );
    expect((await myInvitations(byName)).map((i) => i.invitee.id)).toEqual([byName.id]);
    expect((await myInvitations(byEmail)).map((i) => i.invitee.id)).toEqual([byEmail.id]);
  });

  test("an email answers the same whether an account has it or not, and an invitee shows nothing before accepting", async () => {
    const { owner, team } = await setting();
    const known = `known.${counter}@example.com`;
    const holder = await person({ email: known });
    const unknown = `new.hire.${counter}@example.com`;
    const forKnown = await invite(team.id, owner, known, Role.member);
    const forUnknown = await invite(team.id, owner, unknown, Role.member);
    expect([forKnown.status, forUnknown.status]).toEqual([200, 200]);
    expect(forKnown.body).toEqual({ status: "okay" });
    expect(forUnknown.body).toEqual(forKnown.body);
    // Listed alike: the address as typed, nothing of the account behind it.
    const listed = await teamInvitations(team.id, owner);
    const shapeOf = (invitation: any) => ({
      ...invitation,
      id: "",
      createdAt: "",
      sentAt: "",
      expiresAt: "",
    });
    const byEmail = (email: string) => listed.find((i) => i.invitee.email === email);
    expect(byEmail(known)!.invitee).toEqual({ external: true, email: known });
    expect(shapeOf(byEmail(unknown))).toEqual({
      ...shapeOf(byEmail(known)),
      invitee: { external: true, email: unknown },
    });
    expect(JSON.stringify(listed)).not.toContain(holder.username);
    // So is the team's audit log.
    const entries = (await auditEntries(server.db, { event: "team.user.invited" })).filter(
      (e) => e.team_id === team.id,
    );
    expect(
      entries.map((e) => e.body.user).sort((a: any, b: any) => a.email.localeCompare(b.email)),
    ).toEqual([{ email: known }, { email: unknown }]);
    // Again: already invited, for both.
    const again = await invite(team.id, owner, `${known},${unknown}`);
    expect(again.body.errors).toEqual([
      { path: "user", message: `${known}: Already invited` },
      { path: "user", message: `${unknown}: Already invited` },
    ]);
    // The account that has the address sees it and may accept; someone who puts the other address
    // on their profile later finds nothing to accept (emails are not verified).
    const [mine] = await myInvitations(holder);
    expect(mine.invitee).toMatchObject({ id: holder.id, username: holder.username });
    const claimant = await person({ email: unknown });
    expect(await myInvitations(claimant)).toEqual([]);
    const accepted = await server.request("PATCH", `/api/v1/user/invitations/${mine.id}`, {
      token: holder.token,
    });
    expect(accepted.status).toBe(200);
    expect(await server.roleOf(team.id, holder.id)).toBe(Role.member);
  });

  test("an owner inviting a member's or an invitee's email learns no more than for an unknown one; an administrator is told", async () => {
    const { owner, team } = await setting();
    const memberEmail = `member.${counter}@example.com`;
    const member = await person({ email: memberEmail });
    await addMember(server.db, { teamId: team.id, userId: member.id, role: Role.member });
    const inviteeEmail = `invitee.${counter}@example.com`;
    const invitee = await person({ email: inviteeEmail });
    expect((await invite(team.id, owner, invitee.username)).status).toBe(200);
    const unknown = `nobody.${counter}@example.com`;

    for (const address of [memberEmail, inviteeEmail, unknown]) {
      const reply = await invite(team.id, owner, address);
      expect(reply.status, address).toBe(200);
      expect(reply.body, address).toEqual({ status: "okay" });
    }
    // Listed alike, the address as typed; and asked again, each is "already invited".
    const listed = await teamInvitations(team.id, owner);
    for (const address of [memberEmail, inviteeEmail, unknown]) {
      expect(listed.find((i) => i.invitee.email === address)?.invitee).toEqual({
        external: true,
        email: address,
      });
    }
    const again = await invite(team.id, owner, `${memberEmail},${unknown}`);
    expect(again.body.errors).toEqual([
      { path: "user", message: `${memberEmail}: Already invited` },
      { path: "user", message: `${unknown}: Already invited` },
    ]);
    // Nothing reached the member; the invitee has the one invitation sent to their username.
    expect(await myInvitations(member)).toEqual([]);
    expect((await myInvitations(invitee)).length).toBe(1);
    expect(await server.roleOf(team.id, member.id)).toBe(Role.member);
    // An account invited through its address, then named by username: invited, nothing new, and
    // nothing that ties the username to the address.
    const addressedEmail = `addressed.${counter}@example.com`;
    const addressed = await person({ email: addressedEmail });
    expect((await invite(team.id, owner, addressedEmail)).body).toEqual({ status: "okay" });
    expect((await invite(team.id, owner, addressed.username)).body).toEqual({ status: "okay" });
    expect((await myInvitations(addressed)).length).toBe(1);
    expect(JSON.stringify(await teamInvitations(team.id, owner))).not.toContain(addressed.username);
    // By username the owner sees who is a member anyway, and is told.
    const byName = await invite(team.id, owner, member.username);
    expect(byName.body.errors).toEqual([
      { path: "user", message: `${member.username}: Already a member of the team` },
    ]);
    // An administrator acting as one sees every user's email, and is told what it is.
    const admin = await server.user({ admin: true, scope: { adminOptIn: true } });
    const asAdmin = await server.request("POST", invitationsPath(team.id), {
      token: admin.token,
      body: { user: memberEmail },
    });
    expect(asAdmin.status).toBe(400);
    expect(asAdmin.body.errors).toEqual([
      { path: "user", message: `${memberEmail}: Already a member of the team` },
    ]);
  });

  test("some invitees failing: 200 invitation_failed with a reason for each, the others invited", async () => {
    const { owner, team, member } = await setting();
    const invited = await person();
    const fresh = await person();
    expect((await invite(team.id, owner, invited.username)).status).toBe(200);

    const reply = await invite(
      team.id,
      owner,
      [fresh.username, member.username, invited.username, "nobody-by-this-name", "not valid!"].join(
        ",",
      ),
    );
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      code: "invitation_failed",
      error: {
        [member.username]: "Already a member of the team",
        [invited.username]: "Already invited",
        "nobody-by-this-name": "No user has this username",
        "not valid!": "Not a valid username or email",
      },
    });
    const listed = await teamInvitations(team.id, owner);
    expect(listed.map((i) => i.invitee.username).sort()).toEqual(
      [invited.username, fresh.username].sort(),
    );
  });

  test("every invitee failing is 400 invitation_failed, with the reasons, and nothing is made", async () => {
    const { owner, team, member } = await setting();
    const reply = await invite(team.id, owner, `${member.username},ghost-user`);
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("invitation_failed");
    expect(reply.body.errors).toEqual([
      { path: "user", message: `${member.username}: Already a member of the team` },
      { path: "user", message: "ghost-user: No user has this username" },
    ]);
    // Inviting yourself: you are a member already.
    const self = await invite(team.id, owner, owner.username);
    expect(self.status).toBe(400);
    expect(await teamInvitations(team.id, owner)).toEqual([]);
  });

  test("more than 5 invitees after removing repeats is 429 too_many_invites; repeats do not count", async () => {
    const { owner, team } = await setting();
    const six = Array.from({ length: 6 }, (_, i) => `someone${i}@example.com`).join(",");
    const tooMany = await invite(team.id, owner, six);
    expect(tooMany.status).toBe(429);
    expect(tooMany.body.code).toBe("too_many_invites");
    expect(await teamInvitations(team.id, owner)).toEqual([]);

    const a = await person({ email: `a.${counter}@example.com` });
    const b = await person({ email: `b.${counter}@example.com` });
    const repeated = [
      a.email!,
      a.email!.toUpperCase(),
      ` ${a.username}`,
      b.email!,
      "",
      b.email!,
      b.email!,
      a.email!,
    ].join(",");
    expect((await invite(team.id, owner, repeated)).body).toEqual({ status: "okay" });
    expect(await teamInvitations(team.id, owner)).toHaveLength(2);
  });

  test("a role other than 5, 10, 30 or 50 is 400 invalid_team_role; no invitees 400 invalid_request", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    for (const role of [0, 99, 40]) {
      const reply = await invite(team.id, owner, guest.username, role);
      expect(reply.status, String(role)).toBe(400);
      expect(reply.body.code).toBe("invalid_team_role");
    }
    for (const user of ["", " , ,"]) {
      const reply = await invite(team.id, owner, user);
      expect(reply.status, JSON.stringify(user)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
    const owners = await invite(team.id, owner, guest.username, Role.owner);
    expect(owners.status).toBe(200);
  });
});

describe("who may manage a team's invitations", () => {
  test("members and viewers get 403, non-members 404, a read-only owner token 403", async () => {
    const { owner, team, member, viewer, outsider } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await teamInvitations(team.id, owner);
    const readOnly = await server.user({
      teams: [{ id: team.id, role: Role.owner }],
      scope: { readOnly: true },
    });
    const one = `${invitationsPath(team.id)}/${invitation.id}`;
    const operations: [string, string, unknown][] = [
      ["GET", invitationsPath(team.id), undefined],
      ["POST", invitationsPath(team.id), { user: outsider.username }],
      ["POST", one, undefined],
      ["DELETE", one, undefined],
    ];
    for (const [who, token, status] of [
      ["member", member.token, 403],
      ["viewer", viewer.token, 403],
      ["outsider", outsider.token, 404],
      ["read-only owner token", readOnly.token, 403],
    ] as const) {
      for (const [method, path, body] of operations) {
        const reply = await server.request(method, path, { token, body });
        expect(reply.status, `${who}: ${method} ${path}`).toBe(status);
      }
    }
    const after = await teamInvitations(team.id, owner);
    expect(after).toEqual([invitation]);
  });

  test("an invitation of another team is 404 through this team's path", async () => {
    const { owner, team } = await setting();
    const other = await setting();
    const guest = await person();
    await invite(other.team.id, other.owner, guest.username);
    const [foreign] = await teamInvitations(other.team.id, other.owner);
    for (const method of ["POST", "DELETE"]) {
      const reply = await server.request(method, `${invitationsPath(team.id)}/${foreign.id}`, {
        token: owner.token,
      });
      expect(reply.status, method).toBe(404);
    }
    expect(await teamInvitations(other.team.id, other.owner)).toHaveLength(1);
  });
});

describe("resending and revoking", () => {
  test("resending sets sentAt to now and the expiry 7 days later", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await teamInvitations(team.id, owner);
    await server.db
      .updateTable("invitations")
      .set({
        sent_at: new Date(Date.now() - 6 * DAY_MS),
        expires_at: new Date(Date.now() + DAY_MS),
      })
      .where("id", "=", invitation.id)
      .execute();

    const before = Date.now();
    const reply = await server.request("POST", `${invitationsPath(team.id)}/${invitation.id}`, {
      token: owner.token,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ id: invitation.id, invitee: { username: guest.username } });
    expect(Date.parse(reply.body.sentAt)).toBeGreaterThan(before - 60_000);
    const expires = Date.parse(reply.body.expiresAt) - before;
    expect(expires).toBeGreaterThan(7 * DAY_MS - 60_000);
    expect(expires).toBeLessThan(7 * DAY_MS + 60_000);
    expect(
      (await auditEntries(server.db, { event: "team.user.invite-resent" })).some(
        (e) => e.team_id === team.id && e.body.invitation?.id === invitation.id,
      ),
    ).toBe(true);
  });

  test("revoking deletes it: gone for the invitee, who cannot accept it (404)", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await teamInvitations(team.id, owner);
    const one = `${invitationsPath(team.id)}/${invitation.id}`;
    const revoked = await server.request("DELETE", one, { token: owner.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ status: "okay" });
    expect(await myInvitations(guest)).toEqual([]);
    const accept = await server.request("PATCH", `/api/v1/user/invitations/${invitation.id}`, {
      token: guest.token,
    });
    expect(accept.status).toBe(404);
    expect((await server.request("DELETE", one, { token: owner.token })).status).toBe(404);
    expect(
      (await auditEntries(server.db, { event: "team.user.uninvited" })).some(
        (e) => e.team_id === team.id && e.body.user?.id === guest.id,
      ),
    ).toBe(true);
  });
});

describe("accepting and rejecting", () => {
  test("accepting makes the caller a member with the invited role, in one step", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username, Role.viewer);
    const [invitation] = await myInvitations(guest);
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: guest.token })).status,
    ).toBe(404);

    const reply = await server.request("PATCH", `/api/v1/user/invitations/${invitation.id}`, {
      token: guest.token,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await server.roleOf(team.id, guest.id)).toBe(10);
    expect(
      (await server.request("GET", `/api/v1/teams/${team.id}`, { token: guest.token })).status,
    ).toBe(200);
    expect(await myInvitations(guest)).toEqual([]);
    expect(await teamInvitations(team.id, owner)).toEqual([]);

    const team_ = await auditEntries(server.db, { event: "team.user.invite.accepted" });
    expect(team_.find((e) => e.team_id === team.id)).toMatchObject({
      actor_id: guest.id,
      body: { invitation: { id: invitation.id, role: 10 }, user: { id: guest.id } },
    });
    const user = await auditEntries(server.db, { event: "user.invitation.accepted" });
    expect(user.find((e) => e.entity_id === guest.id)).toMatchObject({
      entity_type: "user",
      team_id: null,
    });
  });

  test("another user's invitation is 404 to accept or reject; a read-only token 403", async () => {
    const { owner, team, outsider } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await myInvitations(guest);
    expect(await myInvitations(outsider)).toEqual([]);
    for (const method of ["PATCH", "DELETE"]) {
      const reply = await server.request(method, `/api/v1/user/invitations/${invitation.id}`, {
        token: outsider.token,
      });
      expect(reply.status, method).toBe(404);
    }
    const made = await server.request("POST", "/api/v1/user/tokens", {
      token: guest.token,
      body: { name: "read-only", readOnly: true },
    });
    const readOnly = { token: made.body.token as string };
    expect(
      (await server.request("GET", "/api/v1/user/invitations", { token: readOnly.token })).body
        .count,
    ).toBe(1);
    for (const method of ["PATCH", "DELETE"]) {
      const reply = await server.request(method, `/api/v1/user/invitations/${invitation.id}`, {
        token: readOnly.token,
      });
      expect(reply.status, method).toBe(403);
    }
    expect(await server.roleOf(team.id, outsider.id)).toBeUndefined();
    expect(await myInvitations(guest)).toHaveLength(1);
  });

  test("rejecting deletes the invitation without joining; both logs record it", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await myInvitations(guest);
    const reply = await server.request("DELETE", `/api/v1/user/invitations/${invitation.id}`, {
      token: guest.token,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "okay" });
    expect(await server.roleOf(team.id, guest.id)).toBeUndefined();
    expect(await teamInvitations(team.id, owner)).toEqual([]);
    expect(
      (await auditEntries(server.db, { event: "team.user.invite.rejected" })).some(
        (e) => e.team_id === team.id && e.actor_id === guest.id,
      ),
    ).toBe(true);
    expect(
      (await auditEntries(server.db, { event: "user.invitation.deleted" })).some(
        (e) => e.entity_id === guest.id,
      ),
    ).toBe(true);
  });

  test("an accepted invitation cannot be used twice", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await myInvitations(guest);
    const path = `/api/v1/user/invitations/${invitation.id}`;
    expect((await server.request("PATCH", path, { token: guest.token })).status).toBe(200);
    expect((await server.request("PATCH", path, { token: guest.token })).status).toBe(404);
  });
});

describe("expiry", () => {
  test("an expired invitation is not listed, cannot be accepted or resent, and does not block a new one", async () => {
    const { owner, team } = await setting();
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const [invitation] = await teamInvitations(team.id, owner);
    await server.db
      .updateTable("invitations")
      .set({ expires_at: sql<Date>`now() - interval '1 minute'` })
      .where("id", "=", invitation.id)
      .execute();

    expect(await teamInvitations(team.id, owner)).toEqual([]);
    expect(await myInvitations(guest)).toEqual([]);
    for (const [method, path, token] of [
      ["PATCH", `/api/v1/user/invitations/${invitation.id}`, guest.token],
      ["DELETE", `/api/v1/user/invitations/${invitation.id}`, guest.token],
      ["POST", `${invitationsPath(team.id)}/${invitation.id}`, owner.token],
      ["DELETE", `${invitationsPath(team.id)}/${invitation.id}`, owner.token],
    ] as const) {
      expect((await server.request(method, path, { token })).status, `${method} ${path}`).toBe(404);
    }
    expect(await server.roleOf(team.id, guest.id)).toBeUndefined();

    expect((await invite(team.id, owner, guest.username)).body).toEqual({ status: "okay" });
    const renewed = await teamInvitations(team.id, owner);
    expect(renewed).toHaveLength(1);
    expect(renewed[0].id).not.toBe(invitation.id);
  });
});

describe("the team type's member limit", () => {
  /** A team whose type allows `limit` members, owned by a new user. */
  async function limitedTeam(limit: number) {
    const owner = await person();
    const team = await teamOf(owner);
    const typeId = newId();
    await server.db
      .insertInto("team_types")
      .values({
        id: typeId,
        name: `Small ${typeId}`,
        properties: JSON.stringify({ users: { limit } }),
      })
      .execute();
    await server.db
      .updateTable("teams")
      .set({ type_id: typeId })
      .where("id", "=", team.id)
      .execute();
    return { owner, team };
  }

  test("members and pending invitations together stay within it: 400 member_limit_reached past it", async () => {
    const { owner, team } = await limitedTeam(2);
    const [a, b] = [await person(), await person()];
    const both = await invite(team.id, owner, `${a.username},${b.username}`);
    expect(both.status).toBe(400);
    expect(both.body.code).toBe("member_limit_reached");
    expect(await teamInvitations(team.id, owner)).toEqual([]);

    expect((await invite(team.id, owner, a.username)).body).toEqual({ status: "okay" });
    const full = await invite(team.id, owner, b.username);
    expect(full.status).toBe(400);
    expect(full.body.code).toBe("member_limit_reached");

    const [invitation] = await myInvitations(a);
    const accepted = await server.request("PATCH", `/api/v1/user/invitations/${invitation.id}`, {
      token: a.token,
    });
    expect(accepted.status).toBe(200);
    expect((await invite(team.id, owner, b.username)).body.code).toBe("member_limit_reached");

    // Someone leaves: there is room again.
    await server.request("DELETE", `/api/v1/teams/${team.id}/members/${a.id}`, { token: a.token });
    expect((await invite(team.id, owner, b.username)).body).toEqual({ status: "okay" });
  });

  test("accepting into a team that has filled up meanwhile is 400 member_limit_reached; the invitation stays", async () => {
    const { owner, team } = await limitedTeam(2);
    const guest = await person();
    await invite(team.id, owner, guest.username);
    const other = await person();
    await addMember(server.db, { teamId: team.id, userId: other.id, role: Role.member });

    const [invitation] = await myInvitations(guest);
    const reply = await server.request("PATCH", `/api/v1/user/invitations/${invitation.id}`, {
      token: guest.token,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("member_limit_reached");
    expect(await server.roleOf(team.id, guest.id)).toBeUndefined();
    expect(await myInvitations(guest)).toHaveLength(1);
  });

  test("concurrent invitations cannot together pass the limit", async () => {
    const { owner, team } = await limitedTeam(3);
    const guests = await Promise.all(Array.from({ length: 4 }, () => person()));
    const replies = await Promise.all(guests.map((g) => invite(team.id, owner, g.username)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    expect(replies.filter((r) => r.body.code === "member_limit_reached")).toHaveLength(2);
    expect(await teamInvitations(team.id, owner)).toHaveLength(2);
  });
});
