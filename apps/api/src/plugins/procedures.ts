// The procedures over tRPC at /trpc (tRPC's own Fastify adapter), in the people's /trpc context;
// the same router is served as REST under /api/v1 (core/rest.ts) in the people's /api context.
import type { AnyRouter } from "@trpc/server";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { retryAfterOf, toErrorResponse, unauthorized } from "../core/errors";
import type { Context } from "../core/trpc";

export interface ProceduresOptions {
  router: AnyRouter;
  /** The context of a request the authentication plugin has authenticated. */
  context: (request: FastifyRequest) => Context;
}

export async function trpcRoutes(app: FastifyInstance, opts: ProceduresOptions) {
  await app.register(fastifyTRPCPlugin, {
    prefix: "/trpc",
    trpcOptions: {
      router: opts.router,
      createContext: async ({ req }: { req: FastifyRequest }) => {
        // Authenticated by the authentication plugin's hook.
        if (!req.auth) throw unauthorized();
        return opts.context(req);
      },
      // A refusal's Retry-After (429, 503), as sendError sets it for REST.
      responseMeta: ({ errors }: { errors: Error[] }) => {
        const retryAfter = errors.map(retryAfterOf).find((seconds) => seconds);
        return retryAfter ? { headers: { "retry-after": String(retryAfter) } } : {};
      },
      onError: ({ error, req }: { error: Error; req: FastifyRequest }) => {
        if (toErrorResponse(error, req.id).internal)
          req.log.error({ err: error }, "unexpected error");
      },
    },
  });
}
