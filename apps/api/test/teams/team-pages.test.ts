// The pages of teams, applications and instances over plain HTTP, as a browser without script uses
// them: forms posted URL-encoded with the session cookie, redirects. What they do is the API's
// own doing; what is checked here is that each form works without script, that a page offers
// only what the caller's role allows (and the API refuses the rest whatever is posted), that
// another team's ids are 404, that forms from another site are refused, and that names are
// escaped. Instances run on the in-memory driver (no Node-RED is needed to see their state).
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PageReply, startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  // Many sign-ins from one address: its limit is raised here.
  server = await startServer({
    instances: "in-memory",
    rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
  });
});
afterAll(() => server.close());

/** A person with a password, signed in: their id, username and session. */
async function person(options: { name?: string } = {}) {
  const user = await server.userWithPassword(options);
  return { ...user, sid: await server.signIn(user.username, user.password) };
}

type Person = Awaited<ReturnType<typeof person>>;

/** A team owned by `owner`, with an application and an instance, made through the pages. */
async function teamWithInstance(owner: Person, name = "Line Ops") {
  const created = await server.page("POST", "/teams", { sid: owner.sid, form: { name } });
  expect(created.status, created.html).toBe(303);
  const teamId = /^\/teams\/(\w+)\?done=created$/.exec(created.location!)![1]!;
  const application = await server.page("POST", `/teams/${teamId}/applications`, {
    sid: owner.sid,
    form: { name: "Line 1", description: "The first line" },
  });
  expect(application.location).toBe(`/teams/${teamId}?done=application`);
  const apps = await server.request("GET", `/api/v1/teams/${teamId}/applications`);
  const applicationId = apps.body.applications[0].id as string;
  const instanceName = `line-${Math.random().toString(36).slice(2, 8)}`;
  const instance = await server.page("POST", `/teams/${teamId}/instances`, {
    sid: owner.sid,
    form: { name: instanceName, applicationId },
  });
  expect(instance.location, instance.html).toBe(`/teams/${teamId}?done=instance`);
  const listed = await server.request("GET", `/api/v1/applications/${applicationId}/instances`);
  const instanceId = listed.body.instances[0].id as string;
  await waitForState(instanceId, "running");
  return { teamId, applicationId, instanceId, instanceName };
}

async function stateOf(instanceId: string): Promise<string> {
  const reply = await server.request("GET", `/api/v1/projects/${instanceId}/status`);
  return reply.body.meta.state as string;
}

/** Creation starts the instance in the background; the in-memory driver finishes at once. */
async function waitForState(instanceId: string, state: string) {
  await expect.poll(() => stateOf(instanceId)).toBe(state);
}

async function join(teamId: string, role: number, options: { name?: string } = {}) {
  const someone = await person(options);
  const invited = await server.request("POST", `/api/v1/teams/${teamId}/invitations`, {
    body: { user: someone.username, role },
  });
  expect(invited.status, invited.text).toBe(200);
  const mine = await server.asSession(someone.sid, "GET", "/api/v1/user/invitations");
  const accepted = await server.page(
    "POST",
    `/teams/invitations/${mine.body.invitations[0].id}/accept`,
    { sid: someone.sid },
  );
  expect(accepted.location).toBe(`/teams/${teamId}?done=joined`);
  return someone;
}

/** The forms of a page: their actions. */
const formActions = (page: PageReply) =>
  [...page.html.matchAll(/<form [^>]*?action="([^"]+)"/g)].map((match) => match[1]!);

