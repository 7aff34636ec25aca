// What every page route shares: rendering with the layout's data, the signed-in guard, and a
// tRPC caller, so that pages run the API's own procedures (permissions, validation, audit).
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Identity } from "../authentication";
import type { AccountOptions } from "../plugins/account";
import { appRouter } from "../routers/index";
import type { Context } from "../trpc";
import { withNext } from "./next";
import type { PageRenderer } from "./render";

export interface PageDeps {
  renderer: PageRenderer;
  /** The account plugin's options: the session settings and the sign-in limits. */
  account: AccountOptions;
  context: (request: FastifyRequest) => Context;
}

/** The signed-in user of a page request, as the layout shows them. */
export function viewer(request: FastifyRequest) {
  const auth = request.auth;
  return auth ? { username: auth.username, admin: auth.admin } : undefined;
}

export function sendPage(
  deps: PageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  data: { title: string; [key: string]: unknown },
  status = 200,
) {
  const html = deps.renderer.render(template, { user: viewer(request), ...data });
  return reply.code(status).type("text/html; charset=utf-8").send(html);
}

/** The API's procedures, called as the signed-in user of this request. */
export function callerOf(deps: PageDeps, request: FastifyRequest) {
  return appRouter.createCaller(deps.context(request));
}

/**
 * A preHandler: without a session, to the sign-in page (and back here after); with an expired
 * password, to the page that changes it first. `page` is where to come back to after a POST.
 */
export function signedIn(options: { page: string; allowExpiredPassword?: boolean }) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const back = request.method === "GET" ? request.url : options.page;
    const auth: Identity | undefined = request.auth;
    if (!auth) return reply.redirect(withNext("/sign-in", back), 303);
    if (auth.passwordExpired && !options.allowExpiredPassword) {
      return reply.redirect(withNext("/settings/password", back), 303);
    }
  };
}
