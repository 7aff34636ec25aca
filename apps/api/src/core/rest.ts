// REST under /api/v1, generated from the same procedures (and their `openapi` meta) that tRPC
// serves and that the OpenAPI document describes. Each route calls its procedure directly: no
// second router, no per-request proxy; the procedure's middleware and input schemas do the rest.
// The reply is written by a serializer compiled from the procedure's output schema (zod → JSON
// Schema → fast-json-stringify, Fastify's own serializer compiler), instead of parsing the output
// with zod and then stringifying it: it writes the schema's properties only, so a view still
// cannot leak a column, and a required one missing is still a 500.
import type { AnyProcedure, AnyRouter } from "@trpc/server";
import { TRPCError } from "@trpc/server";
import { getTRPCErrorFromUnknown } from "@trpc/server/unstable-core-do-not-import";
import { z } from "zod";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "./errors";
import type { Context, Meta } from "./trpc";
import {
  claimOrReplay,
  giveBack,
  type HttpExchange,
  idempotencyKeyOf,
  type Keyed,
  keepOutcome,
  type Outcome,
  parseIfMatch,
} from "./writes";

/** Thrown by the idempotency step to stop a create whose kept outcome is answered instead. */
class Replayed extends Error {}

function sendOutcome(reply: FastifyReply, outcome: Outcome) {
  if (outcome.body === null) return reply.send();
  return reply.type("application/json; charset=utf-8").send(outcome.body);
}

export const REST_PREFIX = "/api/v1";

/** The prefix of the people's API context (plugins/people.ts), where the REST routes live. */
export const API_PREFIX = "/api";

/** A route's URL as registered in the people's API context: its path without `/api`. */
export function underApi(url: string): string {
  if (!url.startsWith(`${API_PREFIX}/`)) throw new Error(`${url}: not under ${API_PREFIX}/`);
  return url.slice(API_PREFIX.length);
}

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
  /** Also open to a provisioning token or a one-time code (the meta's `provisioning`, `deviceSetup`). */
  provisioning: boolean;
  /** A DELETE that takes a JSON body (the meta's `bodyOnDelete`). */
  bodyOnDelete: boolean;
  /** Writes that don't collide (the meta's `etag`, `create`; core/writes.ts). */
  etag: boolean;
  create?: "replay" | "secret";
  /**
   * The JSON Schema of the JSON reply, from the output schema (made on the first call, not at
   * start: a server starts with every route and calls few); undefined when there is none.
   */
  responseSchema: () => Record<string, unknown> | undefined;
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
        provisioning: meta.provisioning === true || meta.deviceSetup === true,
        bodyOnDelete: meta.bodyOnDelete === true,
        etag: meta.etag === true,
        create: meta.create,
        responseSchema: once(() =>
          meta.contentType || meta.successStatus === 204
            ? undefined
            : responseSchemaOf((procedure._def as { output?: z.ZodType }).output),
        ),
      },
    ];
  });
}

function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * The output schema as the JSON Schema fast-json-stringify compiles: draft-07, the output side.
 * Undefined when zod cannot represent it (then the reply is validated by zod, as on /trpc).
 */
export function responseSchemaOf(output: z.ZodType | undefined) {
  if (!output) return undefined;
  try {
    const schema = z.toJSONSchema(output, { io: "output", target: "draft-07" }) as Record<
      string,
      unknown
    >;
    delete schema.$schema;
    return withoutConstChoices(schema) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * `anyOf` of constants of one type (a role: 5, 10, 30 or 50) as that type: fast-json-stringify
 * would otherwise run a validator per value to choose a branch that writes the same JSON.
 */
function withoutConstChoices(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutConstChoices);
  if (typeof node !== "object" || node === null) return node;
  const object = node as Record<string, unknown>;
  const choices = object.anyOf;
  if (
    Array.isArray(choices) &&
    choices.length > 0 &&
    choices.every(
      (c: Record<string, unknown>) =>
        "const" in c &&
        (c.type === "string" || c.type === "number" || c.type === "integer") &&
        c.type === (choices[0] as Record<string, unknown>).type &&
        Object.keys(c).every((key) => key === "const" || key === "type" || key === "description"),
    )
  ) {
    const { anyOf: _, ...rest } = object;
    return { ...rest, type: (choices[0] as Record<string, unknown>).type };
  }
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, withoutConstChoices(v)]));
}

type Middleware = ((opts: Record<string, unknown>) => Promise<MiddlewareResult>) & {
  _type?: string;
};
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
interface CallOptions {
  ctx: object;
  path: string;
  type: "query" | "mutation";
  input?: unknown;
  getRawInput: () => Promise<unknown>;
  signal: undefined;
  batchIndex: number;
}

/**
 * Calls a procedure's middleware chain as tRPC's own caller does (the same options, context
 * merging and error wrapping), without its output validator: the compiled serializer writes the
 * reply instead.
 */
