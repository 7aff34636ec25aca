// What a device may write into its team's audit log (issue 32, finding 8): only the events its
// agent and its Node-RED report (FlowFuse's names: `stopped`, `crashed`, `flows.set` …), never one
// of the platform's own (`team.deleted`); and a body the database cannot store (NUL, a lone
// surrogate, JSON nested too deep) is 400 invalid_request, as the team library's routes answer.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { createTeam, makeUser, type TestTeam, type TestUser } from "../support/team-fixtures";

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let device: { id: string; credentials: { token: string } };

beforeAll(async () => {
  server = await startServer();
  owner = await makeUser(server);
  team = await createTeam(server, owner);
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: "pi", team: team.id },
  });
  device = reply.body;
});
afterAll(() => server.close());

async function post(path: string, token: string, json: string) {
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: json,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const audit = (json: string) =>
  post(`/logging/device/${device.id}/audit`, device.credentials.token, json);

const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("a device's audit events", () => {
  test("the agent's and Node-RED's events are kept; a platform event name is 400 and not logged", async () => {
    for (const event of ["stopped", "crashed", "flows.set", "nodes.install", "auth.login"]) {
      expect(await audit(JSON.stringify({ event, info: { code: "x" } })), event).toEqual({
        status: 200,
        body: {},
      });
    }
    for (const event of ["team.deleted", "device.deleted", "user.admin.created", "x"]) {
      const reply = await audit(JSON.stringify({ event }));
      expect(reply.status, event).toBe(400);
      expect(reply.body).toMatchObject({ code: "invalid_request", requestId: expect.any(String) });
    }
    const log = await server.request("GET", `/api/v1/teams/${team.id}/audit-log?limit=100`, {
      token: owner.token,
    });
    const events = log.body.log.map((entry: { event: string }) => entry.event);
    expect(events).toContain("flows.set");
    expect(events).not.toContain("team.deleted");
    expect(events).not.toContain("device.deleted");
  });

  test("NUL, a lone surrogate or JSON nested too deep is 400 invalid_request, never 500", async () => {
    for (const json of [
      String.raw`{"event":"stopped","info":{"code":"a\u0000b"}}`,
      String.raw`{"event":"stopped","info":{"code":"\ud800"}}`,
      String.raw`{"event":"stopped","k\u0000":1}`,
      `{"event":"stopped","info":${deep(100_000)}}`,
      `{"event":"stopped","info":${deep(64)}}`,
    ]) {
      const reply = await audit(json);
      expect(reply.status, json.slice(0, 60)).toBe(400);
      expect(reply.body).toMatchObject({ code: "invalid_request", requestId: expect.any(String) });
    }
  });
});

describe("the team library's routes", () => {
  test("NUL, a lone surrogate or JSON nested too deep is 400 invalid_request, never 500", async () => {
    const path = `/storage/library/${team.id}/faulty`;
    for (const json of [
      `{"type":"flows","meta":{},"body":[${deep(100_000)}]}`,
      `{"type":"flows","meta":{},"body":{"a":${deep(100)}}}`,
      String.raw`{"type":"flows","meta":{},"body":[{"id":"a\u0000"}]}`,
      String.raw`{"type":"flows","meta":{},"body":{"k\ud800":1}}`,
      String.raw`{"type":"functions","meta":{"x":"\u0000"},"body":"x"}`,
      String.raw`{"type":"functions","meta":{},"body":"\ud800"}`,
    ]) {
      const reply = await post(path, owner.token, json);
      expect(reply.status, json.slice(0, 60)).toBe(400);
      expect(reply.body).toMatchObject({ code: "invalid_request", requestId: expect.any(String) });
    }
  });
});
