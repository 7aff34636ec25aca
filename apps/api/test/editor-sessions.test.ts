// A hosted instance's editor, signed in to with a Flowplane password, through the real server and
// real Node-RED processes: the editor session is the platform's (bound to the instance), so every
// editor request is decided with the role of the moment, and whatever ends a person's sessions
// ends it too. Sign-ins that fail, are malformed or are limited leave the instance running.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WebSocket } from "ws";
import { deployFlows, startServer, type TestServer } from "./harness";

let server: TestServer;
let teamId: string;
/** The editors' URLs of two instances of the team. */
let first: { id: string; url: string };
let second: { id: string; url: string };

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

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

/** The editor's own sign-in (Node-RED's OAuth password exchange). */
async function editorSignIn(url: string, username: string, password: string) {
  const response = await fetch(`${url}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_id: "node-red-editor",
      grant_type: "password",
      scope: "*",
      username,
      password,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    error?: string;
  };
  return { status: response.status, ...body };
}

async function signedInEditor(url: string, person: { username: string; password: string }) {
  const reply = await editorSignIn(url, person.username, person.password);
  expect(reply.status, JSON.stringify(reply)).toBe(200);
  return reply.access_token!;
}

/** A full deploy of no flows: 204 when the session may deploy, 401 when Node-RED refuses. */
const deploy = async (url: string, token: string) => (await deployFlows(url, token, [])).status;

const readFlows = async (url: string, token: string) =>
  (await fetch(`${url}/flows`, { headers: { authorization: `Bearer ${token}` } })).status;

/**
 * The editor's websocket (Node-RED's comms), authenticated with the session as the editor does:
 * resolves once Node-RED said `auth: ok`; `closed` resolves when the connection ends.
 */
async function openComms(url: string, token: string) {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/comms`);
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
  server = await startServer({
    instances: true,
    rateLimits: { signInAddress: { max: 30, windowMs: 10 * 60_000 } },
  });
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
  test("a malformed sign-in answers invalid_grant and leaves the instance running", async () => {
    const long = await editorSignIn(first.url, "x".repeat(300), "whatever");
    expect(long).toMatchObject({ status: 403, error: "invalid_grant" });
    expect(await stateOf(first.id)).toBe("running");
    expect((await fetch(`${first.url}/settings`)).status).toBe(401);
  });

  test("attempts are counted per instance, not per the 127.0.0.1 every instance calls from", async () => {
    const member = await person(Role.member);
    // 31 failed sign-ins on the first instance, each for another name (under the per-account
    // limit): the instance's count is used up, and it keeps answering invalid_grant.
    for (let i = 0; i < 31; i++) {
      const reply = await editorSignIn(first.url, `nobody-${i}`, "a guessed password");
      expect(reply, `attempt ${i}`).toMatchObject({ status: 403, error: "invalid_grant" });
    }
    const limited = await editorSignIn(first.url, member.username, member.password);
    expect(limited).toMatchObject({ status: 403, error: "invalid_grant" });
    expect(await stateOf(first.id)).toBe("running");
    // The platform refused it for the instance's count (429), and Node-RED said invalid_grant.
    const answers = server.logs
      .map((line) => JSON.parse(line) as { url?: string; status?: number })
      .filter((entry) => entry.url === `/storage/${first.id}/auth/password`)
      .map((entry) => entry.status);
    expect(answers.at(-1)).toBe(429);
    // Another team's (here: another) instance signs its people in as before.
    const token = await signedInEditor(second.url, member);
    expect(await readFlows(second.url, token)).toBe(200);
    // And so does the platform's own sign-in, which counts the person's address.
    const platform = await server.request("POST", "/account/login", {
      token: null,
      body: { username: member.username, password: member.password },
    });
    expect(platform.status).toBe(200);
  });

  test("failures are counted per account: wrong passwords at /account/login lock the editor's sign-in too", async () => {
    const member = await person(Role.member, "counted@example.com");
    for (let i = 0; i < 3; i++) {
      const wrong = await server.request("POST", "/account/login", {
        token: null,
        body: { username: member.username, password: "not the password" },
      });
      expect(wrong.status).toBe(401);
    }
    for (let i = 0; i < 2; i++) {
      const wrong = await editorSignIn(second.url, "counted@example.com", "not the password");
      expect(wrong).toMatchObject({ status: 403, error: "invalid_grant" });
    }
    const locked = await editorSignIn(second.url, member.username, member.password);
    expect(locked).toMatchObject({ status: 403, error: "invalid_grant" });
    expect(await stateOf(second.id)).toBe("running");
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
      const again = await editorSignIn(second.url, member.username, member.password);
      expect(again).toMatchObject({ status: 403, error: "invalid_grant" });
      expect(await stateOf(second.id)).toBe("running");
    });
  },
);

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
