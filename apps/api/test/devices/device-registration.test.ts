// A device registered from its own terminal, as the FlowFuse device agent's interactive setup
// does it (FlowFuse 2.33): POST /api/v1/devices/_/register (no token) hands out a page for a
// signed-in person and a URL to poll; the poll waits (202, Retry-After 5) until the person, on the
// page, picks a team (and application) and confirms; the poll then answers the new device and a
// one-time code, once, and the code sets the device up as the agent's --otc does. Tokens are kept
// only as digests, expire after 30 minutes, and are used once; starts are limited per address.
// (Here over HTTP as the agent sends it; the real agent's interactive setup drives the same flow
// in device-agent.test.ts.)
import { tokenDigest } from "@flowplane/auth";
import { addMember, auditEntries } from "@flowplane/db";
import { Role } from "@flowplane/contract";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer, TOKEN_SECRET } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    rateLimits: {
      signInAddress: { max: 1000, windowMs: 30_000 },
      deviceRegistration: { max: 1000, windowMs: 30_000 },
    },
  });
});
afterAll(() => server.close());

/** A person with a password, signed in: their id, username and session. */
async function person() {
  const user = await server.userWithPassword();
  return { ...user, sid: await server.signIn(user.username, user.password) };
}

/** The agent's first call: no token, an empty JSON body. */
async function start() {
  const reply = await server.request("POST", "/api/v1/devices/_/register", {
    token: null,
    body: {},
  });
  expect(reply.status, reply.text).toBe(200);
  const { registerUrl, doneUrl } = reply.body as { registerUrl: string; doneUrl: string };
  expect(registerUrl).toMatch(/^\/register\/remote-instance\/fpr_\w{36}$/);
  expect(doneUrl).toMatch(/^\/api\/v1\/devices\/_\/register\/done\/fpw_\w{36}$/);
  return { registerUrl, doneUrl, sessionToken: registerUrl.split("/").pop()! };
}

const poll = (doneUrl: string) => server.request("GET", doneUrl, { token: null });

/** A team the person owns, with an application, made through the API with their session. */
async function teamOf(owner: { sid: string }) {
  const team = await server.asSession(owner.sid, "POST", "/api/v1/teams", {
    body: { name: `Plant ${Math.random().toString(36).slice(2, 7)}` },
  });
  expect(team.status, team.text).toBe(200);
  const application = await server.asSession(owner.sid, "POST", "/api/v1/applications", {
    body: { name: "Line 1", teamId: team.body.id },
  });
  expect(application.status, application.text).toBe(200);
  return { teamId: team.body.id as string, applicationId: application.body.id as string };
}

