// Cross-site request forgery: a write with a session cookie (and, in the /account context, any
// sign-in or sign-out, before it has a session) must come from this platform's own pages; a
// bearer token is not sent by a browser on its own, so it is not judged.
import type { FastifyInstance } from "fastify";
import { crossOriginRefusal } from "../core/cross-origin";
import { forbidden, sendError } from "../core/errors";

/** Adds the check to the context `app`; `always`: every request there is judged, not only sessions'. */
export function refuseCrossSite(app: FastifyInstance, baseUrl: string, always: boolean) {
  const ownOrigin = new URL(baseUrl).origin;
  app.addHook("onRequest", (request, reply, done) => {
    const judged = always || request.auth?.kind === "session";
    const refusal = judged ? crossOriginRefusal(request, ownOrigin) : undefined;
    if (refusal === undefined) return done();
    request.log.warn({ reason: refusal }, "cross-site request refused");
    void sendError(
      request,
      reply,
      forbidden(
        "Cross-site request refused: it was sent from another site. Send it from a page of this platform, or with a bearer token",
        "csrf_failed",
      ),
    );
  });
}
