// Developer mode and the remote editor, with an agent that speaks the real one's MQTT protocol
// (support/simulated-agent.ts) and a tunnel of the test's own that speaks the agent's tunnel
// frames (lib/editor/tunnel.js): the mode and the editor's switches, the tunnel's token checks
// (4001, 4004), a person signed in through the platform to the device's own editor host, HTTP and
// WebSocket frames carried both ways, the browser's credentials stripped, viewers read only,
// another team's people not let in; the editor host's guards (writes and sockets only from its own
// origin, no dot segments, people judged again on their open sockets). The real agent in a
// browser: device-editor-browser.test.ts.
import { Role } from "@flowplane/contract";
import { addMember, removeMember } from "@flowplane/db";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { freePort, startServer, type TestServer } from "../support/harness";
import { localhostLookup } from "../support/localhost-names";
import { SimulatedAgent } from "../support/simulated-agent";
import { type TeamOfRoles, teamOfRoles } from "../support/team-of-roles";
import { waiter } from "../support/until";

const until = waiter(15_000);

let server: TestServer;
let roles: TeamOfRoles;
let agent: SimulatedAgent;
let deviceId: string;
/** Sign-in sessions on the platform (its cookie), by role. */
const sessions: Record<string, string> = {};
const tunnels: FakeTunnel[] = [];

/** The agent's side of the tunnel: echoes HTTP requests, and WebSocket data prefixed. */
class FakeTunnel {
  readonly socket: WebSocket;
  readonly frames: Record<string, unknown>[] = [];
  closed: { code: number; reason: string } | undefined;
  opened: Promise<boolean>;

  constructor(id: string, token: string, header = token) {
    const url = `${server.url.replace(/^http/, "ws")}/api/v1/devices/${id}/editor/comms/${token}`;
    this.socket = new WebSocket(url, { headers: { "x-access-token": header } });
    this.opened = new Promise((resolve) => {
      this.socket.once("open", () => resolve(true));
      this.socket.once("error", () => resolve(false));
    });
    this.socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
    this.socket.on("message", (data) => this.answer(JSON.parse(String(data))));
    tunnels.push(this);
  }

  private answer(frame: Record<string, unknown>) {
    this.frames.push(frame);
    const send = (reply: unknown) => this.socket.send(JSON.stringify(reply));
    if (!frame.ws) {
      // As got's rawBody arrives: Buffer-JSON.
      const echo = Buffer.from(JSON.stringify(frame));
      send({
        id: frame.id,
        status: 200,
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
        body: { type: "Buffer", data: [...echo] },
      });
    } else if (frame.url) send({ id: frame.id, ws: true, body: `opened ${String(frame.url)}` });
    else if (!frame.closed) send({ id: frame.id, ws: true, body: `echo:${String(frame.body)}` });
  }
}

const put = (path: string, token: string, body: unknown) =>
  server.request("PUT", `/api/v1/devices/${deviceId}${path}`, { token, body });

beforeAll(async () => {
  const port = await freePort();
  server = await startServer({ broker: "embedded", port, baseUrl: `http://127.0.0.1:${port}` });
  roles = await teamOfRoles(server, "editors");
  for (const [name, role] of [
    ["member", Role.member],
    ["viewer", Role.viewer],
    ["outsider", undefined],
  ] as const) {
    const person = await server.userWithPassword();
    if (role !== undefined)
      await addMember(server.db, { teamId: roles.teamId, userId: person.id, role });
    sessions[name] = await server.signIn(person.username, person.password);
  }
  const created = await server.request("POST", "/api/v1/devices", {
    token: roles.owner.token,
    body: { name: "bench-pi", team: roles.teamId },
  });
  expect(created.status, created.text).toBe(200);
  deviceId = created.body.id as string;
  agent = await SimulatedAgent.connect(created.body.credentials.broker);
  await agent.publishStatus({ state: "running" });
  await until("the device online", async () => {
    const device = await server.request("GET", `/api/v1/devices/${deviceId}`, {
      token: roles.owner.token,
    });
    return device.body.onlineStatus === "online" ? true : undefined;
  });
});
afterAll(async () => {
  for (const tunnel of tunnels) tunnel.socket.terminate();
  await agent?.end().catch(() => {});
  await server.close();
});

/** The platform's page that opens the device's editor, as the person's browser asks for it. */
const openEditor = (role: string) =>
  fetch(`${server.url}/devices/${deviceId}/editor`, {
    headers: { cookie: `sid=${sessions[role]}`, accept: "text/html" },
    redirect: "manual",
  });

