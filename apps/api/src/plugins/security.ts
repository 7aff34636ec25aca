// Response headers a security review expects, from a well-kept library rather than by hand:
// helmet's set on every reply (nosniff among them), a Content-Security-Policy that lets an API
// reply load nothing at all (pages loosen it per route, with hashes of their inline code), no
// caching of anything (every reply under /api or /trpc is private, and one of them carries a token
// value; assets say otherwise for themselves), and CORS headers only for the origins CORS_ORIGINS
// names.
//
// The headers never change between requests, so helmet computes each route's set once, when the
// route is added, and a request only copies it: running helmet's middleware per request (as
// @fastify/helmet does) was most of what a refused request cost.
import cors from "@fastify/cors";
import type { FastifyInstance, FastifyReply } from "fastify";
import fp from "fastify-plugin";
import helmet, { type HelmetOptions } from "helmet";
import type { IncomingMessage, ServerResponse } from "node:http";
import { API_CSP } from "../core/security-policy";

export interface SecurityOptions {
  /** Origins allowed to call the API from a browser; none (the default): no CORS headers. */
  corsOrigins?: string[];
}

/** A route's own helmet options (pages: their policy), merged over the API's. */
export type RouteHelmet = Pick<HelmetOptions, "contentSecurityPolicy" | "referrerPolicy">;

type Headers = Record<string, string>;

function helmetOptions(opts: SecurityOptions): HelmetOptions {
  return {
    contentSecurityPolicy: { useDefaults: false, directives: API_CSP },
    // Same-origin isolation would stop a page on an allowed CORS origin reading the replies.
    crossOriginResourcePolicy: opts.corsOrigins?.length ? { policy: "cross-origin" } : true,
  };
}

/** The headers helmet sets with these options (it sets the same ones on every response). */
function headersOf(options: HelmetOptions): Headers {
  const headers: Headers = {};
  const recorder = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)(
    {} as IncomingMessage,
    recorder as unknown as ServerResponse,
    (error?: unknown) => {
      if (error) throw error;
    },
  );
  headers["cache-control"] = "no-store";
  return Object.freeze(headers) as Headers;
}

export const securityPlugin = fp(
  async (app: FastifyInstance, opts: SecurityOptions) => {
    const base = helmetOptions(opts);
    const apiHeaders = headersOf(base);
    const withOwn = (own: RouteHelmet) => headersOf({ ...base, ...own });

    app.addHook("onRoute", (route) => {
      const own = route.config?.helmet;
      if (own) route.config = { ...route.config, securityHeaders: withOwn(own) };
    });
    app.addHook("onRequest", (request, reply, done) => {
      reply.headers(request.routeOptions.config.securityHeaders ?? apiHeaders);
      done();
    });
    // The router's own refusals (bad URL, parameter too long) are sent before any hook runs.
    app.decorate("frameworkReplyHeaders", (reply: FastifyReply) => {
      reply.headers(apiHeaders);
    });
    app.decorate("securityHeaders", withOwn);

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
  },
  { name: "security" },
);

declare module "fastify" {
  interface FastifyInstance {
    /** Sets the security headers on a reply that no hook sees (the router's refusals). */
    frameworkReplyHeaders(reply: FastifyReply): void;
    /** The security headers with a reply's own helmet options (computed once: keep the result). */
    securityHeaders(own: RouteHelmet): Readonly<Record<string, string>>;
  }
  interface FastifyContextConfig {
    /** The route's own helmet options, merged over the API's (pages). */
    helmet?: RouteHelmet;
    /** Computed from `helmet` when the route is added. */
    securityHeaders?: Readonly<Record<string, string>>;
  }
}
