// Cross-site request forgery for the API: a write that rides on the browser's cookie, and signing
// in (/account/login), must not come from another site — the rule in core/cross-origin.ts, shared
// with the pages' forms (plugins/pages.ts). Bearer-token requests carry no ambient credential and
// are not judged. Runs after the authentication plugin's hook, which sets `request.auth`.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { crossOriginRefusal } from "../core/cross-origin";
import { forbidden, sendError } from "../core/errors";
import { ACCOUNT } from "./authentication";

export const csrfPlugin = fp(
  async (app: FastifyInstance, opts: { baseUrl: string }) => {
    const ownOrigin = new URL(opts.baseUrl).origin;
    app.addHook("onRequest", (request, reply, done) => {
      const judged = request.auth?.kind === "session" || ACCOUNT.test(request.url);
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
  },
  { name: "csrf" },
);