/** Signs the person in to the device's editor through the platform: the editor host's cookie. */
async function signIn(role: string): Promise<{ cookie: string; origin: string }> {
  const open = await openEditor(role);
  expect(open.status, await open.clone().text()).toBe(303);
  const target = new URL(open.headers.get("location")!);
  expect(target.hostname).toMatch(/^0-device-[0-9a-f]+\.localhost$/);
  const exchanged = await fetch(target, { redirect: "manual" });
  expect(exchanged.status).toBe(303);
  expect(exchanged.headers.get("location")).toBe("/?access_token=device-editor");
  const cookie = exchanged.headers.getSetCookie()[0]!;
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).not.toMatch(/Domain=/i);
  // The code is used once.
  expect((await fetch(target, { redirect: "manual" })).status).toBe(401);
  return { cookie: cookie.split(";")[0]!, origin: target.origin };
}

async function enableEditor(): Promise<FakeTunnel> {
  let tunnel: FakeTunnel | undefined;
  agent.answers.startEditor = async (command) => {
    const token = (command.payload as { token: string }).token;
    expect(token).toMatch(new RegExp(`^ffde_${deviceId}_[A-Za-z0-9]+$`));
    tunnel = new FakeTunnel(deviceId, token);
    return { connected: await tunnel.opened, token };
  };
  const enabled = await put("/editor", roles.member.token, { enabled: true });
  expect(enabled.status, enabled.text).toBe(200);
  expect(enabled.body).toEqual({
    enabled: true,
    connected: true,
    url: `${server.url}/devices/${deviceId}/editor`,
  });
  return tunnel!;
}

