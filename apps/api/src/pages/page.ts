// What every page route shares: rendering with the layout's data, and the signed-in guard. An
// area's pages call the API's own procedures through a tRPC caller of their own, so permissions,
// validation, rate limits and audit entries are the API's.
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preParsingAsyncHookHandler,
  RouteOptions,
} from "fastify";
import type { Identity } from "../core/credentials/identity";
import type { Context } from "../core/trpc";
import { formError } from "./forms";
import { withNext } from "./next";
import type { PageRenderer } from "./render";

export interface PageDeps {
  renderer: PageRenderer;
  /**
   * The tRPC context of a signed-in request (the one the REST routes build), for an area's pages
   * to call the API's procedures with `createCaller`.
   */
  context: (request: FastifyRequest) => Context;
}

/** Where a failure page leads back to. */
export interface Back {
  href: string;
  label: string;
}

/**
 * An area's page routes, added inside the pages plugin (plugins/pages.ts): URL-encoded forms,
 * the session read from the cookie, forms from other origins refused, failures shown as pages.
 */
export type PageRoutes = (app: FastifyInstance, deps: PageDeps) => void;

/** The signed-in user of a page request, as the layout shows them. */
export function viewer(request: FastifyRequest) {
  const auth = request.auth;
  return auth
    ? { username: auth.username, admin: auth.admin, unread: request.unreadNotifications ?? 0 }
    : undefined;
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

/** A failure as a page of its own: the API's message, with its status. */
export function sendFailure(
  deps: PageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  title: string | ((status: number) => string),
  back?: Back,
) {
  const failed = formError(request, reply, error);
  return sendPage(
    deps,
    request,
    reply,
    "pages/templates/error",
    {
      title: typeof title === "string" ? title : title(failed.status),
      message: failed.message,
      back,
    },
    failed.status,
  );
}

/** Marks the preHandlers `signedIn` makes, so that `guardBeforeBody` finds them. */
const SIGNED_IN = Symbol("signedIn");

type Guard = ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) & {
  [SIGNED_IN]?: true;
};

/**
 * A preHandler: without a session, to the sign-in page (and back here after); with an expired
 * password, to the page that changes it first. `page` is where to come back to after a POST.
 * The pages plugin runs it before a form's body is read as well (`guardBeforeBody`).
 */
export function signedIn(options: { page: string; allowExpiredPassword?: boolean }): Guard {
  const guard: Guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const back = request.method === "GET" ? request.url : options.page;
    const auth: Identity | undefined = request.auth;
    if (!auth) return reply.redirect(withNext("/sign-in", back), 303);
    if (auth.passwordExpired && !options.allowExpiredPassword) {
      return reply.redirect(withNext("/settings/password", back), 303);
    }
  };
  guard[SIGNED_IN] = true;
  return guard;
}

/**
 * An `onRoute` hook of the pages: a route that `signedIn` guards is guarded before its body is
 * read too (a `preParsing` hook), so a request without a session costs no parsing of a form or an
 * upload — authenticate before reading a body. The preHandler stays, for routes without a body.
 */
export function guardBeforeBody(route: RouteOptions) {
  const guard = [route.preHandler ?? []]
    .flat()
    .find((handler): handler is Guard => SIGNED_IN in (handler as Guard));
  if (!guard) return;
  const beforeBody: preParsingAsyncHookHandler = async (request, reply, payload) => {
    await guard(request, reply);
    return payload;
  };
  route.preParsing = [...[route.preParsing ?? []].flat(), beforeBody];
}

/**
 * The message to show after a redirect (`?done=<key>`), looked up by its key: a query string
 * never puts text of its own on a page.
 */
export function noticeOf(request: FastifyRequest, notices: Record<string, string>) {
  const { done } = request.query as { done?: unknown };
  return typeof done === "string" && Object.hasOwn(notices, done) ? notices[done] : undefined;
}
