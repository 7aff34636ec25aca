// The REST replies are written by serializers compiled from the procedures' output schemas
// (core/rest.ts), not checked by zod: every JSON route must have one, and it must write exactly
// what zod's parse of the same value would (the schema's properties, nothing a view adds). That
// every reply matches the served document is checked by the walks (document-check.ts).
import { createRequire } from "node:module";
import { describe, expect, test } from "vitest";
import type { z } from "zod";
import { restRoutes } from "../../src/core/rest";
import { appRouter } from "../../src/router";

// Fastify's own serializer compiler, as the server uses it.
const fromFastify = createRequire(createRequire(import.meta.url).resolve("fastify"));
const compile = fromFastify("fast-json-stringify") as (schema: object) => (data: unknown) => string;

describe("REST reply serializers", () => {
  test("every JSON route has a response schema, and it compiles", () => {
    const missing: string[] = [];
    for (const route of restRoutes(appRouter)) {
      if (route.contentType || route.successStatus === 204) continue;
      if (!route.responseSchema()) {
        missing.push(`${route.method} ${route.path}`);
        continue;
      }
      expect(() => compile(route.responseSchema()!), `${route.method} ${route.path}`).not.toThrow();
    }
    expect(missing).toEqual([]);
  });

  test("a team as a view builds it, with a column too many: the same JSON as zod's parse, without the column", () => {
    const route = restRoutes(appRouter).find(
      (r) => r.method === "GET" && r.path === "/api/v1/teams/{teamId}",
    )!;
    const output = (route.procedure._def as { output?: z.ZodType }).output!;
    const team = {
      id: "t1",
      name: 'Team "one" \u2028',
      slug: "team-one",
      links: { self: "/api/v1/teams/t1" },
      type: {
        id: "ty1",
        name: "Starter",
        active: true,
        order: 1,
        description: null,
        properties: {},
      },
      memberCount: 3,
      createdAt: "2026-11-25T12:00:00.000Z",
      updatedAt: "2026-11-25T12:00:00.000Z",
    };
    const parsed = output.safeParse(team);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const serialized = compile(route.responseSchema()!)({ ...team, token_digest: "secret" });
    expect(JSON.parse(serialized)).toEqual(JSON.parse(JSON.stringify(parsed.data)));
    expect(serialized).not.toContain("secret");
  });

  test("a required property missing is refused, not written", () => {
    const route = restRoutes(appRouter).find(
      (r) => r.method === "GET" && r.path === "/api/v1/user/teams",
    )!;
    expect(() => compile(route.responseSchema()!)({ meta: {}, teams: [] })).toThrow(/count/);
  });
});
