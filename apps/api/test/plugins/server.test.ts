import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { restRoutes } from "../../src/core/rest";
import { devices } from "../../src/devices/index";
import { rollouts } from "../../src/rollouts/index";
import { events } from "../../src/events/index";
import { appRouter } from "../../src/router";
import { startServer, type TestServer } from "../support/harness";
import { isAgentOperation } from "../support/walk";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe("health", () => {
  test("/healthz names the platform and nothing about it, /readyz answers with no data; neither needs a token", async () => {
    const live = await server.request("GET", "/healthz", { token: null });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: "ok", platform: "flowplane" });
    const ready = await server.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(200);
    expect(ready.text).toBe("");
  });
});

describe("authentication", () => {
  test("every route under /api/ refuses a request without a token (401 unauthorized)", async () => {
    for (const path of ["/api/", "/api/json", "/api/v1/user", "/api/v1/teams", "/api/v1/nothing"]) {
      const reply = await server.request("GET", path, { token: null });
      expect(reply.status, path).toBe(401);
      expect(reply.body).toMatchObject({ code: "unauthorized", error: "unauthorized" });
    }
    const trpc = await server.request("GET", "/trpc/user.me", { token: null });
    expect(trpc.status).toBe(401);
  });

  test("a malformed, mistyped or unknown token is 401, as is a non-Bearer scheme", async () => {
    const good = server.adminToken;
    const flipped = good.slice(0, 10) + (good[10] === "a" ? "b" : "a") + good.slice(11);
    const unknown = (await server.user()).token;
    await server.db.deleteFrom("access_tokens").where("name", "=", "test").execute();
    for (const header of [
      "Bearer nonsense",
      `Bearer ${flipped}`,
      `Bearer ${unknown}`,
      `Basic ${good}`,
      `Bearer  ${good}`,
      "Bearer",
    ]) {
      const reply = await server.request("GET", "/api/v1/user", {
        token: null,
        headers: { authorization: header },
      });
      expect(reply.status, header.slice(0, 12)).toBe(401);
      expect(reply.body.code).toBe("unauthorized");
    }
  });
});

describe("errors", () => {
  test("an unknown path under /api/v1 is 404 not_found once authenticated", async () => {
    const reply = await server.request("GET", "/api/v1/nothing-here");
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: "not_found" });
  });

  test("every error carries the request id that is also in the x-request-id header", async () => {
    const reply = await server.request("GET", "/api/v1/teams/doesnotexist1");
    expect(reply.status).toBe(404);
    expect(reply.body.requestId).toBe(reply.headers.get("x-request-id"));
  });

  test("a body that is not application/json is 415 unsupported_media_type", async () => {
    const reply = await server.request("POST", "/api/v1/teams", {
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(reply.status).toBe(415);
    expect(reply.body.code).toBe("unsupported_media_type");
    const plain = await server.request("POST", "/api/v1/teams", {
      body: "hello",
      headers: { "content-type": "text/plain" },
    });
    expect(plain.status).toBe(415);
  });

  test("malformed JSON is 400 invalid_request", async () => {
    const reply = await server.request("POST", "/api/v1/teams", { body: "{nope" });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("invalid_request");
  });

  test("a body over the limit is 413 payload_too_large and nothing is written", async () => {
    const reply = await server.request("POST", "/api/v1/teams", {
      body: { name: "x".repeat(2 * 1024 * 1024) },
    });
    expect(reply.status).toBe(413);
    expect(reply.body.code).toBe("payload_too_large");
    const teams = await server.db.selectFrom("teams").select("id").execute();
    expect(teams).toHaveLength(0);
  });

  test("a JSON body that is not an object is 400", async () => {
    for (const body of ["[1,2]", '"text"', "42"]) {
      const reply = await server.request("POST", "/api/v1/teams", { body });
      expect(reply.status, body).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
    }
  });

  test("no error body carries a stack trace or driver text", async () => {
    const reply = await server.request("POST", "/api/v1/teams", { body: { name: 123 } });
    expect(reply.status).toBe(400);
    expect(reply.text).not.toMatch(/at .*\.ts:\d+|stack|node_modules/);
  });
});

