// REST under /api/v1, generated from the same procedures (and their `openapi` meta) that tRPC
// serves and that the OpenAPI document describes. Each route calls its procedure directly: no
// second router, no per-request proxy; the procedure's middleware and zod schemas do the rest.
import type { AnyProcedure, AnyRouter } from "@trpc/server";
import type { z } from "zod";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidRequest } from "./errors";
import type { Context, Meta } from "./trpc";

export const REST_PREFIX = "/api/v1";

export interface RestRoute {
  /** Dotted procedure path, e.g. `team.byId`. */
  procedurePath: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The full path in OpenAPI form, e.g. `/api/v1/teams/{teamId}`. */
  path: string;
  successStatus: 200 | 201 | 204;
  procedure: AnyProcedure;
  /** Whether the procedure takes no input at all (then an empty query means `undefined`). */
  acceptsNoInput: boolean;
  /** A reply that is not JSON: the procedure's output is its text. */
  contentType?: "text/csv";
  /** What authentication reads with the token for this route (the meta's `preload`). */
  preload?: "userTeams";
}

export function restRoutes(router: AnyRouter): RestRoute[] {
  const procedures = router._def.procedures as Record<string, AnyProcedure>;
  return Object.entries(procedures).flatMap(([procedurePath, procedure]) => {
    const meta = procedure._def.meta as Meta | undefined;
    if (!meta?.openapi || meta.openapi.enabled === false) return [];
    if (!meta.openapi.path.startsWith(`${REST_PREFIX}/`)) {
      throw new Error(`${procedurePath}: REST paths start with ${REST_PREFIX}/`);
    }
    return [
      {
        procedurePath,
        method: meta.openapi.method,
        path: meta.openapi.path,
        successStatus: meta.successStatus ?? 200,
        procedure,
        acceptsNoInput: (procedure._def.inputs as z.ZodType[]).every(
          (parser) => parser.safeParse(undefined).success,
        ),
        contentType: meta.contentType,
        preload: meta.preload,
      },
    ];
  });
}

function restInput(route: RestRoute, request: FastifyRequest): unknown {
  const params = request.params as Record<string, string>;
  if (route.method === "GET" || route.method === "DELETE") {
    const input = { ...(request.query as object), ...params };
    return route.acceptsNoInput && Object.keys(input).length === 0 ? undefined : input;
  }
  const body = request.body;
  // No body at all: the input is the path's. A JSON `null` is a body, and not an object.
  if (body === undefined) return { ...params };
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("The body must be a JSON object", [
      { path: "", message: "Not an object" },
    ]);
  }
  const clash = Object.keys(params).filter((key) => key in body);
  if (clash.length > 0) {
    throw invalidRequest(`Invalid request: ${clash.join(", ")} belongs in the path, not the body`, [
      ...clash.map((path) => ({ path, message: "Unknown field" })),
    ]);
  }
  return { ...body, ...params };
}

export function registerRestRoutes(
  app: FastifyInstance,
  router: AnyRouter,
  createContext: (request: FastifyRequest) => Context,
): void {
  for (const route of restRoutes(router)) {
    const type = route.procedure._def.type as "query" | "mutation";
    app.route({
      method: route.method,
      url: route.path.replace(/\{(\w+)\}/g, ":$1"),
      config: { preload: route.preload },
      handler: async (request, reply) => {
        const input = restInput(route, request);
        const data: unknown = await route.procedure({
          ctx: createContext(request),
          path: route.procedurePath,
          type,
          getRawInput: async () => input,
          signal: undefined,
          batchIndex: 0,
        });
        reply.code(route.successStatus);
        if (route.contentType) return reply.type(`${route.contentType}; charset=utf-8`).send(data);
        return route.successStatus === 204 ? reply.send() : data;
      },
    });
  }
}