describe("a person's teams", () => {
  test("the front page is the person's teams; without a session, sign in first and come back", async () => {
    const front = await server.page("GET", "/");
    expect(front.location).toBe("/teams");
    const anonymous = await server.page("GET", "/teams");
    // The Teams page is where signing in lands anyway.
    expect(anonymous.location).toBe("/sign-in");
    const someone = await person();
    const teams = await server.page("GET", "/teams", { sid: someone.sid });
    expect(teams.status).toBe(200);
    expect(teams.html).toContain("You are not a member of any team yet");
    // Every signed-in page leads here.
    const security = await server.page("GET", "/settings/security", { sid: someone.sid });
    expect(security.html).toContain('<a href="/teams">Teams</a>');
  });

  test("creating a team makes the person its owner and opens its page; the Teams page lists it", async () => {
    const owner = await person();
    const created = await server.page("POST", "/teams", {
      sid: owner.sid,
      form: { name: "<b>Night</b> shift" },
    });
    expect(created.status).toBe(303);
    const teamPage = await server.page("GET", created.location!, { sid: owner.sid });
    expect(teamPage.status).toBe(200);
    expect(teamPage.html).toContain("The team is created. You are its owner.");
    expect(teamPage.html).toContain("&lt;b&gt;Night&lt;/b&gt; shift");
    expect(teamPage.html).not.toContain("<b>Night</b>");
    expect(teamPage.html).toContain("Your role: <strong>Owner</strong>");

    const teams = await server.page("GET", "/teams", { sid: owner.sid });
    expect(teams.html).toMatch(/<a href="\/teams\/\w+">&lt;b&gt;Night&lt;\/b&gt; shift<\/a>/);

    const blank = await server.page("POST", "/teams", { sid: owner.sid, form: { name: "  " } });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain('aria-invalid="true"');
  });
});

