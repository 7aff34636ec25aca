// `flowplane members` and `flowplane invitations`: an owner invites, the invitee lists and accepts
// or rejects, the owner changes roles and removes; tables for people, the API's JSON for scripts.
import { describe, expect, it } from "vitest";
import { cell, newUser, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
serveWithAdmin((served) => ({ server } = served));

let counter = 0;

/** Calls the API as the administrator's token, or as a signed-in browser. */
async function api(method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(server.url + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(Object.keys(headers).length === 0
        ? { authorization: `Bearer ${server.adminToken}` }
        : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as any,
  };
}

/** A new user, logged in to the CLI with a token of their own. */
async function person(): Promise<User & { id: string; username: string }> {
  const username = `crew-${++counter}-${Math.random().toString(36).slice(2, 6)}`;
  const password = "correct horse battery staple";
  const created = await api("POST", "/api/v1/users", {
    username,
    name: `Crew ${counter}`,
    password,
  });
  expect(created.status).toBe(200);
  const login = await api("POST", "/account/login", { username, password }, { origin: server.url });
  const sid = login.headers
    .getSetCookie()
    .find((c) => c.startsWith("sid="))!
    .split(";")[0]!;
  const token = await api(
    "POST",
    "/api/v1/user/tokens",
    { name: "cli" },
    {
      cookie: sid,
      origin: server.url,
    },
  );
  expect(token.status).toBe(200);
  const user = await newUser();
  const cli = await user.flowplane("login", "--token", token.body.token, "--url", server.url);
  expect(cli.status, cli.stderr).toBe(0);
  return Object.assign(user, { id: created.body.id as string, username });
}

async function ownTeam(owner: User) {
  const slug = `crew-team-${++counter}`;
  const created = await owner.flowplane(
    ...["teams", "create", `Crew Team ${counter}`, "--slug", slug, "--json"],
  );
  expect(created.status, created.stderr).toBe(0);
  return JSON.parse(created.stdout) as { id: string; name: string; slug: string };
}

async function json(user: User, ...args: string[]) {
  const outcome = await user.flowplane(...args, "--json");
  expect(outcome, args.join(" ")).toMatchObject({ status: 0, stderr: "" });
  return JSON.parse(outcome.stdout);
}

describe("flowplane invitations and members", () => {
  it("an owner invites by username, the invitee accepts, and the owner sees the new member", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);

    const invited = await owner.flowplane(
      ...["invitations", "create", guest.username, "--role", "viewer", "--team", team.slug],
    );
    expect(invited).toEqual({ status: 0, stdout: `Invited ${guest.username}.\n`, stderr: "" });

    const teamList = await owner.flowplane("invitations", "list", "--team", team.slug);
    expect(teamList.stdout.split("\n")[0]).toMatch(/^ID\s+INVITEE\s+ROLE\s+SENT\s+EXPIRES$/);
    expect(cell(teamList.stdout, 1, "INVITEE")).toBe(guest.username);
    expect(cell(teamList.stdout, 1, "ROLE")).toBe("viewer");

    const mine = await guest.flowplane("invitations", "list");
    expect(mine.stdout.split("\n")[0]).toMatch(/^ID\s+TEAM\s+ROLE\s+FROM\s+EXPIRES$/);
    expect(cell(mine.stdout, 1, "FROM")).toBe(owner.username);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;

    expect(await guest.flowplane("invitations", "accept", invitation.id)).toEqual({
      status: 0,
      stdout: `Accepted the invitation from team ${team.name} (id ${invitation.id}).\n`,
      stderr: "",
    });
    expect(await guest.flowplane("invitations", "list")).toMatchObject({
      status: 0,
      stdout: "No pending invitations.\n",
    });

    const members = await owner.flowplane("members", "list", "--team", team.slug);
    expect(members.stdout.split("\n")[0]).toMatch(/^ID\s+USERNAME\s+NAME\s+ROLE$/);
    const row = members.stdout.split("\n").findIndex((line) => line.includes(guest.username));
    expect(cell(members.stdout, row, "ROLE")).toBe("viewer");
    const list = await json(owner, "members", "list", "--team", team.id);
    expect(list.count).toBe(2);
  });

  it("set-role takes a username or id and a role name or number; remove takes a member out", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    await json(owner, "invitations", "create", guest.username, "--team", team.slug);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;
    await json(guest, "invitations", "accept", invitation.id);

    expect(
      await owner.flowplane("members", "set-role", guest.username, "owner", "--team", team.slug),
    ).toEqual({
      status: 0,
      stdout: `${guest.username} is now owner of team ${team.name}.\n`,
      stderr: "",
    });
    expect(await json(owner, "members", "set-role", guest.id, "10", "--team", team.id)).toEqual({
      status: "okay",
    });
    const roles = (await json(owner, "members", "list", "--team", team.slug)).members.map(
      (m: { id: string; role: number }) => [m.id, m.role],
    );
    expect(roles).toContainEqual([guest.id, 10]);

    expect(await owner.flowplane("members", "remove", guest.username, "--team", team.slug)).toEqual(
      {
        status: 0,
        stdout: `Removed ${guest.username} from team ${team.name}.\n`,
        stderr: "",
      },
    );
    const gone = await guest.flowplane("members", "list", "--team", team.id);
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("(not_found)");
  });

  it("a member leaves by their own username; the only owner cannot (the API's error, exit 1)", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    await json(owner, "invitations", "create", guest.username, "--role", "5", "--team", team.slug);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;
    await json(guest, "invitations", "accept", invitation.id);

    // A dashboard user may not list the members, but may leave.
    expect(
      (await guest.flowplane("members", "remove", guest.username, "--team", team.id)).status,
    ).toBe(0);
    const last = await owner.flowplane("members", "remove", owner.username, "--team", team.slug);
    expect(last.status).toBe(1);
    expect(last.stderr).toMatch(/only owner.*\(invalid_request\)/);
  });

  it("a partly failed invitation says who was invited and why the others were not (exit 1)", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    const outcome = await owner.flowplane(
      ...[
        "invitations",
        "create",
        guest.username,
        "nobody-here",
        owner.username,
        "--team",
        team.slug,
      ],
    );
    expect(outcome.status).toBe(1);
    expect(outcome.stdout).toBe(`Invited ${guest.username}.\n`);
    expect(outcome.stderr).toBe(
      "error: some were not invited (invitation_failed)\n" +
        "  nobody-here: No user has this username\n" +
        `  ${owner.username}: Already a member of the team\n`,
    );
  });

  it("reject removes the invitation without joining", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    await json(owner, "invitations", "create", `${guest.username}`, "--team", team.slug);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;
    expect(await guest.flowplane("invitations", "reject", invitation.id)).toMatchObject({
      status: 0,
      stdout: `Rejected the invitation from team ${team.name} (id ${invitation.id}).\n`,
    });
    expect((await json(owner, "invitations", "list", "--team", team.slug)).count).toBe(0);
    expect((await guest.flowplane("members", "list", "--team", team.id)).status).toBe(1);
  });

  it("an owner sends an invitation again, by the invitee's username or the invitation's id; it expires 7 days from then", async () => {
    const owner = await person();
    const guest = await person();
    const other = await person();
    const team = await ownTeam(owner);
    await json(owner, "invitations", "create", guest.username, other.username, "--team", team.slug);
    const before = (await json(owner, "invitations", "list", "--team", team.slug)).invitations;
    const mine = before.find(
      (i: { invitee: { username?: string } }) => i.invitee.username === guest.username,
    );

    const resent = await owner.flowplane(
      ...["invitations", "resend", guest.username, "--team", team.slug],
    );

    expect(resent.status).toBe(0);
    const after = await json(owner, "invitations", "list", "--team", team.slug);
    const renewed = after.invitations.find((i: { id: string }) => i.id === mine.id);
    expect(Date.parse(renewed.sentAt)).toBeGreaterThanOrEqual(Date.parse(mine.sentAt));
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThanOrEqual(Date.parse(mine.expiresAt));
    // Both times are taken as the server sends it again: a few milliseconds apart.
    const lasts = Date.parse(renewed.expiresAt) - Date.parse(renewed.sentAt);
    expect(Math.abs(lasts - 7 * 86_400_000)).toBeLessThan(60_000);
    expect(resent.stdout).toBe(
      `Sent the invitation to ${guest.username} again (id ${mine.id}); it expires on ` +
        `${renewed.expiresAt.slice(0, 10)} ${renewed.expiresAt.slice(11, 19)} UTC.\n`,
    );
    const [second] = (await json(other, "invitations", "list")).invitations;
    expect(
      (await json(owner, "invitations", "resend", second.id, "--team", team.id)).invitee,
    ).toMatchObject({ username: other.username });
  });

  it("an owner revokes an invitation by its id or invitee: it can no longer be accepted", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    const other = await person();
    await json(owner, "invitations", "create", guest.username, other.username, "--team", team.slug);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;

    expect(
      await owner.flowplane("invitations", "revoke", invitation.id, "--team", team.slug),
    ).toEqual({
      status: 0,
      stdout: `Revoked the invitation to ${guest.username} (id ${invitation.id}).\n`,
      stderr: "",
    });
    expect(
      await json(owner, "invitations", "revoke", other.username.toUpperCase(), "--team", team.slug),
    ).toEqual({
      status: "okay",
    });

    expect((await json(owner, "invitations", "list", "--team", team.slug)).count).toBe(0);
    const accept = await guest.flowplane("invitations", "accept", invitation.id);
    expect(accept.status).toBe(1);
    expect(accept.stderr).toContain("(not_found)");
    const again = await owner.flowplane(
      ...["invitations", "revoke", guest.username, "--team", team.slug],
    );
    expect(again).toMatchObject({
      status: 1,
      stderr: `error: no pending invitation of the team has the id or name "${guest.username}" (not_found)\n`,
    });
  });

  it("resend and revoke are for the team's owners: a member is refused (exit 1)", async () => {
    const owner = await person();
    const guest = await person();
    const team = await ownTeam(owner);
    await json(owner, "invitations", "create", guest.username, "--team", team.slug);
    const [invitation] = (await json(guest, "invitations", "list")).invitations;
    await json(guest, "invitations", "accept", invitation.id);
    const late = await person();
    await json(owner, "invitations", "create", late.username, "--team", team.slug);
    const [pending] = (await json(owner, "invitations", "list", "--team", team.slug)).invitations;

    for (const action of ["resend", "revoke"]) {
      const refused = await guest.flowplane("invitations", action, pending.id, "--team", team.id);
      expect(refused.status, action).toBe(1);
    }
    expect((await json(owner, "invitations", "list", "--team", team.slug)).count).toBe(1);
  });

  it("the invitee accepts or rejects by the team that sent it (--team), as by the invitation's id", async () => {
    const owner = await person();
    const guest = await person();
    const accepted = await ownTeam(owner);
    const rejected = await ownTeam(owner);
    for (const team of [accepted, rejected]) {
      await json(owner, "invitations", "create", guest.username, "--team", team.slug);
    }

    expect((await guest.flowplane("invitations", "accept", "--team", accepted.slug)).status).toBe(
      0,
    );
    expect((await guest.flowplane("invitations", "reject", "--team", rejected.id)).status).toBe(0);

    expect((await json(guest, "invitations", "list")).count).toBe(0);
    expect((await json(guest, "members", "list", "--team", accepted.id)).count).toBe(2);
    expect((await guest.flowplane("members", "list", "--team", rejected.id)).status).toBe(1);
    const none = await guest.flowplane("invitations", "accept", "--team", accepted.slug);
    expect(none).toMatchObject({
      status: 1,
      stderr: `error: no team among those that invited you has the id, slug or name "${accepted.slug}" (not_found)\n`,
    });
    const neither = await guest.flowplane("invitations", "accept");
    expect(neither.status).toBe(2);
    expect(neither.stderr).toContain("name the invitation");
  });

  it("a role that is not one is a usage error (exit 2), and nothing is sent", async () => {
    const owner = await person();
    const outcome = await owner.flowplane("members", "set-role", "bob", "boss", "--team", "x");
    expect(outcome.status).toBe(2);
    expect(outcome.stderr).toContain("Not a team role");
    const missing = await owner.flowplane("members", "list");
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("--team");
  });
});
