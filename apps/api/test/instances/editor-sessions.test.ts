// A hosted instance's editor, signed in to on the platform's own page (an authorization code the
// instance exchanges), through the real server and real Node-RED processes: the editor session is
// the platform's (bound to the instance), so every editor request is decided with the role of the
// moment, and whatever ends a person's sessions ends it too. No password, platform session or
// personal token ever reaches the instance's process.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WebSocket } from "ws";
import { editorToken, startServer, type TestServer } from "../support/harness";
import { localhostLookup } from "../support/localhost-names";
import { waiter } from "../support/until";

let server: TestServer;
let teamId: string;
/** The editors' URLs of two instances of the team. */
let first: { id: string; url: string };
let second: { id: string; url: string };

const until = waiter(60_000);

const stateOf = async (id: string) =>
  (await server.request("GET", `/api/v1/projects/${id}/status`)).body.meta.state as string;

async function runningInstance(applicationId: string, name: string) {
  const created = await server.request("POST", "/api/v1/projects", {
    body: { name, applicationId },
  });
  expect(created.status, created.text).toBe(200);
  const id = created.body.id as string;
  await until("running", async () => ((await stateOf(id)) === "running" ? true : undefined));
  const { url } = (await server.request("GET", `/api/v1/projects/${id}`)).body;
  return { id, url: url as string };
}

/**
 * Opening an editor as a browser without script does: the editor's sign-in goes to the platform's
 * page, which (with the platform's session cookie) sends the browser back to the editor with a
 * one-time code, and the editor answers with its session in `access_token`. Each step's answer.
 */
async function openEditor(url: string, sid: string | undefined) {
  const get = (target: string, cookie?: string) =>
    fetch(target, { redirect: "manual", headers: cookie ? { cookie: `sid=${cookie}` } : {} });
  const start = await get(`${url}/auth/strategy`);
  const authorize = start.headers.get("location") ?? "";
  const page = await get(authorize, sid);
  const callback = page.headers.get("location") ?? "";
  if (page.status !== 302 || !callback.startsWith(url)) {
    return { authorize, page, callback, token: undefined, status: page.status };
  }
  const done = await get(callback);
  const next = done.headers.get("location") ?? "";
  const token = new URL(next, url).searchParams.get("access_token") ?? undefined;
  return { authorize, page, callback, token, status: done.status };
}

async function signedInEditor(url: string, person: { username: string; password: string }) {
  const sid = await server.signIn(person.username, person.password);
  const opened = await openEditor(url, sid);
  expect(opened.token, JSON.stringify({ ...opened, page: opened.page.status })).toMatch(/^fpe_/);
  return opened.token!;
}

/** A full deploy of no flows: 204 when the session may deploy, 401 when Node-RED refuses. */
const deploy = async (url: string, token: string) =>
  (
    await fetch(`${url}/flows`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "Node-RED-Deployment-Type": "full",
      },
      body: "[]",
    })
  ).status;

const readFlows = async (url: string, token: string) =>
  (await fetch(`${url}/flows`, { headers: { authorization: `Bearer ${token}` } })).status;

/**
 * The editor's websocket (Node-RED's comms), authenticated with the session as the editor does:
 * resolves once Node-RED said `auth: ok`; `closed` resolves when the connection ends.
 */
async function openComms(url: string, token: string) {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/comms`, { lookup: localhostLookup });
  const messages: unknown[] = [];
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once("error", reject);
    ws.once("open", () => ws.send(JSON.stringify({ auth: token })));
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as { auth?: string };
      messages.push(message);
      if (message.auth === "ok") resolve();
      if (message.auth === "fail") reject(new Error("comms refused the session"));
    });
  });
  return { ws, closed, messages };
}

/** Node-RED's sign-out, as the editor's menu does it. */
const signOut = async (url: string, token: string) =>
  (
    await fetch(`${url}/auth/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ token }),
    })
  ).status;

const editorSessionsOf = async (userId: string) =>
  (
    await server.db
      .selectFrom("sessions")
      .select("id")
      .where("user_id", "=", userId)
      .where("project_id", "is not", null)
      .execute()
  ).length;

