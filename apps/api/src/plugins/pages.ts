// The web pages a person uses, rendered on the server (pages/ renders; each area adds its own page
// routes: the accounts area's sign-in and settings), and their static assets under /assets/ (open:
// they carry no data). Pages read the session cookie themselves (the people's authentication covers
// only /api/ and /account/), take URL-encoded forms (in this plugin only: the API still refuses
// all but JSON), and refuse a form POSTed from another origin.
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Authenticator } from "../core/authenticator";
import { crossOriginRefusal } from "../core/cross-origin";
import { sessionCookieOf } from "../core/credentials/sessions";
import { notFound } from "../core/errors";
import type { Context } from "../core/trpc";
import {
  guardBeforeBody,
  type PageDeps,
  type PageRoutes,
  sendFailure,
  sendPage,
} from "../pages/page";
import { loadAssets, PageRenderer, pageRoute } from "../pages/render";
import { checkQueries } from "./request-parsing";

export interface PagesOptions {
  authenticator: Authenticator;
  baseUrl: string;
  /** The areas' page routes. */
  pages: PageRoutes[];
  /** The tRPC context of a signed-in request, for pages calling the API's procedures. */
  context: (request: FastifyRequest) => Context;
  /** How many of a person's notifications are unread: the count the layout shows. */
  unreadNotifications?: (userId: string) => Promise<number>;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in person's unread notifications, read for a page's layout. */
    unreadNotifications?: number;
  }
}

export async function pagesPlugin(app: FastifyInstance, options: PagesOptions) {
  const assets = loadAssets();
  const deps: PageDeps = { renderer: new PageRenderer(assets), context: options.context };
  const ownOrigin = new URL(options.baseUrl).origin;
  checkQueries(app);

  // Asset URLs carry their content's hash (`?v=`), so a browser may keep them for good.
  app.get<{ Params: { name: string }; Querystring: { v?: string } }>(
    "/assets/:name",
    {
      onSend: async (request, reply) => {
        const asset = assets.get(request.params.name);
        if (!asset) return;
        const current = request.query.v === asset.version;
        reply.header(
          "cache-control",
          current ? "public, max-age=31536000, immutable" : "public, max-age=0, must-revalidate",
        );
      },
    },
    async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) throw notFound();
      return reply.type(asset.type).send(asset.body);
    },
  );

  // A browser's 404 outside the API (plugins/errors.ts decides which) is a page with a way back.
  const pageHeaders = app.securityHeaders(pageRoute.config.helmet);
  app.pageNotFound.page = async (request, reply) => {
    await identify(request);
    reply.headers(pageHeaders);
    return sendPage(
      deps,
      request,
      reply,
      "pages/templates/error",
      {
        title: "Page not found",
        message:
          "There is no page at this address, or it is not one you may see. " +
          "Check the address, or go back to a page you know.",
        back: request.auth
          ? { href: "/teams", label: "Go to your teams" }
          : { href: "/sign-in", label: "Go to the sign-in page" },
      },
      404,
    );
  };

  /** The signed-in person of a page request, from the session cookie. */
  async function identify(request: FastifyRequest) {
    const sid = sessionCookieOf(app, request);
    if (sid === undefined) return;
    const authenticated = await options.authenticator.authenticate(undefined, {
      sessionCookie: sid,
    });
    request.auth = authenticated?.identity;
    // Only a page shown has a layout to show the count in: a form's POST ends in a redirect.
    if (request.auth && request.method === "GET" && options.unreadNotifications) {
      request.unreadNotifications = await options.unreadNotifications(request.auth.userId);
    }
  }

  await app.register(async (pages) => {
    await pages.register(formbody, { bodyLimit: 64 * 1024 });

    // A page's failure is a page too (a person reads it), with the API's message and status.
    pages.setErrorHandler(async (error, request, reply) =>
      sendFailure(deps, request, reply, error, (status) =>
        status >= 500 ? "Something went wrong" : "Request refused",
      ),
    );

    pages.addHook("onRequest", async (request, reply) => {
      await identify(request);
      // Cross-site request forgery: every form, signing in too, is judged by the rule the API's
      // cookie writes follow (core/cross-origin.ts).
      const refusal = crossOriginRefusal(request, ownOrigin);
      if (refusal !== undefined) {
        request.log.warn({ reason: refusal }, "cross-site form refused");
        return sendPage(
          deps,
          request,
          reply,
          "pages/templates/error",
          {
            title: "Request refused",
            message:
              "This form was sent from another site, so it was refused and nothing changed. " +
              "If you meant to send it, open this platform's own page and send the form from there.",
            back: request.auth
              ? { href: "/teams", label: "Go to your teams" }
              : { href: "/sign-in", label: "Go to the sign-in page" },
          },
          403,
        );
      }
    });

    // A signed-in page's form is not read for a request without a session.
    pages.addHook("onRoute", guardBeforeBody);
    for (const routes of options.pages) routes(pages, deps);
  });
}
