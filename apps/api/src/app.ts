// The Fastify server, assembled: the cross-cutting plugins (plugins/), then the areas, one line
// each, which bring everything they own (plugins/area.ts: procedures, routes, pages, runtime,
// housekeeping). `buildApp` does not listen, so tests and the CLI's tests run the real thing
// in-process.
import Fastify, { type FastifyInstance } from "fastify";
import { accounts } from "./accounts/index";
import { applications } from "./applications/index";
import { auditLog } from "./audit-log/index";
import { broker } from "./broker/index";
import { catalogue } from "./catalogue/index";
import { devices } from "./devices/index";
import { events } from "./events/index";
import { instances } from "./instances/index";
import { library } from "./library/index";
import { metrics } from "./metrics/index";
import { notifications } from "./notifications/index";
import { pipelines } from "./pipelines/index";
import { platform } from "./platform/index";
import { rollouts } from "./rollouts/index";
import { type TrustProxy, trustFunction } from "./env";
import type { Area, AppOptions } from "./plugins/area";
import { router } from "./core/trpc";
import { areasPlugin, frontDoorsOf, proceduresOf } from "./plugins/areas";
import { clientErrorHandler, errorsPlugin, routerRefusal } from "./plugins/errors";
import { registerRateLimits } from "./plugins/rate-limits";
import { requestLogOptions, requestLogPlugin } from "./plugins/request-log";
import { jsonBodiesOnly, parseQuery } from "./plugins/request-parsing";
import { securityPlugin } from "./plugins/security";
import { serverWithFrontDoors } from "./plugins/server";
import { shutdownPlugin } from "./plugins/shutdown";
import { search } from "./search/index";
import { snapshots } from "./snapshots/index";
import { teams } from "./teams/index";
import { tokens } from "./tokens/index";
import { webhooks } from "./webhooks/index";

export { createLogger } from "./plugins/request-log";
export type { BrokerOptions, FailedConnectLimits } from "./broker/index";
export type { AppOptions } from "./plugins/area";

/** The areas, in the order their procedures are named (the OpenAPI document's order). */
const AREAS = [
  platform,
  events,
  accounts,
  teams,
  tokens,
  auditLog,
  catalogue,
  applications,
  instances,
  snapshots,
  broker,
  devices,
  library,
  pipelines,
  rollouts,
  notifications,
  webhooks,
  search,
  // Last: it reads what the others started (its request hook precedes every route).
  metrics,
] as const satisfies readonly Area[];

/** Every area's procedures: what /trpc and the REST routes serve. */
export const appRouter = router(proceduresOf(AREAS));

/** Fastify's option (a hop count as the function Fastify itself makes of it: its types omit it). */
function trustProxyOption(trust: TrustProxy = false) {
  return trust === false ? false : trustFunction(trust);
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const doors = frontDoorsOf(AREAS, options, () => app.log);
  const app: FastifyInstance = Fastify({
    serverFactory: serverWithFrontDoors(doors),
    ...requestLogOptions(options.logger),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Behind TRUST_PROXY's proxies request.ip, .protocol and .host are the forwarded ones
    // (@fastify/proxy-addr: the right-most address no trusted hop vouches for).
    trustProxy: trustProxyOption(options.trustProxy),
    // No wall-clock bound on loading plugins or on their preClose hooks (Fastify's default: 10 s
    // for each). The instance runtime's preClose stops every Node-RED, each bounded by its own
    // grace and then killed (10 s by default): Fastify's bound refused the close at 10 s while
    // they were still being stopped. What runs in a start or a close has its own bounds.
    pluginTimeout: 0,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQuery },
    frameworkErrors: (error, request, reply) => routerRefusal(app, error, request, reply),
    clientErrorHandler,
  });
  // First, so that it sees every route (405 answers with the methods a path has).
  await app.register(errorsPlugin);
  // Before authentication: a CORS preflight carries no token.
  await app.register(securityPlugin, { corsOrigins: options.corsOrigins });
  // Before the routes: the plugin hooks each route as it is added, and its hooks run after the
  // people's authentication, so the global limit counts per token or session.
  const limits = await registerRateLimits(app, options.rateLimits ?? {});
  await app.register(requestLogPlugin);
  await app.register(jsonBodiesOnly);
  await app.register(shutdownPlugin);
  await app.register(areasPlugin, { options, areas: AREAS, router: appRouter, limits, doors });
  return app;
}