describe("a team's applications and instances", () => {
  test("an owner creates them and starts, stops and restarts an instance with plain forms", async () => {
    const owner = await person();
    const { teamId, instanceId, instanceName } = await teamWithInstance(owner);
    const page = await server.page("GET", `/teams/${teamId}`, { sid: owner.sid });
    expect(page.html).toContain("Line 1");
    expect(page.html).toContain("The first line");
    expect(page.html).toContain(instanceName);
    expect(page.html).toContain('<span class="state state-running">Running</span>');
    // The editor's link: the instance's URL as the API gives it.
    const instance = await server.request("GET", `/api/v1/projects/${instanceId}`);
    expect(page.html).toContain(`<a href="${instance.body.url}">Open editor`);
    const actions = formActions(page);
    expect(actions).toContain(`/teams/${teamId}/instances/${instanceId}/stop`);
    expect(actions).toContain(`/teams/${teamId}/instances/${instanceId}/restart`);
    expect(actions).not.toContain(`/teams/${teamId}/instances/${instanceId}/start`);

    const stop = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/stop`, {
      sid: owner.sid,
    });
    expect(stop.location).toBe(`/teams/${teamId}?done=stopped`);
    expect(await stateOf(instanceId)).toBe("stopped");
    const stopped = await server.page("GET", stop.location!, { sid: owner.sid });
    expect(stopped.html).toContain("The instance is stopped.");
    expect(stopped.html).toContain('<span class="state state-stopped">Stopped</span>');
    expect(formActions(stopped)).toContain(`/teams/${teamId}/instances/${instanceId}/start`);
    expect(stopped.html).not.toContain(`Open editor`);

    const start = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/start`, {
      sid: owner.sid,
    });
    expect(start.location).toBe(`/teams/${teamId}?done=started`);
    expect(await stateOf(instanceId)).toBe("running");
    const restart = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/restart`, {
      sid: owner.sid,
    });
    expect(restart.location).toBe(`/teams/${teamId}?done=restarted`);

    // Each action is the API's, in the audit log under the person who pressed the button.
    for (const event of ["project.stopped", "project.started", "project.restarted"]) {
      const entries = await auditEntries(server.db, { event });
      const entry = entries.find((e) => e.entity_id === instanceId);
      expect(entry, event).toMatchObject({ actor_id: owner.id, token_id: null });
    }
    const unknown = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/suspend`, {
      sid: owner.sid,
    });
    expect(unknown.status).toBe(404);
    expect(await stateOf(instanceId)).toBe("running");
  });

  test("a taken instance name is the API's message, beside the field, in its application", async () => {
    const owner = await person();
    const { teamId, applicationId, instanceName } = await teamWithInstance(owner);
    const taken = await server.page("POST", `/teams/${teamId}/instances`, {
      sid: owner.sid,
      form: { name: instanceName, applicationId },
    });
    expect(taken.status).toBe(409);
    expect(taken.html).toContain("Name in use");
    expect(taken.html).toMatch(
      /<input id="instance-name-\w+" name="name" type="text" value="line-/,
    );
    const bad = await server.page("POST", `/teams/${teamId}/instances`, {
      sid: owner.sid,
      form: { name: "9 lives", applicationId },
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Letters, digits and &#39;-&#39;, starting with a letter");
  });

  test("a member sees the instances and their editors, and cannot start or stop them (owners do)", async () => {
    const owner = await person();
    const { teamId, instanceId } = await teamWithInstance(owner);
    const member = await join(teamId, Role.member);
    const page = await server.page("GET", `/teams/${teamId}`, { sid: member.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("Your role: <strong>Member</strong>");
    expect(page.html).toContain("Open editor");
    expect(formActions(page)).toEqual(["/sign-out"]);
    // Posted anyway, the API's 403, and nothing changes.
    const stop = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/stop`, {
      sid: member.sid,
    });
    expect(stop.status).toBe(403);
    expect(await stateOf(instanceId)).toBe("running");
  });

  test("a viewer sees the team's instances and their state, and no form to create or act", async () => {
    const owner = await person();
    const { teamId, applicationId, instanceId, instanceName } = await teamWithInstance(owner);
    const viewer = await join(teamId, Role.viewer);
    const page = await server.page("GET", `/teams/${teamId}`, { sid: viewer.sid });
    expect(page.html).toContain(instanceName);
    expect(page.html).toContain("Running");
    expect(formActions(page)).toEqual(["/sign-out"]);
    expect(page.html).not.toContain("Create an application");

    const forged = [
      [`/teams/${teamId}/instances/${instanceId}/stop`, {}],
      [`/teams/${teamId}/instances`, { name: "sneaky", applicationId }],
      [`/teams/${teamId}/applications`, { name: "Sneaky" }],
      [`/teams/${teamId}/invitations`, { user: viewer.username, role: "50" }],
    ] as const;
    for (const [path, form] of forged) {
      const reply = await server.page("POST", path, { sid: viewer.sid, form });
      expect(reply.status, path).toBe(403);
    }
    expect(await stateOf(instanceId)).toBe("running");
    const apps = await server.request("GET", `/api/v1/teams/${teamId}/applications`);
    expect(apps.body.applications.map((a: { name: string }) => a.name)).toEqual(["Line 1"]);
  });

  test("a dashboard user sees the team, and that their role does not show its applications", async () => {
    const owner = await person();
    const { teamId, instanceName } = await teamWithInstance(owner);
    const dashboard = await join(teamId, Role.dashboard);
    const page = await server.page("GET", `/teams/${teamId}`, { sid: dashboard.sid });
    expect(page.status).toBe(200);
    expect(page.html).toContain("does not show its applications and instances");
    expect(page.html).not.toContain(instanceName);
    expect(page.html).not.toContain(`/teams/${teamId}/members`);
  });
});

describe("another team's ids", () => {
  test("another team's member gets 404 for its pages and its ids, and changes nothing", async () => {
    const owner = await person();
    const a = await teamWithInstance(owner, "Team A");
    const outsider = await person();
    const b = await teamWithInstance(outsider, "Team B");

    const teams = await server.page("GET", "/teams", { sid: outsider.sid });
    expect(teams.html).not.toContain("Team A");
    for (const path of [`/teams/${a.teamId}`, `/teams/${a.teamId}/members`]) {
      const reply = await server.page("GET", path, { sid: outsider.sid });
      expect(reply.status, path).toBe(404);
      expect(reply.html).not.toContain("Team A");
      expect(reply.html).not.toContain(a.instanceName);
    }
    const posts: [string, Record<string, string>][] = [
      [`/teams/${a.teamId}/instances/${a.instanceId}/stop`, {}],
      // Their own team in the path, team A's instance: not theirs to act on.
      [`/teams/${b.teamId}/instances/${a.instanceId}/stop`, {}],
      [`/teams/${a.teamId}/applications`, { name: "Intruder" }],
      [`/teams/${a.teamId}/instances`, { name: "intruder", applicationId: a.applicationId }],
      [`/teams/${a.teamId}/invitations`, { user: outsider.username }],
      [`/teams/${a.teamId}/members/${owner.id}/role`, { role: "10" }],
      [`/teams/${a.teamId}/members/${owner.id}/remove`, { confirmed: "yes" }],
    ];
    for (const [path, form] of posts) {
      const reply = await server.page("POST", path, { sid: outsider.sid, form });
      expect(reply.status, path).toBe(404);
    }
    // Their own team in the path, team A's application in the form: refused, as the API does.
    const crossed = await server.page("POST", `/teams/${b.teamId}/instances`, {
      sid: outsider.sid,
      form: { name: "crossed", applicationId: a.applicationId },
    });
    expect(crossed.status).toBe(400);

    expect(await stateOf(a.instanceId)).toBe("running");
    const apps = await server.request("GET", `/api/v1/teams/${a.teamId}/applications`);
    expect(apps.body.applications).toHaveLength(1);
    expect(apps.body.applications[0].instances).toHaveLength(1);
    expect(await server.roleOf(a.teamId, owner.id)).toBe(Role.owner);
    expect(await server.roleOf(a.teamId, outsider.id)).toBeUndefined();
  });

  test("a form from another site is refused (403) and changes nothing", async () => {
    const owner = await person();
    const { teamId, instanceId } = await teamWithInstance(owner);
    for (const origin of ["https://evil.example", "http://127.0.0.1:3001"]) {
      const reply = await server.page("POST", `/teams/${teamId}/instances/${instanceId}/stop`, {
        sid: owner.sid,
        origin,
      });
      expect(reply.status, String(origin)).toBe(403);
      expect(reply.html).toContain("This form was sent from another site");
    }
    expect(await stateOf(instanceId)).toBe("running");
  });
});

describe("members and invitations", () => {
  test("an owner invites; the invitee joins from their Teams page; the owner changes the role", async () => {
    const owner = await person();
    const { teamId } = await teamWithInstance(owner, "Crew");
    const invitee = await person({ name: "Ada <Lovelace>" });
    const invited = await server.page("POST", `/teams/${teamId}/invitations`, {
      sid: owner.sid,
      form: { user: invitee.username, role: "10" },
    });
    expect(invited.location).toBe(`/teams/${teamId}/members?done=invited`);
    const members = await server.page("GET", invited.location!, { sid: owner.sid });
    expect(members.html).toContain("Invited. They will find the invitation");
    expect(members.html).toContain(invitee.username);

    const teams = await server.page("GET", "/teams", { sid: invitee.sid });
    expect(teams.html).toContain("<strong>Crew</strong> invites you as Viewer");
    const [accept] = formActions(teams).filter((action) => action.endsWith("/accept"));
    const joined = await server.page("POST", accept!, { sid: invitee.sid });
    expect(joined.location).toBe(`/teams/${teamId}?done=joined`);
    expect(await server.roleOf(teamId, invitee.id)).toBe(Role.viewer);

    // The owner sees them, escaped, and makes them a member.
    const after = await server.page("GET", `/teams/${teamId}/members`, { sid: owner.sid });
    expect(after.html).toContain("Ada &lt;Lovelace&gt;");
    const role = await server.page("POST", `/teams/${teamId}/members/${invitee.id}/role`, {
      sid: owner.sid,
      form: { role: "30" },
    });
    expect(role.location).toBe(`/teams/${teamId}/members?done=role`);
    expect(await server.roleOf(teamId, invitee.id)).toBe(Role.member);
    const odd = await server.page("POST", `/teams/${teamId}/members/${invitee.id}/role`, {
      sid: owner.sid,
      form: { role: "42" },
    });
    expect(odd.status).toBe(400);
    expect(odd.html).toContain("The role must be 5, 10, 30 or 50");

    // A viewer or member sees the members without the owners' controls, and can leave.
    const theirs = await server.page("GET", `/teams/${teamId}/members`, { sid: invitee.sid });
    expect(theirs.status).toBe(200);
    expect(formActions(theirs)).toEqual([
      "/sign-out",
      `/teams/${teamId}/members/${invitee.id}/remove`,
    ]);
    expect(theirs.html).not.toContain("Invitations");
  });

  test("invitations: some invitees refused are named; resend and revoke; a removal asks first", async () => {
    const owner = await person();
    const { teamId } = await teamWithInstance(owner, "Dock");
    const first = await person();
    const partly = await server.page("POST", `/teams/${teamId}/invitations`, {
      sid: owner.sid,
      form: { user: `${first.username}, nobody-here`, role: "30" },
    });
    expect(partly.status).toBe(200);
    expect(partly.html).toContain("The others are invited; these are not:");
    expect(partly.html).toContain("nobody-here: No user has this username");
    const none = await server.page("POST", `/teams/${teamId}/invitations`, {
      sid: owner.sid,
      form: { user: "ghost-1, ghost-2", role: "30" },
    });
    expect(none.status).toBe(400);
    expect(none.html).toContain("ghost-1: No user has this username");
    expect(none.html).toContain("ghost-2: No user has this username");
    expect(none.html).toContain('value="ghost-1, ghost-2"');

    const list = await server.request("GET", `/api/v1/teams/${teamId}/invitations`);
    const invitation = list.body.invitations[0];
    const resent = await server.page(
      "POST",
      `/teams/${teamId}/invitations/${invitation.id}/resend`,
      { sid: owner.sid },
    );
    expect(resent.location).toBe(`/teams/${teamId}/members?done=resent`);
    const revoked = await server.page(
      "POST",
      `/teams/${teamId}/invitations/${invitation.id}/revoke`,
      { sid: owner.sid },
    );
    expect(revoked.location).toBe(`/teams/${teamId}/members?done=revoked`);
    expect((await server.request("GET", `/api/v1/teams/${teamId}/invitations`)).body.count).toBe(0);
    const gone = await server.page("POST", `/teams/${teamId}/invitations/${invitation.id}/revoke`, {
      sid: owner.sid,
    });
    expect(gone.status).toBe(404);

    const member = await join(teamId, Role.member);
    const ask = await server.page("POST", `/teams/${teamId}/members/${member.id}/remove`, {
      sid: owner.sid,
      form: { confirmed: "" },
    });
    expect(ask.status).toBe(200);
    expect(ask.html).toContain(`(${member.username}) from “Dock”?`);
    expect(await server.roleOf(teamId, member.id)).toBe(Role.member);
    const removed = await server.page("POST", `/teams/${teamId}/members/${member.id}/remove`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(removed.location).toBe(`/teams/${teamId}/members?done=removed`);
    expect(await server.roleOf(teamId, member.id)).toBeUndefined();

    // The last owner cannot leave: the API's refusal, on the members page.
    const leave = await server.page("POST", `/teams/${teamId}/members/${owner.id}/remove`, {
      sid: owner.sid,
      form: { confirmed: "yes" },
    });
    expect(leave.status).toBe(400);
    expect(await server.roleOf(teamId, owner.id)).toBe(Role.owner);
  });

  test("a member leaves the team and is back on their Teams page", async () => {
    const owner = await person();
    const { teamId } = await teamWithInstance(owner, "Harbour");
    const member = await join(teamId, Role.member);
    const left = await server.page("POST", `/teams/${teamId}/members/${member.id}/remove`, {
      sid: member.sid,
      form: { confirmed: "yes" },
    });
    expect(left.location).toBe("/teams?done=left");
    expect(await server.roleOf(teamId, member.id)).toBeUndefined();
    const teams = await server.page("GET", left.location!, { sid: member.sid });
    expect(teams.html).toContain("You have left the team.");
    expect(teams.html).not.toContain("Harbour");
  });

  test("rejecting an invitation", async () => {
    const owner = await person();
    const { teamId } = await teamWithInstance(owner, "Quay");
    const invitee = await person();
    await server.page("POST", `/teams/${teamId}/invitations`, {
      sid: owner.sid,
      form: { user: invitee.username, role: "30" },
    });
    const teams = await server.page("GET", "/teams", { sid: invitee.sid });
    const [reject] = formActions(teams).filter((action) => action.endsWith("/reject"));
    const rejected = await server.page("POST", reject!, { sid: invitee.sid });
    expect(rejected.location).toBe("/teams?done=rejected");
    expect(await server.roleOf(teamId, invitee.id)).toBeUndefined();
    const again = await server.page("POST", reject!, { sid: invitee.sid });
    expect(again.status).toBe(404);
  });
});