describe("developer mode and the remote editor", () => {
  test("the mode: members set it, told to the device at once; other values are refused", async () => {
    const refused = await put("/editor", roles.member.token, { enabled: true });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("developer_mode_required");
    expect((await put("/mode", roles.member.token, { mode: "nope" })).body.code).toBe(
      "invalid_mode",
    );
    expect((await put("/mode", roles.viewer.token, { mode: "developer" })).status).toBe(403);
    expect((await put("/mode", roles.outsider.token, { mode: "developer" })).status).toBe(404);
    const set = await put("/mode", roles.member.token, { mode: "developer" });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({ mode: "developer" });
    await agent.nextCommand((c) => c.command === "update" && c.mode === "developer");
  });

  test("a tunnel: its token checked, people signed in on the device's host, frames carried", async () => {
    const tunnel = await enableEditor();
    const status = await server.request("GET", `/api/v1/devices/${deviceId}/editor`, {
      token: roles.viewer.token,
    });
    expect(status.body).toMatchObject({ enabled: true, connected: true });
    const token = tunnel.socket.url.split("/").pop()!;

    // The device's Node-RED checks an admin request's token.
    const check = (value: string) =>
      fetch(`${server.url}/api/v1/devices/${deviceId}/editor/token`, {
        headers: { "x-access-token": value },
      });
    expect(await (await check(token)).json()).toMatchObject({ permissions: "*" });
    expect((await check(`${token}x`)).status).toBe(401);
    // A malformed device id (a NUL byte) is no device: 401, not a database error.
    const malformed = await fetch(`${server.url}/api/v1/devices/a%00b/editor/token`, {
      headers: { "x-access-token": token },
    });
    expect(malformed.status).toBe(401);

    // A wrong token is refused with 4001 (the agent retries); the tunnel stays.
    const wrong = new FakeTunnel(deviceId, `ffde_${deviceId}_wrong`);
    await until("4001", async () => wrong.closed);
    expect(wrong.closed!.code).toBe(4001);

    // A member through the editor host: credentials stripped, the body decoded, writes pass.
    const member = await signIn("member");
    const get = await fetch(`${member.origin}/flows?x=1`, {
      headers: { cookie: member.cookie, authorization: "Bearer fpt_nope", "x-access-token": "no" },
    });
    expect(get.status).toBe(200);
    const echoed = (await get.json()) as { method: string; url: string; headers: object };
    expect(echoed).toMatchObject({ method: "GET", url: "/flows?x=1" });
    expect(Object.keys(echoed.headers)).not.toEqual(
      expect.arrayContaining(["cookie", "authorization", "x-access-token"]),
    );
    expect(get.headers.get("content-encoding")).toBeNull();
    const post = await fetch(`${member.origin}/flows`, {
      method: "POST",
      headers: {
        cookie: member.cookie,
        "content-type": "application/json",
        origin: member.origin,
        "sec-fetch-site": "same-origin",
      },
      body: JSON.stringify([{ id: "a", type: "tab" }]),
    });
    expect(post.status).toBe(200);
    expect(await post.json()).toMatchObject({ method: "POST", body: '[{"id":"a","type":"tab"}]' });

    // Its comms socket, carried both ways and closed through the tunnel.
    const comms = new WebSocket(`${member.origin.replace(/^http/, "ws")}/comms`, {
      headers: { cookie: member.cookie },
      origin: member.origin,
      lookup: localhostLookup as never,
    });
    const received: string[] = [];
    comms.on("message", (data) => received.push(String(data)));
    await new Promise((resolve) => comms.once("open", resolve));
    await until("the socket opened", async () => (received.length > 0 ? true : undefined));
    comms.send('{"subscribe":"debug"}');
    await until("its echo", async () => (received.length > 1 ? true : undefined));
    expect(received).toEqual(["opened /comms", 'echo:{"subscribe":"debug"}']);
    comms.close();
    await until("the close carried", async () =>
      tunnel.frames.some((f) => f.ws && f.closed) ? true : undefined,
    );

    // A viewer reads, and only reads; someone of another team finds nothing.
    const viewer = await signIn("viewer");
    expect(
      (await fetch(`${viewer.origin}/flows`, { headers: { cookie: viewer.cookie } })).status,
    ).toBe(200);
    const write = await fetch(`${viewer.origin}/flows`, {
      method: "POST",
      headers: { cookie: viewer.cookie, origin: viewer.origin },
      body: "[]",
    });
    expect(write.status).toBe(403);
    expect((await openEditor("outsider")).status).toBe(404);
    // Without a session on the platform: its sign-in page first.
    const signedOut = await fetch(`${server.url}/devices/${deviceId}/editor`, {
      headers: { accept: "text/html" },
      redirect: "manual",
    });
    expect(signedOut.headers.get("location")).toMatch(/^\/sign-in\?next=/);
    // Without a session, the editor host sends the person to sign in through the platform.
    const anonymous = await fetch(`${member.origin}/`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe(status.body.url);

    // Disabled: the tunnel closes with 4004 (the agent stops), the host answers 503.
    expect((await put("/editor", roles.member.token, { enabled: false })).body).toEqual({
      enabled: false,
      connected: false,
    });
    await agent.nextCommand((c) => c.command === "stopEditor");
    await until("4004", async () => tunnel.closed);
    expect(tunnel.closed!.code).toBe(4004);
    const again = new FakeTunnel(deviceId, token);
    await until("4004 again", async () => again.closed);
    expect(again.closed!.code).toBe(4004);
    const after = await signIn("member").catch(() => undefined);
    expect(after).toBeUndefined();
  });

  test("leaving developer mode closes the editor; all of it is in the device's log", async () => {
    const tunnel = await enableEditor();
    const member = await signIn("member");
    expect((await put("/mode", roles.owner.token, { mode: "autonomous" })).body).toEqual({
      mode: "autonomous",
    });
    await until("4004", async () => tunnel.closed);
    expect(tunnel.closed!.code).toBe(4004);
    const closed = await fetch(`${member.origin}/flows`, {
      headers: { cookie: member.cookie },
      redirect: "manual",
    });
    expect(closed.status).toBeGreaterThanOrEqual(300);
    const status = await server.request("GET", `/api/v1/devices/${deviceId}/editor`, {
      token: roles.member.token,
    });
    expect(status.body).toEqual({ enabled: false, connected: false });
    const log = await server.request("GET", `/api/v1/devices/${deviceId}/audit-log?limit=50`, {
      token: roles.owner.token,
    });
    const events = (log.body.log as { event: string }[]).map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining([
        "team.device.developer-mode.enabled",
        "device.developer-mode.enabled",
        "device.remote-access.enabled",
        "device.remote-access.disabled",
        "device.developer-mode.disabled",
      ]),
    );
  });

  test("the editor's host: only its own page writes or opens sockets, no dot segments, people judged again", async () => {
    expect((await put("/mode", roles.member.token, { mode: "developer" })).status).toBe(200);
    const tunnel = await enableEditor();
    const member = await signIn("member");
    const ws = member.origin.replace(/^http/, "ws");
    const flows = (headers: Record<string, string>) =>
      fetch(`${member.origin}/flows`, {
        method: "POST",
        headers: { cookie: member.cookie, ...headers },
        body: "[]",
      });
    // Another site's page under the editors' domain (an instance's) posts a form: refused.
    const elsewhere = member.origin.replace(/0-device-[0-9a-f]+/, "someone");
    expect((await flows({ origin: elsewhere })).status).toBe(403);
    expect((await flows({})).status).toBe(403);
    expect((await flows({ origin: member.origin, "sec-fetch-site": "same-site" })).status).toBe(
      403,
    );
    expect((await flows({ origin: member.origin })).status).toBe(200);
    // Reading stays open to a navigation from anywhere.
    const read = await fetch(`${member.origin}/flows`, {
      headers: { cookie: member.cookie, "sec-fetch-site": "cross-site" },
    });
    expect(read.status).toBe(200);

    /** The upgrade's answer: 101 when it opened (the socket is returned), the refusal otherwise. */
    const upgrade = (path: string, origin: string | undefined, cookie = member.cookie) =>
      new Promise<{ status: number; socket: WebSocket }>((resolve) => {
        const socket = new WebSocket(`${ws}${path}`, {
          headers: { cookie },
          ...(origin !== undefined && { origin }),
          lookup: localhostLookup as never,
        });
        socket.once("open", () => resolve({ status: 101, socket }));
        socket.once("unexpected-response", (_request, response) =>
          resolve({ status: response.statusCode ?? 0, socket }),
        );
        socket.once("error", () => resolve({ status: 0, socket }));
      });
    expect((await upgrade("/comms", elsewhere)).status).toBe(403);
    expect((await upgrade("/comms", undefined)).status).toBe(403);
    expect((await upgrade("/other", member.origin)).status).toBe(400);

    // The agent's URL with a malformed escape: that socket is dropped, the server goes on.
    const malformed = new FakeTunnel(deviceId, "%ZZ");
    expect(await malformed.opened).toBe(false);
    expect(tunnel.socket.readyState).toBe(WebSocket.OPEN);

    // Dot segments, raw or percent-encoded, never reach the agent (which puts the path after
    // /device-editor); sent raw, as fetch would normalise them.
    const raw = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(member.origin);
        httpRequest(
          {
            host: "127.0.0.1",
            port: url.port,
            path,
            headers: { host: url.host, cookie: member.cookie },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        )
          .on("error", reject)
          .end();
      });
    expect(await raw("/../node-red-http-in")).toBe(400);
    expect(await raw("/x/%2E%2e/y")).toBe(400);
    expect(await raw("/x/%2e/y")).toBe(400);
    expect(await raw("/flows")).toBe(200);

    // A second cookie of the same name (set for the whole domain by another site) shadows nothing.
    const shadowed = `fp_device_editor=forged; ${member.cookie}`;
    expect((await fetch(`${member.origin}/flows`, { headers: { cookie: shadowed } })).status).toBe(
      200,
    );

    // People judged again: a suspended person is signed out, a removed one's socket closes.
    const people: Record<string, { id: string; cookie: string }> = {};
    for (const name of ["suspended", "removed"]) {
      const person = await server.userWithPassword();
      await addMember(server.db, { teamId: roles.teamId, userId: person.id, role: Role.member });
      sessions[name] = await server.signIn(person.username, person.password);
      people[name] = { id: person.id, cookie: (await signIn(name)).cookie };
    }
    const opened = await Promise.all(
      ["suspended", "removed"].map((name) =>
        upgrade("/comms", member.origin, people[name]!.cookie),
      ),
    );
    expect(opened.map((o) => o.status)).toEqual([101, 101]);
    const closed: number[] = [];
    for (const { socket } of opened) socket.on("close", (code) => closed.push(code));
    await server.db
      .updateTable("users")
      .set({ suspended: true })
      .where("id", "=", people.suspended!.id)
      .execute();
    await removeMember(server.db, roles.teamId, people.removed!.id);
    const suspended = await fetch(`${member.origin}/flows`, {
      headers: { cookie: people.suspended!.cookie },
      redirect: "manual",
    });
    expect(suspended.status).toBe(303);
    await until("both sockets closed", async () => (closed.length === 2 ? true : undefined));
    expect(closed).toEqual([1008, 1008]);

    // The device deleted: its tunnel and the member's socket close, its sessions end.
    const last = await upgrade("/comms", member.origin);
    expect(last.status).toBe(101);
    const deleted = await server.request("DELETE", `/api/v1/devices/${deviceId}`, {
      token: roles.owner.token,
    });
    expect(deleted.status, deleted.text).toBe(200);
    await until("the tunnel closed", async () => tunnel.closed);
    await until("the socket closed", async () =>
      last.socket.readyState === WebSocket.CLOSED ? true : undefined,
    );
  });
});
