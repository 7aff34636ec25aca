// What every HTTP reply carries, and how the framework's own refusals (before any route runs) answer:
// in our envelope, with a fitting status, never Fastify's or Node's bodies.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A request exactly as given (no URL normalization, any method), over node:http. */
function raw(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; url?: string } = {},
): Promise<RawReply> {
  const url = new URL(options.url ?? server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: options.headers },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: response.headers["content-type"]?.includes("json") ? JSON.parse(text) : text,
          }),
        );
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

const bearer = () => ({ authorization: `Bearer ${server.adminToken}` });

function expectEnvelope(reply: RawReply, status: number, code: string) {
  expect(reply.status).toBe(status);
  expect(reply.headers["content-type"]).toMatch(/^application\/json/);
  expect(reply.body).toEqual({
    code,
    error: expect.any(String),
    requestId: reply.headers["x-request-id"],
  });
  expect(reply.body.error).not.toMatch(/FST_|HPE_/);
}

describe("the framework's refusals speak our envelope", () => {
  test("a 2,000-character team id is 404 not_found", async () => {
    const reply = await raw("GET", `/api/v1/teams/${"a".repeat(2000)}`, { headers: bearer() });
    expectEnvelope(reply, 404, "not_found");
  });

  test("bad percent-encoding in the path is 400 invalid_request", async () => {
    for (const path of ["/api/v1/teams/%zz", "/api/v1/teams/%E0%A4%A", "/api/v1/user/tokens/%"]) {
      const reply = await raw("GET", path, { headers: bearer() });
      expectEnvelope(reply, 400, "invalid_request");
    }
  });

  test("a URI longer than the server reads is 414 uri_too_long", async () => {
    const reply = await raw("GET", `/api/v1/teams?cursor=${"a".repeat(20_000)}`, {
      headers: bearer(),
    });
    expectEnvelope(reply, 414, "uri_too_long");
  });

  test("headers larger than the server reads are 431 headers_too_large", async () => {
    const reply = await raw("GET", "/api/v1/user", {
      headers: { ...bearer(), "x-filler": "a".repeat(20_000) },
    });
    expectEnvelope(reply, 431, "headers_too_large");
  });

  test("a method HTTP does not know is 501 not_implemented", async () => {
    const reply = await raw("FROB", "/api/v1/teams", { headers: bearer() });
    expectEnvelope(reply, 501, "not_implemented");
  });

  test("a known method the path does not answer is 405 method_not_allowed with Allow", async () => {
    const patch = await raw("PATCH", "/api/v1/teams", { headers: bearer() });
    expectEnvelope(patch, 405, "method_not_allowed");
    expect(patch.headers.allow).toBe("GET, HEAD, POST");
    const patchTeam = await raw("PATCH", "/api/v1/teams/someteamid1", { headers: bearer() });
    expectEnvelope(patchTeam, 405, "method_not_allowed");
    expect(patchTeam.headers.allow).toBe("DELETE, GET, HEAD, PUT");
    // Still behind authentication: without a token it is the 401 of every route under /api/.
    expectEnvelope(await raw("PATCH", "/api/v1/teams"), 401, "unauthorized");
    // A path no route has stays a plain 404.
    expectEnvelope(await raw("PATCH", "/api/v1/nothing", { headers: bearer() }), 404, "not_found");
  });

  test("malformed JSON, a body over the limit and a wrong content type answer in the envelope", async () => {
    const json = { ...bearer(), "content-type": "application/json" };
    expectEnvelope(
      await raw("POST", "/api/v1/teams", { headers: json, body: '{"name":' }),
      400,
      "invalid_request",
    );
    expectEnvelope(
      await raw("POST", "/api/v1/teams", {
        headers: json,
        body: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }),
      }),
      413,
      "payload_too_large",
    );
    expectEnvelope(
      await raw("POST", "/api/v1/teams", {
        headers: { ...bearer(), "content-type": "application/xml" },
        body: "<team/>",
      }),
      415,
      "unsupported_media_type",
    );
  });
});

