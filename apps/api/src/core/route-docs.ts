// Routes under /api/v1 outside tRPC (the device agent's): each is declared once, with the zod
// schemas its handler parses and answers with, and that declaration both names the Fastify route
// (`routeUrl`) and becomes its operation in the OpenAPI document (`documentRoutes`, from
// core/openapi.ts), so the document cannot drift from the route.
import { describePermission, type Permission } from "@flowplane/auth";
import type { OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";

/** The security schemes such routes use, besides the people's `bearerAuth`. */
export const ROUTE_SECURITY_SCHEMES = {
  deviceToken: {
    type: "http",
    scheme: "bearer",
    description:
      "The device's own token (`fpd_…`, its `device.yml`'s `token`): it reaches the device's own live routes and nothing else.",
  },
  rolloutHealthToken: {
    type: "http",
    scheme: "bearer",
    description:
      "The credential a rollout's health tab carries in the flows it serves a device (docs/rollouts.md): it reaches that device's health reports to that rollout and nothing else.",
  },
} as const;

export interface RouteResponse {
  description: string;
  /** The body; none on a 4xx/5xx is the error envelope (APIError), none on a 2xx no body. */
  schema?: z.ZodType;
  /** A body that is not JSON (a stream of Server-Sent Events: `text/event-stream`). */
  contentType?: string;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

export interface RouteDoc {
  /** The operation's id (`deviceAgent-checkIn`). */
  id: string;
  method: "GET" | "POST";
  /** As the document writes it: `/api/v1/devices/{deviceId}/live/state`. */
  path: string;
  tags: string[];
  summary: string;
  description: string;
  /** Who calls: a scheme of ROUTE_SECURITY_SCHEMES, `bearerAuth` (a person), or none (anyone). */
  security: keyof typeof ROUTE_SECURITY_SCHEMES | "bearerAuth" | "none";
  /** A person's route: the matrix's permission it applies (`x-permission`, as procedures'). */
  permission?: Permission;
  /**
   * Whether it may answer 429: "always" (a limit of its own), "global" (only under the global
   * limit, when RATE_LIMITS=on); none: never counted (`config.rateLimit: false`).
   */
  rateLimit?: "always" | "global";
  params?: z.ZodObject;
  /** Its query parameters. */
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, RouteResponse>;
}

const tooManyRequests: RouteResponse = {
  description:
    "Rate limited (`too_many_requests`); the `Retry-After` header gives the seconds to wait",
  headers: {
    "Retry-After": {
      description: "Seconds until the limit's window ends",
      schema: { type: "integer", minimum: 1 },
    },
  },
};

/** Any operation: its database down, restarting or out of connections (errors.ts). */
export const DATABASE_UNAVAILABLE_DESCRIPTION =
  "The database is unavailable for now (`database_unavailable`): retry after the `Retry-After` header's seconds";

export const retryAfterHeader = {
  "Retry-After": {
    description: "Seconds to wait before trying again",
    schema: { type: "integer", minimum: 1 },
  },
};

const databaseUnavailable: RouteResponse = {
  description: DATABASE_UNAVAILABLE_DESCRIPTION,
  headers: retryAfterHeader,
};

/** The route's URL as Fastify writes it (`/api/v1/devices/:deviceId/live/state`). */
export const routeUrl = (doc: RouteDoc) => doc.path.replace(/\{(\w+)\}/g, ":$1");

/**
 * The schema as OpenAPI 3.0 writes it; schemas with an id (`.meta({ id })`) become references to
 * the document's components, as the procedures' do.
 */
function schemaOf(document: OpenAPIObject, schema: z.ZodType, io: "input" | "output") {
  const json = z.toJSONSchema(schema, { target: "openapi-3.0", io, unrepresentable: "any" });
  // zod names the definitions `$defs`, or `definitions` for OpenAPI 3.0 when the root has an id.
  const text = JSON.stringify(json).replace(
    /"#\/(\$defs|definitions)\//g,
    '"#/components/schemas/',
  );
  type Schemas = NonNullable<NonNullable<OpenAPIObject["components"]>["schemas"]>;
  const {
    $schema: _,
    $defs,
    definitions,
    ...rest
  } = JSON.parse(text) as Record<string, unknown> & { $defs?: Schemas; definitions?: Schemas };
  const components = (document.components ??= {});
  components.schemas = { ...$defs, ...definitions, ...components.schemas };
  return rest;
}

const apiError = { $ref: "#/components/schemas/APIError" };

/**
 * Adds each route's operation (and the security schemes they use) to the document; `globalLimit`:
 * whether the global rate limit is on (RATE_LIMITS=on).
 */
export function documentRoutes(
  document: OpenAPIObject,
  docs: RouteDoc[],
  globalLimit: boolean,
): void {
  document.components ??= {};
  document.components.securitySchemes = {
    ...document.components.securitySchemes,
    ...ROUTE_SECURITY_SCHEMES,
  };
  // Tags are named by the operations alone, as the procedures' are (a document's `tags` list
  // would put those it names first in a viewer).
  for (const doc of docs) {
    const limited = doc.rateLimit === "always" || (doc.rateLimit === "global" && globalLimit);
    const responses = {
      ...doc.responses,
      ...(limited && { 429: tooManyRequests }),
      503: databaseUnavailable,
    };
    const params = doc.params ? schemaOf(document, doc.params, "input") : undefined;
    const properties = (params?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const query = doc.query ? schemaOf(document, doc.query, "input") : undefined;
    const queryProperties = (query?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const required = new Set((query?.required ?? []) as string[]);
    const parameters = [
      ...Object.entries(properties).map(([name, schema]) => ({
        in: "path",
        name,
        required: true,
        schema,
      })),
      ...Object.entries(queryProperties).map(([name, schema]) => ({
        in: "query",
        name,
        required: required.has(name),
        ...(typeof schema.description === "string" && { description: schema.description }),
        schema,
      })),
    ];
    const operation: Record<string, unknown> = {
      operationId: doc.id,
      summary: doc.summary,
      description: doc.permission
        ? `${doc.description}\n\n${describePermission(doc.permission)}`
        : doc.description,
      ...(doc.permission && { "x-permission": doc.permission }),
      tags: doc.tags,
      security: doc.security === "none" ? [] : [{ [doc.security]: [] }],
      ...(parameters.length > 0 && { parameters }),
      ...(doc.body && {
        requestBody: {
          required: !doc.body.safeParse(undefined).success,
          content: { "application/json": { schema: schemaOf(document, doc.body, "input") } },
        },
      }),
      responses: Object.fromEntries(
        Object.entries(responses).map(([status, response]) => {
          const schema = response.schema
            ? schemaOf(document, response.schema, "output")
            : Number(status) >= 400
              ? apiError
              : undefined;
          return [
            status,
            {
              description: response.description,
              ...(response.headers && { headers: response.headers }),
              ...((schema || response.contentType) && {
                content: {
                  ...(schema && { "application/json": { schema } }),
                  ...(response.contentType && {
                    [response.contentType]: { schema: { type: "string" } },
                  }),
                },
              }),
            },
          ];
        }),
      ),
    };
    const paths = (document.paths ??= {}) as Record<string, Record<string, unknown>>;
    (paths[doc.path] ??= {})[doc.method.toLowerCase()] = operation;
  }
}
