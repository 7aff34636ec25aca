// Every route the platform serves under /api/v1 is in the served document: the procedures' and
// the device agent's own (read from Fastify's route table, so a route is held to this the moment
// it is added). The agent's operations (tag "Device agent"), which the walks of people's
// operations leave out, are checked here as those walks check the rest: who may call each (a
// person's token is refused on the device's routes; another device's too), and bad input in each
// path parameter and body field (never a 5xx, the envelope, a 400 naming the field or a 404/401).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { rolloutHealthToken } from "@flowplane/auth";
import { startServer, type TestServer, TOKEN_SECRET } from "../support/harness";
import { createTeam, makeUser, type TestTeam, type TestUser } from "../support/team-fixtures";
import { agentOperationsOf, type DocumentOperation, schemaWalker } from "../support/walk";

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
/** Two devices of the team, with their own tokens. */
const devices: { id: string; token: string }[] = [];

beforeAll(async () => {
  server = await startServer({
    rateLimits: { deviceRegistration: { max: 1000, windowMs: 30_000 } },
  });
  owner = await makeUser(server);
  team = await createTeam(server, owner);
  for (const name of ["agent-walk-1", "agent-walk-2"]) {
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name, team: team.id },
    });
    expect(created.status, created.text).toBe(200);
    devices.push({ id: created.body.id, token: created.body.credentials.token });
  }
});
afterAll(() => server?.close());

/** "METHOD /path/{param}" of every route Fastify serves under /api/v1 (HEAD is GET's). */
function servedApiRoutes(): string[] {
  // printRoutes draws the router's radix tree: each line one node, its depth its indentation
  // (four columns a level), its path its ancestors' segments and its own.
  const lines = server.app.printRoutes({ commonPrefix: false }).split("\n");
  const chain: string[] = [];
  const routes: string[] = [];
  for (const line of lines) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    chain.length = depth;
    chain.push(match[2]!);
    const path = chain.join("").replace(/^\/\//, "/");
    for (const method of (match[3] ?? "").split(", ").filter(Boolean)) {
      if (method === "HEAD") continue;
      if (path.startsWith("/api/v1/")) {
        routes.push(`${method} ${path.replace(/:(\w+)/g, "{$1}")}`);
      }
    }
  }
  return [...new Set(routes)].sort();
}

test("every route served under /api/v1 is in the document", () => {
  const served = servedApiRoutes();
  // The tree was read: the procedures' routes and the agent's are there.
  expect(served).toEqual(
    expect.arrayContaining([
      "GET /api/v1/user",
      "POST /api/v1/devices",
      "POST /api/v1/devices/{deviceId}/live/state",
      "GET /api/v1/devices/_/register/done/{doneToken}",
    ]),
  );
  const documented = new Set(
    Object.entries(server.document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    ),
  );
  expect(served.filter((route) => !documented.has(route))).toEqual([]);
  expect([...documented].filter((route) => !served.includes(route))).toEqual([]);
});

/** The operation's path with its parameters filled in. */
const pathOf = (operation: DocumentOperation, values: Record<string, string>) =>
  operation.template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!);

const onDevice = (operation: DocumentOperation) =>
  (operation.operation.security ?? []).some((scheme) => "deviceToken" in scheme);
const onRollout = (operation: DocumentOperation) =>
  (operation.operation.security ?? []).some((scheme) => "rolloutHealthToken" in scheme);

/** A rollout id for the walks: the health route's credential is derived, none need exist. */
const WALKED_ROLLOUT = "walkedrollout1";

