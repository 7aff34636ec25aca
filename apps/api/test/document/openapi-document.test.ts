// The served OpenAPI document is what clients generate code from: a change to it must be meant.
// This compares the document served now with the copy saved in test/document/openapi/, keys sorted (the
// order of paths and fields is not part of the contract). After an intended change to the API,
// save the new copy with `pnpm --filter @flowplane/api exec vitest run test/document/openapi-document.test.ts -u`
// and review its diff.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentChecker } from "../support/document-check";
import { startServer, type TestServer } from "../support/harness";

/** The document with every object's keys in order; arrays keep theirs (it can mean something). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

const text = (value: unknown) => `${JSON.stringify(sortedKeys(value), null, 2)}\n`;

/** "METHOD path" of every operation that declares a 429. */
const rateLimitedOperations = (server: TestServer) =>
  Object.entries(server.document.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => "429" in operation.responses)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    .sort();

describe("the served OpenAPI document", () => {
  // Started once, in a hook: the tests read what they serve (none changes anything).
  let plain: TestServer;
  let limited: TestServer;
  beforeAll(async () => {
    [plain, limited] = await Promise.all([
      startServer(),
      startServer({ rateLimits: { enabled: true } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([plain, limited].filter(Boolean).map((server) => server.close()));
  });

  it("is the saved one", async () => {
    const server = plain;
    await expect(text(server.document)).toMatchFileSnapshot("./openapi/document.json");
    await expect(text(rateLimitedOperations(server))).toMatchFileSnapshot(
      "./openapi/rate-limited-operations.json",
    );
  });

  it("declares 429 on every operation with FlowFuse's optional rate limits on, else the same", async () => {
    const paths = (server: TestServer) => Object.keys(server.document.paths).sort();
    expect(paths(limited)).toEqual(paths(plain));
    for (const [path, methods] of Object.entries(limited.document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        // The agent's calls with its device's token, and its flows' reports to a rollout, are never
        // counted (`rateLimit: false`).
        const security = (operation as { security?: Record<string, unknown>[] }).security;
        if (security?.some((scheme) => "deviceToken" in scheme || "rolloutHealthToken" in scheme)) {
          expect(operation.responses, `${method} ${path}`).not.toHaveProperty("429");
          continue;
        }
        expect(operation.responses, `${method} ${path}`).toHaveProperty("429");
        const { 429: _limited, ...others } = operation.responses;
        const { 429: _plain, ...plainOthers } = plain.document.paths[path]![method]!.responses;
        expect(others, `${method} ${path}`).toEqual(plainOthers);
      }
    }
  });

  it("holds every reply to it: a status an operation does not declare, a body not of its schema", async () => {
    const server = plain;
    const check = documentChecker(server.document);
    const envelope = JSON.stringify({ code: "conflict", error: "x", requestId: "r" });
    const reply = { method: "GET", url: "/api/v1/user", contentType: "application/json" };
    expect(check({ ...reply, status: 409, text: envelope })).toEqual([
      expect.stringContaining("status 409 is not in the document"),
    ]);
    expect(check({ ...reply, status: 200, text: "{}" })).toEqual([
      expect.stringContaining("must have required property"),
    ]);
    expect(check({ ...reply, url: "/account/login", status: 400, text: "{}" })).toEqual([
      expect.stringContaining("not the error envelope"),
    ]);
    // A reply to a client other than the harness's (here a bare fetch) is checked by the server's
    // hook: the last administrator deleting their own account is a declared 400.
    const own = await fetch(`${server.url}/api/v1/user`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(own.status).toBe(400);
    expect(check({ ...reply, method: "DELETE", status: 400, text: await own.text() })).toEqual([]);
  });
});
