// The people's authentication: who calls a route of the people's API, by a personal access token
// or a signed-in browser's session cookie (core/authenticator.ts decides). It is a hook of the
// contexts the people's routes live in (plugins/people.ts), one mode each, and of nothing else:
// the machines' routes (a device agent's, a hosted Node-RED's, a broker's) live in contexts of
// their own, whose hooks authenticate their own kind of credential.
// - `api` (REST and the document): a caller without either is refused here: a browser asking for
//   a page goes to /sign-in, anything else gets the bare 401. A route whose procedure is also open
//   to a device's provisioning token or one-time code (`config.provisioning`) takes those too.
// - `trpc`: the caller is only recorded (for the rate limits); createContext refuses a request
//   without one, so that the 401 is in tRPC's envelope.
// - `account` (sign-in and its kin): a session is read when there is one, but none is needed.
import { type ErrorBody, isId } from "@flowplane/contract";
import type { FastifyInstance, FastifyRequest } from "fastify";
import Negotiator from "negotiator";
import type { Authenticator } from "../core/authenticator";
import { sessionCookieOf } from "../core/credentials/sessions";

export type AuthenticationMode = "api" | "trpc" | "account";

/** The body of the 401, as `toErrorResponse(unauthorized())` gives it, without making an error. */
const unauthorizedBody = (requestId: string): ErrorBody => ({
  code: "unauthorized",
  error: "unauthorized",
  requestId,
});

/** Methods that change nothing: their token's answers may come from what was kept. */
const READS = new Set(["GET", "HEAD"]);

/** Whether a person's browser asked for a page (it goes to the sign-in page, not a 401). */
function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return (
    request.method === "GET" &&
    accept !== undefined &&
    accept.includes("html") &&
    new Negotiator(request.raw).mediaType(["application/json", "text/html"]) === "text/html"
  );
}

/** Adds the hook that authenticates people to the context `app`, in the given mode. */
export function authenticatePeople(
  app: FastifyInstance,
  authenticator: Authenticator,
  mode: AuthenticationMode,
) {
  app.addHook("onRequest", async (request, reply) => {
    if (mode === "trpc") {
      request.auth = (
        await authenticator.authenticate(request.headers.authorization, {
          reading: READS.has(request.method),
        })
      )?.identity;
      return;
    }
    const { teamId } = request.params as { teamId?: string };
    const authenticated = await authenticator.authenticate(request.headers.authorization, {
      // A malformed team id is not looked up here; the procedure refuses it by name.
      teamId: teamId !== undefined && isId(teamId) ? teamId : undefined,
      sessionCookie:
        request.headers.authorization === undefined ? sessionCookieOf(app, request) : undefined,
      withUserTeams: request.routeOptions.config.preload === "userTeams",
      reading: READS.has(request.method),
    });
    if (authenticated) {
      request.auth = authenticated.identity;
      request.preloadedTeam = authenticated.team;
      request.preloadedUserTeams = authenticated.userTeams;
      return;
    }
    if (mode === "account") return;
    // A device registering itself: its team's provisioning token, or its own one-time code, on
    // the route whose procedure takes them.
    if (request.routeOptions.config.provisioning === true) {
      const device =
        (await authenticator.authenticateProvisioning(request.headers.authorization)) ??
        authenticator.authenticateOtc(request.headers.authorization);
      if (device) {
        request.auth = device;
        return;
      }
    }
    if (wantsPage(request))
      return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`);
    return reply.code(401).send(unauthorizedBody(request.id));
  });
}