describe("response headers", () => {
  const replies = () => ({
    "GET /api/v1/user": raw("GET", "/api/v1/user", { headers: bearer() }),
    "401": raw("GET", "/api/v1/user"),
    "404": raw("GET", "/api/v1/teams/doesnotexist1", { headers: bearer() }),
    "400 bad URL (router)": raw("GET", "/api/v1/teams/%zz", { headers: bearer() }),
    "404 long id (router)": raw("GET", `/api/v1/teams/${"a".repeat(200)}`, { headers: bearer() }),
    "501 (Node's parser)": raw("FROB", "/api/v1/user"),
    "/healthz": raw("GET", "/healthz"),
    "/api/ page": raw("GET", "/api/", { headers: { ...bearer(), accept: "text/html" } }),
  });

  test("every reply is nosniff, not cacheable, and names no framework", async () => {
    for (const [name, pending] of Object.entries(replies())) {
      const reply = await pending;
      expect(reply.headers["x-content-type-options"], name).toBe("nosniff");
      expect(reply.headers["cache-control"], name).toBe("no-store");
      expect(reply.headers["x-powered-by"], name).toBeUndefined();
      expect(reply.headers.server, name).toBeUndefined();
    }
  });

  test("the reply that carries a new token's value is no-store", async () => {
    const reply = await server.request("POST", "/api/v1/user/tokens", { body: { name: "cache" } });
    expect(reply.status).toBe(200);
    expect(reply.body.token).toMatch(/^fpp_/);
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });

  test("API replies may load and frame nothing; the viewer page allows exactly its own code", async () => {
    const api = await raw("GET", "/api/v1/user", { headers: bearer() });
    expect(api.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(api.headers["content-security-policy"]).toContain("frame-ancestors 'none'");

    const page = await raw("GET", "/api/", { headers: { ...bearer(), accept: "text/html" } });
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[^']+' 'sha256-[^']+'(;|$)/);
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("connect-src 'self' http://127.0.0.1:3000");
  });

  test("no CORS headers unless CORS_ORIGINS names the origin", async () => {
    const reply = await raw("GET", "/api/v1/user", {
      headers: { ...bearer(), origin: "https://elsewhere.example" },
    });
    expect(reply.status).toBe(200);
    for (const name of Object.keys(reply.headers)) expect(name).not.toMatch(/^access-control-/);
    const preflight = await raw("OPTIONS", "/api/v1/teams", {
      headers: { origin: "https://elsewhere.example", "access-control-request-method": "POST" },
    });
    for (const name of Object.keys(preflight.headers)) expect(name).not.toMatch(/^access-control-/);
  });

  test("with CORS_ORIGINS, the named origins get CORS headers and preflights need no token", async () => {
    const allowed = "https://console.example";
    const cors = await startServer({ corsOrigins: [allowed] });
    try {
      const preflight = await raw("OPTIONS", "/api/v1/teams", {
        url: cors.url,
        headers: {
          origin: allowed,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers["access-control-allow-origin"]).toBe(allowed);
      expect(preflight.headers["access-control-allow-methods"]).toContain("POST");
      expect(preflight.headers["access-control-allow-headers"]).toContain("authorization");
      expect(preflight.headers["access-control-allow-credentials"]).toBeUndefined();

      const get = await raw("GET", "/api/v1/user", {
        url: cors.url,
        headers: { authorization: `Bearer ${cors.adminToken}`, origin: allowed },
      });
      expect(get.status).toBe(200);
      expect(get.headers["access-control-allow-origin"]).toBe(allowed);
      expect(get.headers["access-control-expose-headers"]).toContain("x-request-id");

      const other = await raw("GET", "/api/v1/user", {
        url: cors.url,
        headers: { authorization: `Bearer ${cors.adminToken}`, origin: "https://evil.example" },
      });
      expect(other.headers["access-control-allow-origin"]).toBeUndefined();
      // A preflight is no way around authentication: the real request still needs the token.
      const anonymous = await raw("GET", "/api/v1/user", {
        url: cors.url,
        headers: { origin: allowed },
      });
      expectEnvelope(anonymous, 401, "unauthorized");
    } finally {
      await cors.close();
    }
  });
});
