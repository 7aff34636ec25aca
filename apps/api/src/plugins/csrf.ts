// Cross-site request forgery: a write that rides on the browser's cookie (or signs in) must come
// from a page of this platform (core/cross-site.ts decides). Bearer-token requests carry no
// ambient credential and are not checked. Runs after the authentication plugin's hook, which sets
// `request.auth`. (The pages check their own forms.)
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { crossSiteRefusal } from "../core/cross-site";
import { sendError } from "../core/errors";
import { ACCOUNT } from "./authentication";

export const csrfPlugin = fp(async (app: FastifyInstance, opts: { baseUrl: string }) => {
  const ownOrigin = new URL(opts.baseUrl).origin;
  app.addHook("onRequest", (request, reply, done) => {
    const signedIn = request.auth?.kind === "session";
    const refusal = crossSiteRefusal(request, ownOrigin, signedIn, ACCOUNT);
    if (refusal) {
      void sendError(request, reply, refusal);
      return;
    }
    done();
  });
});
