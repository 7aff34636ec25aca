// The procedures, served twice: as REST under /api/v1 (routes generated from their `openapi`
// meta, core/rest.ts) and over tRPC at /trpc (tRPC's own Fastify adapter, over the same router).
import type { AnyRouter } from "@trpc/server";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError, toErrorResponse, unauthorized } from "../core/errors";
import { registerRestRoutes } from "../core/rest";
import type { Context } from "../core/trpc";

export interface ProceduresOptions {
  router: AnyRouter;
  /** The context of a request the authentication plugin has authenticated. */
  context: (request: FastifyRequest) => Context;
}

export const proceduresPlugin = fp(
  async (app: FastifyInstance, opts: ProceduresOptions) => {
    registerRestRoutes(app, opts.router, opts.context);
    await app.register(fastifyTRPCPlugin, {
      prefix: "/trpc",
      trpcOptions: {
        router: opts.router,
        createContext: async ({ req }: { req: FastifyRequest }) => {
          // Authenticated by the authentication plugin's hook.
          if (!req.auth) throw unauthorized();
          return opts.context(req);
        },
        // A refusal's Retry-After (429), as sendError sets it for REST.
        responseMeta: ({ errors }: { errors: Error[] }) => {
          const retryAfter = errors.find((e) => e instanceof ApiError && e.retryAfter);
          return retryAfter instanceof ApiError
            ? { headers: { "retry-after": String(retryAfter.retryAfter) } }
            : {};
        },
        onError: ({ error, req }: { error: Error; req: FastifyRequest }) => {
          if (toErrorResponse(error, req.id).internal)
            req.log.error({ err: error }, "unexpected error");
        },
      },
    });
  },
  { name: "procedures" },
);