describe("the device agent's operations", () => {
  test("they are the agent's own routes, each with its caller", () => {
    const names = agentOperationsOf(server.document).map((o) => o.name);
    expect(names.sort()).toEqual(
      [
        "GET /api/v1/devices/_/register/done/{doneToken}",
        "GET /api/v1/devices/_/register/status/{sessionToken}",
        "GET /api/v1/devices/{deviceId}/editor/token",
        "GET /api/v1/devices/{deviceId}/live/settings",
        "GET /api/v1/devices/{deviceId}/live/snapshot",
        "GET /api/v1/devices/{deviceId}/live/state",
        "POST /api/v1/devices/_/register",
        "POST /api/v1/devices/{deviceId}/live/state",
        "POST /api/v1/rollouts/{rolloutId}/devices/{deviceId}/health",
      ].sort(),
    );
  });

  test("the device's routes take its own token only: a person's, an administrator's or another device's is 401", async () => {
    const [device, other] = devices as [(typeof devices)[0], (typeof devices)[0]];
    for (const operation of agentOperationsOf(server.document).filter(onDevice)) {
      const path = pathOf(operation, { deviceId: device.id });
      const body = operation.method === "POST" ? {} : undefined;
      for (const token of [owner.token, server.adminToken, other.token, null]) {
        const reply = await server.request(operation.method, path, { token, body });
        expect(reply.status, `${operation.name} with ${token?.slice(0, 4)}`).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
      const own = await server.request(operation.method, path, { token: device.token, body });
      expect([200, 409], `${operation.name} with its own token`).toContain(own.status);
    }
  });

  test("a rollout's health route takes its own credential only: a person's, a device's or another rollout's is 401", async () => {
    const [device] = devices as [(typeof devices)[0]];
    for (const operation of agentOperationsOf(server.document).filter(onRollout)) {
      const path = pathOf(operation, { deviceId: device.id, rolloutId: WALKED_ROLLOUT });
      const other = rolloutHealthToken(TOKEN_SECRET, "anotherrollout", device.id);
      for (const token of [owner.token, server.adminToken, device.token, other, null]) {
        const reply = await server.request("POST", path, { token, body: { event: "started" } });
        expect(reply.status, `${operation.name} with ${token?.slice(0, 4)}`).toBe(401);
        expect(reply.body.code).toBe("unauthorized");
      }
      // Its own: taken, and ignored (no rollout watches the device).
      const own = rolloutHealthToken(TOKEN_SECRET, WALKED_ROLLOUT, device.id);
      const reply = await server.request("POST", path, { token: own, body: { event: "started" } });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({ watched: false });
    }
  });

  test("a registration's status is a person's; starting and polling one take no token", async () => {
    const start = await server.request("POST", "/api/v1/devices/_/register", {
      token: null,
      body: {},
    });
    expect(start.status).toBe(200);
    const sessionToken = start.body.registerUrl.split("/").pop();
    const status = `/api/v1/devices/_/register/status/${sessionToken}`;
    expect((await server.request("GET", status, { token: null })).status).toBe(401);
    expect((await server.request("GET", status, { token: devices[0]!.token })).status).toBe(401);
    expect((await server.request("GET", status, { token: owner.token })).status).toBe(202);
    expect((await server.request("GET", start.body.doneUrl, { token: null })).status).toBe(202);
  });

  test("bad input in every path parameter and body field: the envelope, never a 5xx, the field named", async () => {
    const walker = schemaWalker(server.document);
    const device = devices[0]!;
    const badPath = [
      "%00",
      "ab%00cd",
      "%ED%A0%80",
      "%F0",
      "%zz",
      "%",
      "a".repeat(65),
      "a".repeat(2000),
      "doesnotexist1",
    ];
    const badStrings = ["a\u0000b", "\ud800", "a\udc00b", "x".repeat(100_000)];
    for (const operation of agentOperationsOf(server.document)) {
      const token = onDevice(operation)
        ? device.token
        : onRollout(operation)
          ? rolloutHealthToken(TOKEN_SECRET, WALKED_ROLLOUT, device.id)
          : owner.token;
      const valid: Record<string, string> = { deviceId: device.id, rolloutId: WALKED_ROLLOUT };
      const body = operation.method === "POST" ? {} : undefined;
      for (const param of operation.pathParams) {
        for (const value of badPath) {
          const reply = await server.request(
            operation.method,
            pathOf(operation, { ...valid, [param]: value }),
            { token, body },
          );
          const where = `${operation.name} {${param}} ${value.slice(0, 12)}`;
          expect(reply.status, where).toBeLessThan(500);
          // Another id than the device's is not its own (401); a token that is none is 404.
          expect(
            [400, 401, 404],
            `${where}: ${reply.status} ${reply.text.slice(0, 100)}`,
          ).toContain(reply.status);
          expect(typeof reply.body.code, where).toBe("string");
        }
      }
      const schema = walker.bodySchema(operation.operation);
      for (const field of Object.keys(schema?.properties ?? {})) {
        for (const value of [...badStrings, 12345, { x: 1 }, ["x"]]) {
          const reply = await server.request(operation.method, pathOf(operation, valid), {
            token,
            body: { [field]: value },
          });
          const where = `${operation.name} body ${field} ${JSON.stringify(value).slice(0, 12)}`;
          expect(reply.status, `${where}: ${reply.text.slice(0, 200)}`).toBe(400);
          expect(reply.body.code, where).toBe("invalid_request");
          expect(
            // The field, or a field of it (an unknown key inside an object field).
            (reply.body.errors ?? []).some(
              (e: { path: string }) => e.path === field || e.path.startsWith(`${field}.`),
            ),
            where,
          ).toBe(true);
        }
      }
    }
  });
});
