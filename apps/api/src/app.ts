// The Fastify server, assembled: the cross-cutting plugins (plugins/), then each area's routes
// outside tRPC and pages, then the procedures of every area (router.ts) as REST and /trpc.
// `buildApp` does not listen, so tests and the CLI's tests run the real thing in-process.
import Fastify, { type FastifyInstance } from "fastify";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { accounts, InitialPassword } from "./accounts/index";
import { applications } from "./applications/index";
import { devices } from "./devices/index";
import { broker, startTeamBroker } from "./broker/index";
import { Authenticator } from "./core/authenticator";
import { openApiDocument } from "./core/openapi";
import { requestContext } from "./context";
import {
  editorHosts,
  editorProxy,
  InstanceRuntime,
  instances,
  listeningUrl,
  onInstanceConnection,
  outsideInstanceRoutes,
  runtimePlugin,
} from "./instances/index";
import { library } from "./library/index";
import { Deploys, pipelines } from "./pipelines/index";
import { authenticationPlugin } from "./plugins/authentication";
import { csrfPlugin } from "./plugins/csrf";
import { docsPlugin } from "./plugins/docs";
import { clientErrorHandler, errorsPlugin, routerRefusal } from "./plugins/errors";
import { healthPlugin } from "./plugins/health";
import { housekeepingPlugin } from "./plugins/housekeeping";
import { pagesPlugin } from "./plugins/pages";
import { proceduresPlugin } from "./plugins/procedures";
import { registerRateLimits } from "./plugins/rate-limits";
import { requestLogOptions, requestLogPlugin } from "./plugins/request-log";
import { parseQuery, requestParsingPlugin } from "./plugins/request-parsing";
import { securityPlugin } from "./plugins/security";
import { shutdownPlugin } from "./plugins/shutdown";
import { appRouter } from "./router";
import { teams } from "./teams/index";
import type { AppOptions } from "./options";
import { VERSION } from "./version";

