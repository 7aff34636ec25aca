// Authentication: one onRequest hook for every path under /api and /trpc, and /account/ (where a
// session is read when there is one, but none is needed). It sets `request.auth` from the bearer
// token or, under /api and /account, the session cookie (core/authenticator.ts decides). Under
// /api a request without either is refused here: a browser asking for a page goes to /sign-in,
// anything else gets the bare 401. A /trpc caller is only recorded here (for the rate limits);
// createContext refuses it when there is none, so that the 401 is in tRPC's envelope.
import cookie from "@fastify/cookie";
import { type ErrorBody, isId } from "@flowplane/contract";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import Negotiator from "negotiator";
import type { Authenticator } from "../core/authenticator";

export interface AuthenticationOptions {
  authenticator: Authenticator;
  /** The name of the cookie that holds a signed-in browser's session. */
  sessionCookie: string;
  /** Paths whose routes authenticate their callers themselves (broker and instance tokens). */
  checkedByTheirRoutes: RegExp[];
}

/** REST and the document; /trpc authenticates in its createContext, to answer in tRPC's shape. */
export const GUARDED = /^\/api(\/|\?|$)/;
/** Sign-in and sign-out: a session is read when there is one, but none is needed. */
export const ACCOUNT = /^\/account\//;
const TRPC = /^\/trpc\//;
/**
 * Where a provisioning token or a device's one-time code is taken: POST /api/v1/devices (the
 * agent's first start).
 */
const PROVISIONING = /^\/api\/v1\/devices\/?(\?|$)/;

/** The session cookie's value, parsed from the request's Cookie header (undefined: none). */
export function sessionCookieOf(
  app: FastifyInstance,
  request: FastifyRequest,
  name: string,
): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || !header.includes(name)) return undefined;
  return app.parseCookie(header)[name];
}

/** The body of the 401, as `toErrorResponse(unauthorized())` gives it, without making an error. */
const unauthorizedBody = (requestId: string): ErrorBody => ({
  code: "unauthorized",
  error: "unauthorized",
  requestId,
});

/** Methods that change nothing: their token's answers may come from what was kept. */
const READS = new Set(["GET", "HEAD"]);

export const authenticationPlugin = fp(
  async (app: FastifyInstance, opts: AuthenticationOptions) => {
    // Cookies are parsed only where a session is read (below, and the pages), not per request.
    await app.register(cookie, { hook: false });
    const { authenticator } = opts;
    app.addHook("onRequest", async (request, reply) => {
      if (opts.checkedByTheirRoutes.some((paths) => paths.test(request.url))) return;
      const guarded = GUARDED.test(request.url);
      const account = !guarded && ACCOUNT.test(request.url);
      if (!guarded && !account) {
        // The caller of a /trpc request, known here for the rate limits; createContext refuses it
        // when there is none, in tRPC's envelope.
        if (TRPC.test(request.url)) {
          request.auth = (
            await authenticator.authenticate(request.headers.authorization, {
              reading: READS.has(request.method),
            })
          )?.identity;
        }
        return;
      }
      const { teamId } = request.params as { teamId?: string };
      const authenticated = await authenticator.authenticate(request.headers.authorization, {
        // A malformed team id is not looked up here; the procedure refuses it by name.
        teamId: teamId !== undefined && isId(teamId) ? teamId : undefined,
        sessionCookie:
          request.headers.authorization === undefined
            ? sessionCookieOf(app, request, opts.sessionCookie)
            : undefined,
        withUserTeams: request.routeOptions.config.preload === "userTeams",
        reading: READS.has(request.method),
      });
      if (authenticated) {
        request.auth = authenticated.identity;
        request.preloadedTeam = authenticated.team;
        request.preloadedUserTeams = authenticated.userTeams;
        return;
      }
      // A device registering itself: its team's provisioning token, or its own one-time code,
      // on this one route only.
      if (request.method === "POST" && PROVISIONING.test(request.url)) {
        const device =
          (await authenticator.authenticateProvisioning(request.headers.authorization)) ??
          authenticator.authenticateOtc(request.headers.authorization);
        if (device) {
          request.auth = device;
          return;
        }
      }
      if (guarded) {
        // A person's browser goes to the sign-in page; scripts get the bare 401.
        const accept = request.headers.accept;
        const wantsPage =
          request.method === "GET" &&
          accept !== undefined &&
          accept.includes("html") &&
          new Negotiator(request.raw).mediaType(["application/json", "text/html"]) === "text/html";
        if (wantsPage) return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`);
        return reply.code(401).send(unauthorizedBody(request.id));
      }
    });
  },
  { name: "authentication" },
);
