// The people's API: the routes a person's token or signed-in browser calls, in three contexts of
// their own, each with its own hooks (the query string's check, the people's authentication in
// its mode, the cross-site check) and nothing else's: /api (REST from the procedures, the
// document and its viewer, the areas' people routes outside tRPC; a path under /api that no route
// has is answered here, after its caller is known), /trpc (the same procedures over tRPC) and
// /account (sign-in and its kin). The machines' routes are not here: each area registers them in
// contexts of their own (plugins/areas.ts).
import cookie from "@fastify/cookie";
import type { AnyRouter } from "@trpc/server";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { openApiDocument } from "../core/openapi";
import { API_PREFIX, registerRestRoutes } from "../core/rest";
import { VERSION } from "../core/version";
import type { Area, Platform } from "./area";
import { authenticatePeople } from "./authentication";
import { refuseCrossSite } from "./csrf";
import { docsRoutes } from "./docs";
import { trpcRoutes } from "./procedures";
import { checkQueries } from "./request-parsing";

export interface PeopleOptions {
  platform: Platform;
  areas: readonly Area[];
  router: AnyRouter;
}

export const peoplePlugin = fp(
  async (app: FastifyInstance, { platform, areas, router }: PeopleOptions) => {
    // Cookies are parsed only where a session is read (the people's hooks, the pages, the team
    // library's routes), not for every request.
    await app.register(cookie, { hook: false });
    const { authenticator, baseUrl, limits } = platform;
    const document = openApiDocument(router, VERSION, baseUrl, limits.mayRefuse, {
      docs: areas.flatMap((area) => area.docs ?? []),
      globalLimit: limits.globalLimit,
    });

    await app.register(
      async (api) => {
        checkQueries(api);
        authenticatePeople(api, authenticator, "api");
        refuseCrossSite(api, baseUrl, false);
        api.setNotFoundHandler(app.notFound);
        registerRestRoutes(api, router, platform.contextOf);
        await api.register(docsRoutes, { document, baseUrl });
        for (const area of areas) if (area.api) await api.register(area.api, platform);
      },
      { prefix: API_PREFIX },
    );

    await app.register(async (trpc) => {
      checkQueries(trpc);
      authenticatePeople(trpc, authenticator, "trpc");
      await trpcRoutes(trpc, { router, context: platform.contextOf });
    });

    await app.register(
      async (account) => {
        checkQueries(account);
        authenticatePeople(account, authenticator, "account");
        refuseCrossSite(account, baseUrl, true);
        account.setNotFoundHandler(app.notFound);
        for (const area of areas) if (area.account) await account.register(area.account, platform);
      },
      { prefix: "/account" },
    );
  },
  { name: "people", dependencies: ["errors"] },
);