export { createLogger } from "./plugins/request-log";
export type { BrokerOptions, FailedConnectLimits } from "./broker/index";
export type { AppOptions } from "./options";

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { db, tokenSecret, baseUrl } = options;
  const hosts = editorHosts(baseUrl, options.editorDomain);
  if (hosts.instanceOf(new URL(baseUrl).host) !== undefined) {
    throw new Error(
      `BASE_URL's host (${new URL(baseUrl).host}) is under the editors' domain (${hosts.domain}): editors must not share the platform's host`,
    );
  }
  const proxy = editorProxy({
    db,
    hosts,
    driver: options.instances?.driver,
    log: () => app.log,
  });
  const app: FastifyInstance = Fastify({
    // Editors' hosts go to the proxy before Fastify sees them, WebSocket upgrades included (the
    // broker's own upgrade handler never sees them); requests on an instance's connection reach
    // only its own routes.
    serverFactory: (handler) => {
      const server = createServer((request, response) => {
        // An instance's own connection first: it reaches its own storage routes and nothing
        // else, neither the platform's other routes nor, through the proxy, another editor.
        if (outsideInstanceRoutes(request)) {
          response.writeHead(404, { "content-type": "text/plain" }).end("Not Found\n");
          return;
        }
        if (proxy.handles(request)) return proxy.web(request, response);
        handler(request, response);
      });
      const emit = server.emit.bind(server) as (event: string, ...args: unknown[]) => boolean;
      server.emit = ((event: string, ...args: unknown[]) => {
        if (event === "upgrade") {
          const [request, socket, head] = args as [IncomingMessage, Duplex, Buffer];
          // No upgrade on an instance's connection (its storage routes have none).
          if (onInstanceConnection(request)) {
            socket.destroy();
            return true;
          }
          if (proxy.handles(request)) {
            proxy.upgrade(request, socket, head);
            return true;
          }
        }
        return emit(event, ...args);
      }) as Server["emit"];
      // Node's server hands an upgrade on only when something listens for it: this listener
      // makes it so for editors' hosts, and ends any other upgrade nothing else takes.
      server.on("upgrade", (_request: IncomingMessage, socket: Duplex) => {
        if (server.listenerCount("upgrade") === 1) socket.destroy();
      });
      return server;
    },
    ...requestLogOptions(options.logger),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // No wall-clock bound on loading plugins or on their preClose hooks (Fastify's default: 10 s
    // for each). The instance runtime's preClose stops every Node-RED, each bounded by its own
    // grace and then killed (10 s by default): Fastify's bound refused the close at 10 s while
    // they were still being stopped, and a platform then exited 1 before they had stopped (one
    // without a sandbox, stuck in a loop, kept running). What runs in a start or a close has its
    // own bounds.
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
  // authentication hook below, so the global limit counts per token or session.
  const limits = await registerRateLimits(app, options.rateLimits ?? {});

  const sessionMaxAgeMs = options.sessionMaxAgeMs ?? 7 * 24 * 3600_000;
  const sessionIdleMs = options.sessionIdleMs ?? 32 * 3600_000;
  const authenticator = new Authenticator(
    db,
    tokenSecret,
    { maxAgeMs: sessionMaxAgeMs, idleMs: sessionIdleMs },
    (error) => app.log.warn({ err: error }, "the access feed lost its connection; reconnecting"),
  );
  app.decorate("authenticator", authenticator);
  app.addHook("onClose", () => proxy.close());
  app.addHook("onClose", () => authenticator.close());
  const teamBroker = options.broker && (await startTeamBroker(app, options.broker, options));
  // Instances reach the platform where it listens (loopback), not at its public BASE_URL.
  const runtime =
    options.instances &&
    new InstanceRuntime({
      db,
      driver: options.instances.driver,
      tokenSecret,
      log: app.log,
      platformUrl: () => listeningUrl(app),
      hosts,
      baseUrl,
    });
  if (runtime) await app.register(runtimePlugin, { runtime });
  const initialPassword =
    options.initialPasswordFile !== undefined
      ? new InitialPassword(options.initialPasswordFile)
      : undefined;
  const deploys = new Deploys(db, app.log);
  const contextOf = requestContext({
    db,
    baseUrl,
    tokenSecret,
    limits,
    teamBroker,
    runtime,
    deploys,
    initialPassword,
    editorHosts: hosts,
  });

  // The broker's callbacks, the instances' storage API, the team library's and the devices' live
  // routes check their own tokens.
  const checkedByTheirRoutes = [
    broker.ownPaths,
    instances.ownPaths,
    library.ownPaths,
    ...devices.ownPaths,
  ];
  await app.register(requestLogPlugin);
  await app.register(requestParsingPlugin, { checkedByTheirRoutes });
  const sessionCookie = accounts.sessionCookie;
  await app.register(authenticationPlugin, { authenticator, sessionCookie, checkedByTheirRoutes });
  await app.register(csrfPlugin, { baseUrl });
  await app.register(devices.provisioningProbe, { authenticator });
  await app.register(shutdownPlugin);

  const signInLimits = limits.signIn;
  const account = { db, tokenSecret, baseUrl, sessionMaxAgeMs, signInLimits, initialPassword };
  await app.register(healthPlugin, { db });
  if (teamBroker) await app.register(broker.routes, { db, tokenSecret, access: teamBroker.access });
  // An editor session lasts as Node-RED's own did (a day), or less when the platform's do.
  const editorSessionMaxAgeMs = Math.min(sessionMaxAgeMs, 24 * 3600_000);
  const editorSignIn = { db, tokenSecret, authenticator, editorSessionMaxAgeMs, hosts };
  await app.register(instances.routes, editorSignIn);
  await app.register(instances.authorize, editorSignIn);
  await app.register(devices.routes, {
    db,
    tokenSecret,
    registrationLimit: limits.deviceRegistration,
  });
  await app.register(library.routes, { db, tokenSecret, authenticator, baseUrl, sessionCookie });
  await app.register(pipelines.routes, { db, deploys });
  const document = openApiDocument(appRouter, VERSION, baseUrl, limits.mayRefuse, {
    docs: devices.docs,
    globalLimit: limits.globalLimit,
  });
  await app.register(docsPlugin, { document, baseUrl });
  await app.register(accounts.routes, account);
  const pages = [
    accounts.pages({ account, editorHosts: hosts }),
    teams.pages,
    applications.pages,
    devices.pages,
  ];
  await app.register(pagesPlugin, {
    authenticator,
    baseUrl,
    sessionCookie,
    pages,
    context: contextOf,
  });
  await app.register(proceduresPlugin, { router: appRouter, context: contextOf });

  await app.register(housekeepingPlugin, {
    db,
    authenticator,
    intervalMs: options.sweepIntervalMs,
    sessionIdleMs,
  });
  return app;
}
