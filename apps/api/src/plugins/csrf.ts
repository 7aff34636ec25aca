// Cross-site request forgery: a write that rides on the browser's cookie (or signs in) must come
// from a page of this platform: its Origin, when it has one, is BASE_URL's; a signed-in write must
// have one. Bearer-token requests carry no ambient credential and are not checked. Runs after the
// authentication plugin's hook, which sets `request.auth`. (The pages check their own forms.)
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { forbidden, sendError } from "../core/errors";
import { ACCOUNT } from "./authentication";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export const csrfPlugin = fp(async (app: FastifyInstance, opts: { baseUrl: string }) => {
  const ownOrigin = new URL(opts.baseUrl).origin;
  app.addHook("onRequest", (request, reply, done) => {
    const signedIn = request.auth?.kind === "session";
    const checked = !SAFE_METHODS.has(request.method) && (signedIn || ACCOUNT.test(request.url));
    const origin = request.headers.origin;
    if (checked && (origin !== undefined ? origin !== ownOrigin : signedIn)) {
      void sendError(
        request,
        reply,
        forbidden("Cross-site request refused: the Origin is not this platform's", "csrf_failed"),
      );
      return;
    }
    done();
  });
});
