// Response headers a security review expects, from well-kept plugins rather than by hand: helmet's
// set on every reply (nosniff among them), a Content-Security-Policy that lets an API reply load
// nothing at all (pages loosen it per route, with hashes of their inline code), no caching of
// anything under /api or /trpc (every reply there is private, and one of them carries a token
// value), and CORS headers only for the origins CORS_ORIGINS names.
import cors from "@fastify/cors";
import helmet from "@fastify/helmet";
import type { FastifyInstance, FastifyReply } from "fastify";
import fp from "fastify-plugin";
import helmetHeaders from "helmet";
import { API_CSP } from "../core/security-policy";

export interface SecurityOptions {
  /** Origins allowed to call the API from a browser; none (the default): no CORS headers. */
  corsOrigins?: string[];
}

function helmetOptions(opts: SecurityOptions) {
  return {
    contentSecurityPolicy: { useDefaults: false as const, directives: API_CSP },
    // Same-origin isolation would stop a page on an allowed CORS origin reading the replies.
    crossOriginResourcePolicy: opts.corsOrigins?.length
      ? { policy: "cross-origin" as const }
      : true,
  };
}

export const securityPlugin = fp(async (app: FastifyInstance, opts: SecurityOptions) => {
  await app.register(helmet, { global: true, ...helmetOptions(opts) });
  // The router's own refusals (bad URL, parameter too long) are sent before any hook runs.
  const headers = helmetHeaders(helmetOptions(opts));
  app.decorate("frameworkReplyHeaders", (reply: FastifyReply) => {
    headers(reply.request.raw, reply.raw, () => {});
    reply.header("cache-control", "no-store");
  });
  if (opts.corsOrigins?.length) {
    await app.register(cors, {
      origin: opts.corsOrigins,
      methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
      allowedHeaders: ["authorization", "content-type"],
      exposedHeaders: ["x-request-id", "retry-after"],
      // Bearer tokens only: a cross-origin page never rides on a signed-in browser's cookies.
      credentials: false,
      maxAge: 600,
    });
  }
  app.addHook("onSend", async (_request, reply) => {
    reply.header("cache-control", "no-store");
  });
});

declare module "fastify" {
  interface FastifyInstance {
    /** Sets the security headers on a reply that no hook sees (the router's refusals). */
    frameworkReplyHeaders(reply: FastifyReply): void;
  }
}