function callerWithoutOutputCheck(procedure: AnyProcedure) {
  const def = procedure._def as unknown as { middlewares: Middleware[]; meta: unknown };
  const middlewares = def.middlewares.filter((m) => m._type !== "output");
  const step = async (index: number, opts: CallOptions): Promise<MiddlewareResult> => {
    try {
      return await middlewares[index]!({
        ...opts,
        meta: def.meta,
        next: (next?: { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> }) =>
          step(index + 1, {
            ...opts,
            ctx: next?.ctx ? { ...opts.ctx, ...next.ctx } : opts.ctx,
            input: next && "input" in next ? next.input : opts.input,
            getRawInput: next?.getRawInput ?? opts.getRawInput,
          }),
      });
    } catch (cause) {
      return {
        ok: false,
        error: getTRPCErrorFromUnknown(cause),
      };
    }
  };
  return async (opts: CallOptions): Promise<unknown> => {
    const result = await step(0, opts);
    if (!result.ok) throw result.error;
    return result.data;
  };
}

function restInput(route: RestRoute, request: FastifyRequest): unknown {
  const params = request.params as Record<string, string>;
  if (route.method === "GET" || (route.method === "DELETE" && !route.bodyOnDelete)) {
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
    // Both made on the route's first call, not at start: most routes of a server are never called.
    const plan = once(() => {
      const schema = route.responseSchema();
      const call = schema
        ? callerWithoutOutputCheck(route.procedure)
        : (opts: CallOptions) => route.procedure(opts) as Promise<unknown>;
      return { schema, call };
    });
    let serialize: ((data: unknown) => string) | undefined;
    // A schema the compiler refuses is checked by zod and stringified, as on /trpc.
    const serializerOf = (reply: FastifyReply, schema: Record<string, unknown>) => {
      if (serialize) return serialize;
      try {
        serialize = reply.compileSerializationSchema(schema) as (data: unknown) => string;
      } catch (error) {
        reply.log.warn({ err: error, route: route.path }, "response schema not compiled");
        const output = (route.procedure._def as { output?: z.ZodType }).output!;
        serialize = (data) => JSON.stringify(output.parse(data));
      }
      return serialize;
    };
    app.route({
      method: route.method,
      url: underApi(route.path.replace(/\{(\w+)\}/g, ":$1")),
      config: { preload: route.preload, provisioning: route.provisioning },
      handler: async (request, reply) => {
        const input = restInput(route, request);
        const { schema, call } = plan();
        const ctx = createContext(request);
        const http: HttpExchange = {};
        if (route.etag && route.method !== "GET") {
          http.ifMatch = parseIfMatch(request.headers["if-match"]);
        }
        ctx.http = http;
        const key = route.create ? idempotencyKeyOf(route.create, request) : undefined;
        const run = () =>
          call({
            ctx,
            path: route.procedurePath,
            type,
            getRawInput: async () => input,
            signal: undefined,
            batchIndex: 0,
          });
        const json = (data: unknown): string => {
          if (!schema) return JSON.stringify(data);
          try {
            return serializerOf(reply, schema)(data);
          } catch (cause) {
            // A required property missing: the view does not match its schema.
            throw new TRPCError({
              message: "Output validation failed",
              code: "INTERNAL_SERVER_ERROR",
              cause,
            });
          }
        };
        if (key !== undefined) {
          // Claimed or replayed after the procedure's authorization (the `keyed` middleware).
          let keyed: Keyed | undefined;
          http.beforeCreate = async () => {
            keyed = await claimOrReplay(ctx.db, ctx, key, request);
            if ("replay" in keyed) throw new Replayed();
          };
          let outcome: Outcome;
          try {
            const data = await run();
            // A create answers JSON, or nothing (204).
            outcome = {
              status: route.successStatus,
              body: route.successStatus === 204 ? null : json(data),
            };
          } catch (error) {
            if (keyed && "replay" in keyed) {
              reply.code(keyed.replay.status).header("idempotent-replayed", "true");
              return sendOutcome(reply, keyed.replay);
            }
            if (keyed?.claim) await giveBack(ctx.db, request, keyed.claim);
            throw error;
          }
          if (keyed && "claim" in keyed && keyed.claim) {
            await keepOutcome(ctx.db, request, keyed.claim, outcome);
          }
          reply.code(outcome.status);
          return sendOutcome(reply, outcome);
        }
        const data: unknown = await run();
        if (http.etag) reply.header("etag", http.etag);
        reply.code(route.successStatus);
        if (route.contentType) return reply.type(`${route.contentType}; charset=utf-8`).send(data);
        if (route.successStatus === 204) return reply.send();
        if (!schema) return data;
        return reply.type("application/json; charset=utf-8").send(json(data));
      },
    });
  }
}