describe("a device's registration from its own terminal", () => {
  test("a person completes it on the page; the poll hands the agent its device and a one-time code, once; the code sets it up", async () => {
    const { registerUrl, doneUrl, sessionToken } = await start();
    const owner = await person();
    const { teamId, applicationId } = await teamOf(owner);

    // Waiting: the poll says so, and when to ask again.
    const waiting = await poll(doneUrl);
    expect(waiting.status).toBe(202);
    expect(waiting.body).toEqual({});
    expect(waiting.headers.get("retry-after")).toBe("5");
    // The page's own check: a person's; anonymous is 401.
    const status = `/api/v1/devices/_/register/status/${sessionToken}`;
    expect((await server.asSession(owner.sid, "GET", status)).status).toBe(202);
    expect((await server.request("GET", status, { token: null })).status).toBe(401);

    // Not signed in: to the sign-in page, and back here after.
    const anonymous = await server.page("GET", registerUrl);
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toBe(`/sign-in?next=${encodeURIComponent(registerUrl)}`);

    // The page offers the person's team and its application.
    const form = await server.page("GET", registerUrl, { sid: owner.sid });
    expect(form.status, form.html).toBe(200);
    expect(form.html).toContain(`value="${teamId}"`);
    expect(form.html).toContain(`value="${teamId}/${applicationId}"`);
    // Where and when the agent asked, to hold against the device in front of the person.
    expect(form.html).toMatch(
      /asked to be registered here, at <strong>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/strong> from <strong>(::ffff:)?127\.0\.0\.1<\/strong>/,
    );
    expect(form.html).toContain("Confirm only a device you started this on yourself");

    // A blank name: the API's message on the form, and the registration still waits.
    const blank = await server.page("POST", registerUrl, {
      sid: owner.sid,
      form: { owner: `${teamId}/${applicationId}`, name: " " },
    });
    expect(blank.status).toBe(400);
    expect(blank.html).toContain("Must not be blank");
    expect((await poll(doneUrl)).status).toBe(202);

    // Confirmed at its last moment: ten seconds left.
    const digest = tokenDigest(TOKEN_SECRET, sessionToken);
    await sql`update device_registrations set expires_at = now() + interval '10 seconds'
      where session_digest = ${digest}`.execute(server.db);
    const done = await server.page("POST", registerUrl, {
      sid: owner.sid,
      form: { owner: `${teamId}/${applicationId}`, name: "press-4", type: "Raspberry Pi" },
    });
    expect(done.status, done.html).toBe(200);
    expect(done.html).toContain("press-4");
    // The agent's poll still has minutes to take it.
    const left = await sql<{ ok: boolean }>`select expires_at > now() + interval '4 minutes' as ok
      from device_registrations where session_digest = ${digest}`.execute(server.db);
    expect(left.rows).toEqual([{ ok: true }]);

    // Completed: the page and its check no longer find it.
    expect((await server.asSession(owner.sid, "GET", status)).status).toBe(404);
    const again = await server.page("GET", registerUrl, { sid: owner.sid });
    expect(again.status).toBe(404);
    expect(again.html).toContain("Start the registration again on the device");

    // The poll: the device and a code, once.
    const result = await poll(doneUrl);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ id: expect.any(String), otc: expect.any(String) });
    expect((await poll(doneUrl)).status).toBe(404);

    const device = await server.asSession(owner.sid, "GET", `/api/v1/devices/${result.body.id}`);
    expect(device.body).toMatchObject({
      name: "press-4",
      type: "Raspberry Pi",
      team: { id: teamId },
      ownerType: "application",
      application: { id: applicationId },
    });
    // Created by the person, as with the API.
    const created = await auditEntries(server.db, { event: "team.device.created" });
    expect(created.find((entry) => entry.entity_id === result.body.id)).toMatchObject({
      actor_id: owner.id,
      team_id: teamId,
    });

    // The agent's setup with the code (`--otc`): the device's credentials, once.
    const setup = await server.request("POST", "/api/v1/devices", {
      token: Buffer.from(result.body.otc).toString("base64"),
      body: { setup: true, agentHost: "press-4.local" },
    });
    expect(setup.status, setup.text).toBe(200);
    expect(setup.body).toMatchObject({
      id: result.body.id,
      credentials: { token: expect.stringMatching(/^fpd_/) },
    });
  });

  test("tokens are kept as digests only; unknown, made-up and expired ones are 404", async () => {
    const { registerUrl, doneUrl, sessionToken } = await start();
    const doneToken = doneUrl.split("/").pop()!;
    const rows = await sql<Record<string, unknown>>`select * from device_registrations`.execute(
      server.db,
    );
    const stored = JSON.stringify(rows.rows);
    // As agent 4.2 posts it: no body at all.
    const bare = await fetch(`${server.url}/api/v1/devices/_/register`, { method: "POST" });
    expect(bare.status).toBe(200);
    expect(await bare.json()).toMatchObject({ doneUrl: expect.stringContaining("/done/fpw_") });
    expect(stored).not.toContain(sessionToken);
    expect(stored).not.toContain(doneToken);

    const owner = await person();
    expect((await poll("/api/v1/devices/_/register/done/fpw_madeup")).status).toBe(404);
    expect((await poll(`/api/v1/devices/_/register/done/${sessionToken}`)).status).toBe(404);
    const made = await server.page("GET", "/register/remote-instance/nothing", { sid: owner.sid });
    expect(made.status).toBe(404);
    expect(
      (await server.asSession(owner.sid, "GET", `/api/v1/devices/_/register/status/${doneToken}`))
        .status,
    ).toBe(404);

    // Past its 30 minutes: gone for the page, its form and the poll.
    await sql`update device_registrations set expires_at = now() - interval '1 second'`.execute(
      server.db,
    );
    expect((await poll(doneUrl)).status).toBe(404);
    expect((await server.page("GET", registerUrl, { sid: owner.sid })).status).toBe(404);
    const { teamId } = await teamOf(owner);
    const late = await server.page("POST", registerUrl, {
      sid: owner.sid,
      form: { owner: teamId, name: "late" },
    });
    expect(late.status).toBe(404);
    const devices = await server.asSession(owner.sid, "GET", `/api/v1/teams/${teamId}/devices`);
    expect(devices.body.devices).toEqual([]);
  });

  test("only a team's owners may add the device: a member sees no team, and a posted team is refused", async () => {
    const { registerUrl, doneUrl } = await start();
    const owner = await person();
    const member = await person();
    const { teamId } = await teamOf(owner);
    await addMember(server.db, { teamId, userId: member.id, role: Role.member });
    const form = await server.page("GET", registerUrl, { sid: member.sid });
    expect(form.status).toBe(200);
    expect(form.html).not.toContain(`value="${teamId}"`);
    expect(form.html).toContain("You are not an owner of any team");
    const refused = await server.page("POST", registerUrl, {
      sid: member.sid,
      form: { owner: teamId, name: "sneaky" },
    });
    expect(refused.status).toBe(403);
    // Still waiting for someone who may.
    expect((await poll(doneUrl)).status).toBe(202);
  });

  test("a form from another site is refused and changes nothing", async () => {
    const { registerUrl, doneUrl } = await start();
    const owner = await person();
    const { teamId } = await teamOf(owner);
    const forged = await server.page("POST", registerUrl, {
      sid: owner.sid,
      form: { owner: teamId, name: "forged" },
      origin: "https://evil.example",
    });
    expect(forged.status).toBe(403);
    expect((await poll(doneUrl)).status).toBe(202);
  });
});

describe("starting registrations is limited per client address", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startServer({
      rateLimits: { deviceRegistration: { max: 2, windowMs: 30_000 } },
    });
  });
  afterAll(() => limited?.close());

  test("past the limit, 429 with Retry-After", async () => {
    const post = () =>
      limited.request("POST", "/api/v1/devices/_/register", { token: null, body: {} });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("too_many_requests");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
