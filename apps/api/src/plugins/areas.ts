// The areas, registered: the platform every area is given (plugins/area.ts), each area's start in
// the order app.ts lists them, its machines' routes in contexts of their own, the people's API
// (plugins/people.ts) over every area's procedures and people's routes, health, the pages and the
// housekeeping that runs each area's sweep. Also the router of every area's procedures.
import type { AnyRouter } from "@trpc/server";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { countUnreadNotifications } from "@flowplane/db";
import { Authenticator } from "../core/authenticator";
import type { Context } from "../core/trpc";
import type { Area, AppOptions, FrontDoor, Platform } from "./area";
import { healthPlugin } from "./health";
import { housekeepingPlugin } from "./housekeeping";
import { pagesPlugin } from "./pages";
import { peoplePlugin } from "./people";
import type { RateLimits } from "./rate-limit-options";
import { checkQueries } from "./request-parsing";

type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;

/** Every procedure of the areas, under the names each area gives them, in the areas' order. */
export type ProceduresOf<A extends readonly Area[]> = Intersection<
  NonNullable<A[number]["procedures"]>
>;

/** The areas' procedures in one record, for `router()` (app.ts). */
export function proceduresOf<const A extends readonly Area[]>(areas: A): ProceduresOf<A> {
  return Object.assign({}, ...areas.map((area) => area.procedures ?? {})) as ProceduresOf<A>;
}

/** The areas' front doors (made before the server is: it is made with them). */
export function frontDoorsOf(
  areas: readonly Area[],
  options: AppOptions,
  log: () => FastifyBaseLogger,
): FrontDoor[] {
  return areas.flatMap((area) => (area.frontDoor ? [area.frontDoor(options, log)] : []));
}

export interface AreasOptions {
  options: AppOptions;
  areas: readonly Area[];
  router: AnyRouter;
  limits: RateLimits;
  doors: readonly FrontDoor[];
}

export const areasPlugin = fp(
  async (app: FastifyInstance, { options, areas, router, limits, doors }: AreasOptions) => {
    const { db, tokenSecret, baseUrl } = options;
    const sessions = {
      maxAgeMs: options.sessionMaxAgeMs ?? 7 * 24 * 3600_000,
      idleMs: options.sessionIdleMs ?? 32 * 3600_000,
    };
    const authenticator = new Authenticator(db, tokenSecret, sessions, (error) =>
      app.log.warn({ err: error }, "the access feed lost its connection; reconnecting"),
    );
    app.decorate("authenticator", authenticator);
    for (const door of doors) app.addHook("onClose", () => door.close());
    app.addHook("onClose", () => authenticator.close());

    const services: Partial<Context> = {};
    const contextOf = (request: FastifyRequest): Context =>
      ({
        ...services,
        db,
        auth: request.auth!,
        preloadedTeam: request.preloadedTeam,
        preloadedUserTeams: request.preloadedUserTeams,
        requestId: request.id,
        clientAddress: request.ip,
        log: request.log,
        baseUrl,
        tokenSecret,
        rateLimit: (procedurePath, limit, run) =>
          limits.procedure(request, procedurePath, limit, run),
      }) as Context;
    const platform: Platform = {
      options,
      db,
      baseUrl,
      tokenSecret,
      authenticator,
      limits,
      sessions,
      services,
      contextOf,
    };

    for (const area of areas) Object.assign(services, await area.start?.(app, platform));
    for (const area of areas) if (area.machines) await app.register(area.machines, platform);
    await app.register(peoplePlugin, { platform, areas, router });
    await app.register(async (open) => {
      checkQueries(open);
      await open.register(healthPlugin, { db });
    });
    await app.register(pagesPlugin, {
      authenticator,
      baseUrl,
      pages: areas.flatMap((area) => (area.pages ? [area.pages(platform)] : [])),
      context: contextOf,
      unreadNotifications: (userId) => countUnreadNotifications(db, userId),
    });
    await app.register(housekeepingPlugin, { platform, areas });
  },
  { name: "areas" },
);
