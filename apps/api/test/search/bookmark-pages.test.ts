// Pages for people, errors for people: a browser that asks for a page no route has gets an HTML
// page with a way back (scripts and the API keep their JSON), and FlowFuse's own page paths that a
// FlowFuse user bookmarked lead to the matching Flowplane page — as the signed-in person sees it,
// so another team's team, instance or device is the same 404 page as one that does not exist.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
let owner: { sid: string };
let stranger: { sid: string };
let team: { id: string; slug: string };
let applicationId: string;
let instanceId: string;
let deviceId: string;

beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  const created = await server.request("POST", "/api/v1/teams", {
    token: server.adminToken,
    body: { name: "Bottling Plant" },
  });
  team = created.body;
  const person = async (teamRole?: number) => {
    const user = await server.userWithPassword();
    if (teamRole !== undefined) {
      await addMember(server.db, { teamId: team.id, userId: user.id, role: teamRole });
    }
    return { sid: await server.signIn(user.username, user.password) };
  };
  owner = await person(Role.owner);
  stranger = await person();
  const application = await server.request("POST", "/api/v1/applications", {
    body: { name: "Line 1", teamId: team.id },
  });
  applicationId = application.body.id;
  const instance = await server.request("POST", "/api/v1/projects", {
    body: { name: `bm-${Math.random().toString(36).slice(2, 8)}`, applicationId },
  });
  expect(instance.status, instance.text).toBe(200);
  instanceId = instance.body.id;
  const device = await server.request("POST", "/api/v1/devices", {
    body: { name: "press-7", team: team.id },
  });
  deviceId = device.body.id;
});
afterAll(() => server?.close());

describe("a page that does not exist", () => {
  test("is an HTML page with a way back, for a signed-in person and for anyone", async () => {
    const signedIn = await server.page("GET", "/no/such/page", { sid: owner.sid });
    expect(signedIn.status).toBe(404);
    expect(signedIn.headers.get("content-type")).toMatch(/^text\/html/);
    expect(signedIn.html).toContain("Page not found");
    expect(signedIn.html).toContain('href="/teams"');
    // The page's own policy, so its styles load, and the layout shows who is signed in.
    expect(signedIn.headers.get("content-security-policy")).toContain("style-src 'self'");
    expect(signedIn.html).toContain("Sign out");

    const anyone = await server.page("GET", "/no/such/page");
    expect(anyone.status).toBe(404);
    expect(anyone.html).toContain('href="/sign-in"');
  });

  test("a script, the API and a write keep the API's JSON", async () => {
    const script = await fetch(`${server.url}/no/such/page`, {
      headers: { accept: "application/json" },
    });
    expect(script.status).toBe(404);
    expect((await script.json()).code).toBe("not_found");
    for (const path of ["/api/v1/no/such/thing", "/account/no/such/thing", "/trpc/no.such"]) {
      const reply = await fetch(`${server.url}${path}`, {
        headers: { accept: "text/html", cookie: `sid=${owner.sid}` },
      });
      expect(reply.status, path).toBe(404);
      expect(reply.headers.get("content-type"), path).toMatch(/^application\/json/);
    }
    const write = await fetch(`${server.url}/no/such/page`, {
      method: "POST",
      headers: { accept: "text/html", "content-type": "application/json" },
      body: "{}",
    });
    expect(write.status).toBe(404);
    expect(write.headers.get("content-type")).toMatch(/^application\/json/);
  });

  test("a team of someone else's is the same 404 page as one that does not exist", async () => {
    const other = await server.page("GET", `/teams/${team.id}`, { sid: stranger.sid });
    const none = await server.page("GET", "/teams/NoSuchTeam1", { sid: stranger.sid });
    for (const reply of [other, none]) {
      expect(reply.status).toBe(404);
      expect(reply.headers.get("content-type")).toMatch(/^text\/html/);
      expect(reply.html).toContain('href="/teams"');
    }
  });
});

describe("FlowFuse's page paths", () => {
  test("lead to the matching page", async () => {
    const teamPage = `/teams/${team.id}`;
    const cases: [string, string][] = [
      [`/team/${team.slug}`, teamPage],
      [`/team/${team.slug}/applications`, teamPage],
      [`/team/${team.slug}/devices`, `${teamPage}/devices`],
      [`/team/${team.slug}/members/general`, `${teamPage}/members`],
      [`/team/${team.slug}/audit-log`, `${teamPage}/audit-log`],
      [`/team/${team.slug}/settings/general`, `${teamPage}/settings`],
      [`/application/${applicationId}/instances`, `${teamPage}#application-${applicationId}`],
      [`/instance/${instanceId}/overview`, `${teamPage}/instances/${instanceId}`],
      [`/instance/${instanceId}`, `${teamPage}/instances/${instanceId}`],
      [`/device/${deviceId}/overview`, `${teamPage}/devices/${deviceId}`],
      ["/admin/overview", "/admin"],
      ["/admin/users/general", "/admin/users"],
      ["/admin/settings/general", "/admin/settings"],
    ];
    for (const [from, to] of cases) {
      const reply = await server.page("GET", from, { sid: owner.sid });
      expect(reply.status, from).toBe(302);
      expect(reply.location, from).toBe(to);
    }
  });

  test("someone else's is the 404 page; without a session, sign in first and come back", async () => {
    for (const path of [
      `/team/${team.slug}/devices`,
      `/instance/${instanceId}/overview`,
      `/device/${deviceId}`,
      `/application/${applicationId}`,
    ]) {
      const reply = await server.page("GET", path, { sid: stranger.sid });
      expect(reply.status, path).toBe(404);
      expect(reply.html, path).toContain('href="/teams"');
      const anonymous = await server.page("GET", path);
      expect(anonymous.status, path).toBe(303);
      expect(anonymous.location, path).toBe(`/sign-in?next=${encodeURIComponent(path)}`);
    }
  });
});

describe("a form sent without a session", () => {
  test("is sent to sign in before its body is read: an oversized form is not parsed", async () => {
    // Over the pages' 64 KiB form limit: were it read first, the answer would be 413.
    const body = `name=${"x".repeat(100 * 1024)}`;
    for (const path of [`/teams/${team.id}/applications`, `/teams/${team.id}/devices/new`]) {
      const reply = await fetch(`${server.url}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: server.origin },
        body,
      });
      expect(reply.status, path).toBe(303);
      expect(reply.headers.get("location"), path).toMatch(/^\/sign-in/);
    }
    // Signed in, the same form is read, and refused for its size.
    const signedIn = await fetch(`${server.url}/teams/${team.id}/applications`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: server.origin,
        cookie: `sid=${owner.sid}`,
      },
      body,
    });
    expect(signedIn.status).toBe(413);
  });
});