describe("the OpenAPI document", () => {
  test("/api/json is a valid OpenAPI 3.0.3 document with the bearer scheme", async () => {
    const reply = await server.request("GET", "/api/json");
    expect(reply.status).toBe(200);
    const document = reply.body;
    expect(document.openapi).toBe("3.0.3");
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.components.securitySchemes.bearerAuth).toEqual({
      type: "http",
      scheme: "bearer",
    });
  });

  test("every operation is tagged, secured, and declares its errors with the APIError schema", () => {
    for (const [path, methods] of Object.entries(server.document.paths)) {
      for (const [method, operation] of Object.entries(methods) as [string, any][]) {
        const where = `${method} ${path}`;
        expect(operation.tags?.length, where).toBeGreaterThan(0);
        // The device agent's own: the device's token, a person's (the registration's status) or
        // none (anonymous: starting a registration and polling it); its flows' reports to a
        // rollout, that rollout's health credential.
        if (isAgentOperation(operation)) {
          expect(
            [[{ deviceToken: [] }], [{ rolloutHealthToken: [] }], [{ bearerAuth: [] }], []],
            where,
          ).toContainEqual(operation.security);
          expect(operation["x-permission"], where).toBeUndefined();
        } else {
          expect(operation.security, where).toEqual([{ bearerAuth: [] }]);
          expect(operation.responses["401"], where).toBeDefined();
        }
        for (const [status, response] of Object.entries(operation.responses) as [string, any][]) {
          if (Number(status) >= 400) {
            const schema = response.content["application/json"].schema;
            // The check-in's 409 is the envelope with what the device should run.
            if (where === "post /api/v1/devices/{deviceId}/live/state" && status === "409") {
              expect(schema.required, `${where} ${status}`).toEqual(
                expect.arrayContaining(["code", "error", "requestId", "project", "application"]),
              );
              continue;
            }
            expect(schema, `${where} ${status}`).toEqual({
              $ref: "#/components/schemas/APIError",
            });
          }
        }
      }
    }
    expect((server.document as any).components.securitySchemes.deviceToken).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
  });

  test("the document and the served routes agree, route for route", () => {
    const documented = Object.entries(server.document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const served = [
      ...restRoutes(appRouter).map((r) => `${r.method} ${r.path}`),
      ...devices.docs.map((doc) => `${doc.method} ${doc.path}`),
      ...rollouts.docs.map((doc) => `${doc.method} ${doc.path}`),
      ...events.docs.map((doc) => `${doc.method} ${doc.path}`),
    ].sort();
    expect(documented).toEqual(served);
    // And Fastify really has each of them.
    for (const route of served) {
      const [method, path] = route.split(" ") as [string, string];
      const url = path.replace(/\{(\w+)\}/g, ":$1");
      expect(server.app.hasRoute({ method: method as "GET", url }), route).toBe(true);
    }
  });

  test("the required fields of the resources are marked required", () => {
    const schemas = (server.document as any).components.schemas;
    expect(schemas.Team.required).toEqual(
      expect.arrayContaining(["id", "name", "slug", "links", "memberCount", "createdAt"]),
    );
    expect(schemas.PersonalAccessToken.required).toContain("token");
  });

  test("/api/ answers JSON by default and a self-contained viewer to browsers", async () => {
    const json = await server.request("GET", "/api/", { headers: { accept: "application/json" } });
    expect(json.status).toBe(200);
    expect(json.body.openapi).toBe("3.0.3");
    const html = await server.request("GET", "/api/", {
      headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
    });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html.text).toContain("SwaggerUIBundle");
    expect(html.text).toContain('"openapi":"3.0.3"');
    expect(html.text).not.toMatch(/<script[^>]+src=/);
  });
});