/** A person with a password in the team, with this role. */
async function person(role: number, email?: string) {
  const user = await server.userWithPassword({ email });
  await addMember(server.db, { teamId, userId: user.id, role });
  return user;
}

const setRole = (userId: string, role: number) =>
  server.request("PUT", `/api/v1/teams/${teamId}/members/${userId}`, { body: { role } });

beforeAll(async () => {
  // The per-instance count's window is longer than the test's 31 attempts take on a loaded
  // machine, so that the count is not reset halfway (30 in the window, as by default).
  server = await startServer({ instances: true });
  const team = await server.request("POST", "/api/v1/teams", { body: { name: "Editors" } });
  teamId = team.body.id;
  const application = await server.request("POST", "/api/v1/applications", {
    body: { name: "Line", teamId },
  });
  [first, second] = await Promise.all([
    runningInstance(application.body.id, "editor-one"),
    runningInstance(application.body.id, "editor-two"),
  ]);
}, 180_000);

afterAll(() => server?.close());

describe("an editor's sign-in", { timeout: 120_000 }, () => {
  test("the editor offers only the platform's page: no password dialog, no password grant", async () => {
    const login = await (await fetch(`${first.url}/auth/login`)).json();
    expect(login).toMatchObject({ type: "strategy", loginRedirect: "auth/strategy" });
    // Node-RED's own password exchange is not there: a password has nowhere to go.
    const member = await person(Role.member);
    const grant = await fetch(`${first.url}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_id: "node-red-editor",
        grant_type: "password",
        scope: "*",
        username: member.username,
        password: member.password,
      }),
    });
    expect(grant.status).not.toBe(200);
    expect(await stateOf(first.id)).toBe("running");
    expect((await fetch(`${first.url}/settings`)).status).toBe(401);
  });

  test("the editor sends the browser to the platform's page, which signs it in and comes back", async () => {
    const member = await person(Role.member);
    // No session: the platform's page asks to sign in first, and comes back after.
    const anonymous = await openEditor(first.url, undefined);
    const authorize = new URL(anonymous.authorize);
    expect(authorize.origin).toBe(server.url);
    expect(authorize.pathname).toBe("/account/authorize");
    expect(authorize.searchParams.get("client_id")).toBe(first.id);
    expect(anonymous.page.status).toBe(302);
    const signIn = new URL(anonymous.page.headers.get("location")!, server.url);
    expect(signIn.pathname).toBe("/sign-in");
    expect(signIn.searchParams.get("next")).toBe(authorize.pathname + authorize.search);
    // Signed in: a code for this instance's editor host only, exchanged once for a session.
    const sid = await server.signIn(member.username, member.password);
    const opened = await openEditor(first.url, sid);
    expect(new URL(opened.callback).host).toBe(new URL(first.url).host);
    expect(opened.token).toMatch(/^fpe_/);
    expect(await deploy(first.url, opened.token!)).toBe(204);
    // The same code again is refused (the platform took it once); so is it at another
    // instance's editor.
    const again = await fetch(opened.callback, { redirect: "manual" });
    expect(again.status).toBe(403);
    const code = new URL(opened.callback).searchParams.get("code")!;
    const elsewhere = await server.request("POST", `/storage/${second.id}/auth/code`, {
      token: null,
      body: { code },
    });
    expect(elsewhere.status).toBe(401);
  });

  test("a non-member gets no code for the instance, and a redirect elsewhere is refused", async () => {
    const outsider = await server.userWithPassword();
    const sid = await server.signIn(outsider.username, outsider.password);
    const opened = await openEditor(first.url, sid);
    expect(opened.page.status).toBe(404);
    expect(opened.token).toBeUndefined();
    const member = await person(Role.member);
    const memberSid = await server.signIn(member.username, member.password);
    const redirected = await server.asSession(
      memberSid,
      "GET",
      `/account/authorize?client_id=${first.id}&state=abcdefgh12&redirect_uri=${encodeURIComponent("http://evil.example/cb")}`,
    );
    expect(redirected.status).toBe(400);
  });

  test("a person's own token is refused by the editor: only credentials bound to the instance", async () => {
    const member = await person(Role.member);
    const personal = await server.request("POST", "/api/v1/user/tokens", {
      token: null,
      headers: {
        cookie: `sid=${await server.signIn(member.username, member.password)}`,
        origin: server.origin,
      },
      body: { name: "mine" },
    });
    expect(personal.status, personal.text).toBe(200);
    expect(await readFlows(first.url, personal.body.token)).toBe(401);
    expect(await deploy(first.url, personal.body.token)).toBe(401);
    // Refused by the platform's proxy: the token never reached the instance's process.
    const refused = await fetch(`${first.url}/flows`, {
      headers: { authorization: `Bearer ${personal.body.token}` },
    });
    expect(await refused.text()).toMatch(/credential of the platform's/);
    // A script's token for the instance works there, and nowhere else.
    const scripts = await editorToken(server, first.id, personal.body.token);
    expect(scripts).toMatchObject({ url: first.url, permissions: "*" });
    expect(await deploy(first.url, scripts.token)).toBe(204);
    expect(await readFlows(second.url, scripts.token)).toBe(401);
    expect((await server.request("GET", "/api/v1/user", { token: scripts.token })).status).toBe(
      401,
    );
  });

  test("the editor's session is the platform's, bound to its instance: no use on the API or another editor", async () => {
    const member = await person(Role.member);
    const token = await signedInEditor(second.url, member);
    expect(token).toMatch(/^fpe_/);
    expect(await deploy(second.url, token)).toBe(204);
    expect(await readFlows(first.url, token)).toBe(401);
    const api = await server.request("GET", "/api/v1/user", { token });
    expect(api.status).toBe(401);
    const asCookie = await server.request("GET", "/api/v1/user", {
      token: null,
      headers: { cookie: `sid=${token}` },
    });
    expect(asCookie.status).toBe(401);
  });
});

describe(
  "an editor session follows the platform's rules on every request",
  { timeout: 120_000 },
  () => {
    test("a demoted member's session is read-only on its next request, and deploys again once promoted", async () => {
      const member = await person(Role.member);
      const token = await signedInEditor(second.url, member);
      expect(await deploy(second.url, token)).toBe(204);
      expect((await setRole(member.id, Role.viewer)).status).toBe(200);
      expect(await deploy(second.url, token)).toBe(401);
      expect(await readFlows(second.url, token)).toBe(200);
      expect((await setRole(member.id, Role.dashboard)).status).toBe(200);
      expect(await readFlows(second.url, token)).toBe(401);
      expect((await setRole(member.id, Role.member)).status).toBe(200);
      expect(await deploy(second.url, token)).toBe(204);
    });

    test("a password change ends the editor session", async () => {
      const member = await person(Role.member);
      const token = await signedInEditor(second.url, member);
      const sid = await server.signIn(member.username, member.password);
      const changed = await server.asSession(sid, "PUT", "/api/v1/user/change_password", {
        body: { old_password: member.password, password: "a fresh long passphrase" },
      });
      expect(changed.status, changed.text).toBe(200);
      expect(await deploy(second.url, token)).toBe(401);
      expect(await readFlows(second.url, token)).toBe(401);
    });

    test("a suspension ends the editor session, and lifting it does not revive it", async () => {
      const member = await person(Role.member);
      const token = await signedInEditor(second.url, member);
      const suspend = (suspended: boolean) =>
        server.request("PUT", `/api/v1/users/${member.id}`, { body: { suspended } });
      expect((await suspend(true)).status).toBe(200);
      expect(await readFlows(second.url, token)).toBe(401);
      expect((await suspend(false)).status).toBe(200);
      expect(await readFlows(second.url, token)).toBe(401);
      // A new sign-in works again.
      expect(await deploy(second.url, await signedInEditor(second.url, member))).toBe(204);
    });

    test("removal from the team ends the editor session, and joining again does not revive it", async () => {
      const member = await person(Role.member);
      const token = await signedInEditor(second.url, member);
      const removed = await server.request(
        "DELETE",
        `/api/v1/teams/${teamId}/members/${member.id}`,
      );
      expect(removed.status).toBe(200);
      expect(await readFlows(second.url, token)).toBe(401);
      await addMember(server.db, { teamId, userId: member.id, role: Role.member });
      expect(await readFlows(second.url, token)).toBe(401);
    });

    test("a password marked expired by an administrator ends the editor session and refuses sign-in", async () => {
      const member = await person(Role.member);
      const token = await signedInEditor(second.url, member);
      const marked = await server.request("PUT", `/api/v1/users/${member.id}`, {
        body: { password_expired: true },
      });
      expect(marked.status).toBe(200);
      expect(await readFlows(second.url, token)).toBe(401);
      const sid = await server.signIn(member.username, member.password);
      const again = await openEditor(second.url, sid);
      expect(again.page.status).toBe(403);
      expect(again.token).toBeUndefined();
      expect(await stateOf(second.id)).toBe("running");
    });
  },
);

describe("a script's token for an editor", { timeout: 120_000 }, () => {
  test("holds while its person's password is expired, as their own token does; a sign-in's session does not", async () => {
    const member = await person(Role.member);
    const sid = await server.signIn(member.username, member.password);
    const personal = await server.asSession(sid, "POST", "/api/v1/user/tokens", {
      body: { name: "script" },
    });
    expect(personal.status, personal.text).toBe(200);
    const scripts = await editorToken(server, second.id, personal.body.token);
    const signedIn = await signedInEditor(second.url, member);
    const marked = await server.request("PUT", `/api/v1/users/${member.id}`, {
      body: { password_expired: true },
    });
    expect(marked.status).toBe(200);
    expect(await readFlows(second.url, signedIn)).toBe(401);
    expect(await deploy(second.url, scripts.token)).toBe(204);
    // And a new one is given while the password is expired.
    const again = await editorToken(server, second.id, personal.body.token);
    expect(await readFlows(second.url, again.token)).toBe(200);
  });
});

describe("signing out and revoking reach an open editor", { timeout: 120_000 }, () => {
  test("signing out in the editor ends the platform's session: the token is refused everywhere after", async () => {
    const member = await person(Role.member);
    const token = await signedInEditor(second.url, member);
    const other = await signedInEditor(second.url, member);
    const comms = await openComms(second.url, token);
    expect(await editorSessionsOf(member.id)).toBe(2);
    expect(await signOut(second.url, token)).toBe(200);
    await comms.closed;
    expect(await readFlows(second.url, token)).toBe(401);
    expect(await deploy(second.url, token)).toBe(401);
    // The platform no longer has it; the person's other editor session is untouched.
    await until("the session ended on the platform", async () =>
      (await editorSessionsOf(member.id)) === 1 ? true : undefined,
    );
    expect(await deploy(second.url, other)).toBe(204);
  });

  test("an open editor's websocket closes on removal, suspension, a password change and a role without the editor", async () => {
    const revocations: [
      string,
      (member: { id: string; username: string; password: string }) => Promise<unknown>,
    ][] = [
      [
        "removal from the team",
        (member) => server.request("DELETE", `/api/v1/teams/${teamId}/members/${member.id}`),
      ],
      [
        "suspension",
        (member) =>
          server.request("PUT", `/api/v1/users/${member.id}`, { body: { suspended: true } }),
      ],
      [
        "a password change",
        async (member) => {
          const sid = await server.signIn(member.username, member.password);
          return server.asSession(sid, "PUT", "/api/v1/user/change_password", {
            body: { old_password: member.password, password: "another long passphrase" },
          });
        },
      ],
      ["a dashboard role", (member) => setRole(member.id, Role.dashboard)],
    ];
    await Promise.all(
      revocations.map(async ([what, revoke]) => {
        const member = await person(Role.member);
        const token = await signedInEditor(second.url, member);
        const comms = await openComms(second.url, token);
        const reply = (await revoke(member)) as { status: number };
        expect(reply.status, what).toBe(200);
        await comms.closed;
        // Node-RED said why before closing, so the editor asks to sign in again.
        expect(comms.messages.at(-1), what).toEqual({ auth: "fail" });
        expect(await readFlows(second.url, token), what).toBe(401);
      }),
    );
  });
});
