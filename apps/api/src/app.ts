// The Fastify server: plugins registered in one place, authentication in one hook, errors in one
// handler. `buildApp` does not listen, so tests and the CLI's tests run the real thing in-process.
import { isId } from "@flowplane/contract";
import type { Db } from "@flowplane/db";
import cookie from "@fastify/cookie";
import Negotiator from "negotiator";
import { deleteExpiredInvitations, deleteExpiredTokens, deleteStaleSessions } from "@flowplane/db";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { randomUUID } from "node:crypto";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import { parse as parseQueryString } from "node:querystring";
import type { Socket } from "node:net";
import { type DestinationStream, type Logger, pino } from "pino";
import { Authenticator, type Identity, type PreloadedTeam } from "./authentication";
import { BrokerAccess, type FailureLimit } from "./broker/access";
import { type EmbeddedBroker, startEmbeddedBroker } from "./broker/embedded";
import { accountPlugin, SESSION_COOKIE } from "./plugins/account";
import { BROKER_CALLBACKS, brokerCallbacksPlugin } from "./plugins/broker-callbacks";
import { INSTANCE_STORAGE, instanceStoragePlugin } from "./plugins/instance-storage";
import { InstanceRuntime } from "./instances/runtime";
import type { Driver } from "@flowplane/runtime";
import {
  ApiError,
  forbidden,
  invalidRequest,
  methodNotAllowed,
  notFound,
  toErrorResponse,
  trpcErrorEnvelope,
  unauthorized,
} from "./errors";
import { openApiDocument } from "./openapi";
import { docsPlugin } from "./plugins/docs";
import { healthPlugin } from "./plugins/health";
import { pagesPlugin } from "./plugins/pages";
import { type RateLimitOptions, registerRateLimits } from "./plugins/rate-limits";
import { securityPlugin } from "./plugins/security";
import { registerRestRoutes } from "./rest";
import { appRouter } from "./routers/index";
import type { Context } from "./trpc";
import { VERSION } from "./version";

declare module "fastify" {
  interface FastifyRequest {
    auth?: Identity;
    preloadedTeam?: PreloadedTeam;
  }
}

export interface AppOptions {
  db: Db;
  tokenSecret: string;
  baseUrl: string;
  /** From `createLogger`; none: no logs. */
  logger?: Logger;
  bodyLimit?: number;
  /** How often expired tokens are deleted and lastUsedAt is written (default 60 s). */
  sweepIntervalMs?: number;
  /** Origins allowed to call the API from a browser (CORS); none: no CORS headers. */
  corsOrigins?: string[];
  /** Fixed maximum age of a sign-in session (default 7 days, as FlowFuse). */
  sessionMaxAgeMs?: number;
  /** A session unused this long ends (default 32 hours, as FlowFuse). */
  sessionIdleMs?: number;
  /** Rate limits (plugins/rate-limits.ts): the figures, FlowFuse's optional ones, Redis. */
  rateLimits?: RateLimitOptions;
  /** The team broker (none: no broker; the client routes still keep credentials). */
  broker?: BrokerOptions;
  /** What runs hosted instances (none: instances can be created but not run: 503). */
  instances?: { driver: Driver };
}

export type BrokerOptions =
  /** aedes in this process: MQTT over TCP on host:port (0: a free port) and over WebSocket on
   *  this server at /mqtt; retained messages and sessions kept in `dataDir`. */
  | {
      mode: "embedded";
      host: string;
      port: number;
      dataDir?: string;
      /** The default port only: when it is taken, take a free one and say so. */
      fallBackWhenTaken?: boolean;
      /** What GET /settings tells clients, when not `mqtt://host:port` (e.g. behind a proxy). */
      url?: string;
      failedConnects?: FailedConnectLimits;
    }
  /** An external broker (EMQX) asks POST /api/comms/v2/auth and /acls; clients go to `url`. */
  | { mode: "external"; url: string; failedConnects?: FailedConnectLimits };

/** Failed CONNECTs allowed per client username and per address before refusing unchecked. */
export interface FailedConnectLimits {
  perClient?: FailureLimit;
  perAddress?: FailureLimit;
}

/**
 * The platform's logger: structured JSON, with the places a token could appear redacted. Writes
 * are asynchronous (buffered while one is in flight), so logging never blocks a request.
 */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          "req.headers.authorization",
          "req.headers.cookie",
          "*.authorization",
          "*.cookie",
          "token",
          "password",
          "old_password",
          "*.password",
          "*.old_password",
        ],
        censor: "[redacted]",
      },
    },
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** REST and the document; /trpc authenticates in its createContext, to answer in tRPC's shape. */
const GUARDED = /^\/api(\/|\?|$)/;
/** Sign-in and sign-out: a session is read when there is one, but none is needed. */
const ACCOUNT = /^\/account\//;
const TRPC = /^\/trpc\//;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** One log line per request, when it completes (Fastify's default is two). */
class RequestLog extends LogController {
  override incomingRequest() {}
  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply) {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request",
    );
  }
}

/** What the query parser answers for a query string with malformed percent-encoding. */
class MalformedQuery {
  [key: string]: unknown;
  constructor(readonly parameters: string[]) {}
}

const decodes = (text: string) => {
  try {
    decodeURIComponent(text.replace(/\+/g, " "));
    return true;
  } catch {
    return false;
  }
};

/**
 * Node's parser (repeated keys become arrays), after checking that every parameter decodes: a
 * malformed or non-UTF-8 percent-encoding is refused (400, naming the parameter) rather than
 * silently mangled.
 */
function parseQuery(query: string): Record<string, unknown> {
  const malformed = query
    .split("&")
    .filter((pair) => !decodes(pair))
    .map((pair) => pair.split("=")[0]!)
    .map((key) => (decodes(key) ? decodeURIComponent(key.replace(/\+/g, " ")) : key));
  return malformed.length > 0 ? new MalformedQuery(malformed) : parseQueryString(query);
}

/** Sends any error as our envelope (tRPC's on /trpc), with the request id. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const { status, body, internal } = toErrorResponse(error, request.id);
  if (internal) request.log.error({ err: error }, "unexpected error");
  reply.header("x-request-id", request.id);
  if (status === 405 && error instanceof ApiError && error.allow)
    reply.header("allow", error.allow);
  if (status === 429 && error instanceof ApiError && error.retryAfter)
    reply.header("retry-after", error.retryAfter);
  // Refusals before tRPC runs (too large, not JSON) still answer /trpc clients in their envelope.
  if (request.url.startsWith("/trpc/")) {
    return reply.code(status).send(trpcErrorEnvelope(status, body));
  }
  return reply.code(status).send(body);
}

/**
 * Requests Node's HTTP parser refuses never reach Fastify (no request, no hooks), so the reply is
 * written on the socket: still our envelope, with the headers every reply carries.
 */
function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (error.code === "ECONNRESET" || socket.destroyed || !socket.writable) return;
  let refusal: ApiError;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    refusal = new ApiError(408, "request_timeout", "The request took too long to arrive");
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    // Blame the URI when the request line alone takes most of the limit.
    const { rawPacket } = error as { rawPacket?: unknown };
    const lineEnd = Buffer.isBuffer(rawPacket) ? rawPacket.indexOf("\r\n") : 0;
    const uriTooLong = lineEnd === -1 || lineEnd > maxHeaderSize / 2;
    refusal = uriTooLong
      ? new ApiError(414, "uri_too_long", "The URI is too long")
      : new ApiError(431, "headers_too_large", "The request headers are too large");
  } else if (error.code === "HPE_INVALID_METHOD") {
    refusal = new ApiError(501, "not_implemented", "The HTTP method is not supported");
  } else {
    refusal = invalidRequest("The request is not valid HTTP");
  }
  const requestId = randomUUID();
  const { status, body } = toErrorResponse(refusal, requestId);
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(text)}\r\n` +
      "x-content-type-options: nosniff\r\n" +
      "cache-control: no-store\r\n" +
      `x-request-id: ${requestId}\r\n` +
      "connection: close\r\n\r\n" +
      text,
  );
}

/** The methods each served path template answers, for 405 and its Allow header. */
class RouteMethods {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(url: string, methods: string | string[]) {
    const source = url
      .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      .replace(/:\w+/g, "[^/]+")
      .replace(/\*/g, ".*");
    const pattern = new RegExp(`^${source}/?$`);
    let route = this.routes.find((r) => r.pattern.source === pattern.source);
    if (!route) this.routes.push((route = { pattern, methods: new Set() }));
    for (const method of [methods].flat()) route.methods.add(method);
  }

  /** The methods some route answers at this path; empty when no route has it. */
  allowed(url: string): string[] {
    const path = url.split("?")[0]!;
    return [
      ...new Set(this.routes.filter((r) => r.pattern.test(path)).flatMap((r) => [...r.methods])),
    ].sort();
  }
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger as FastifyBaseLogger }
      : { logger: false }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logController: new RequestLog(),
    // Refusals the router makes before any route or hook runs: bad percent-encoding (400), a
    // path parameter over 100 characters (no such resource: 404).
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseQuery },
    frameworkErrors: (error, request, reply) => {
      app.frameworkReplyHeaders(reply);
      return sendError(request, reply, error);
    },
    clientErrorHandler,
  });
  const routeMethods = new RouteMethods();
  app.addHook("onRoute", (route) => routeMethods.add(route.url, route.method));

  // Before authentication: a CORS preflight carries no token.
  await app.register(securityPlugin, { corsOrigins: options.corsOrigins });
  // Before the routes: the plugin hooks each route as it is added, and its hooks run after the
  // authentication hook below, so the global limit counts per token or session.
  const limits = await registerRateLimits(app, options.rateLimits ?? {});

  const sessionMaxAgeMs = options.sessionMaxAgeMs ?? 7 * 24 * 3600_000;
  const sessionIdleMs = options.sessionIdleMs ?? 32 * 3600_000;
  const authenticator = new Authenticator(options.db, options.tokenSecret, {
    maxAgeMs: sessionMaxAgeMs,
    idleMs: sessionIdleMs,
  });
  const brokerAccess = options.broker
    ? new BrokerAccess(options.db, options.tokenSecret, {
        failuresPerClient: options.broker.failedConnects?.perClient,
        failuresPerAddress: options.broker.failedConnects?.perAddress,
      })
    : undefined;
  let brokerEndpoint: Context["brokerEndpoint"];
  if (options.broker?.mode === "embedded") {
    const embedded: EmbeddedBroker = await startEmbeddedBroker({
      access: brokerAccess!,
      dataDir: options.broker.dataDir,
      host: options.broker.host,
      port: options.broker.port,
      fallBackWhenTaken: options.broker.fallBackWhenTaken,
      log: app.log,
    });
    embedded.attachWebSocket(app.server);
    app.addHook("onClose", () => embedded.close());
    const url = options.broker.url ?? `mqtt://${embedded.host}:${embedded.port}`;
    brokerEndpoint = { host: new URL(url).hostname, url };
    app.decorate("mqttPort", embedded.port);
  } else if (options.broker?.mode === "external") {
    brokerEndpoint = { host: new URL(options.broker.url).hostname, url: options.broker.url };
  }
  // Instances reach the platform where it listens (loopback), not at its public BASE_URL.
  const runtime = options.instances
    ? new InstanceRuntime({
        db: options.db,
        driver: options.instances.driver,
        tokenSecret: options.tokenSecret,
        log: app.log,
        platformUrl: () => {
          const address = app.server.address();
          if (!address || typeof address === "string")
            throw new Error("the server is not listening");
          const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
          return `http://${["0.0.0.0", "[::]"].includes(host) ? "127.0.0.1" : host}:${address.port}`;
        },
      })
    : undefined;
  if (runtime) {
    // Instances whose desired state is running come back once the platform answers them.
    app.addHook("onListen", async () => {
      void runtime.resume().catch((error: unknown) => {
        app.log.error({ err: error }, "resuming instances failed");
      });
    });
    app.addHook("onClose", () => runtime.close());
  }
  const contextOf = (request: FastifyRequest): Context => ({
    db: options.db,
    auth: request.auth!,
    preloadedTeam: request.preloadedTeam,
    requestId: request.id,
    log: request.log,
    baseUrl: options.baseUrl,
    tokenSecret: options.tokenSecret,
    rateLimit: (procedurePath, run) => limits.procedure(request, procedurePath, run),
    broker: brokerAccess,
    brokerEndpoint,
    instances: runtime,
  });

  // Only JSON bodies: without a parser for text/plain, Fastify answers 415 for it.
  app.removeContentTypeParser("text/plain");

  await app.register(cookie);
  const ownOrigin = new URL(options.baseUrl).origin;
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    // The broker callbacks take a broker token, instances' calls an instance token, which their
    // plugins check.
    if (BROKER_CALLBACKS.test(request.url) || INSTANCE_STORAGE.test(request.url)) return;
    if (request.query instanceof MalformedQuery) {
      const { parameters } = request.query;
      return sendError(
        request,
        reply,
        invalidRequest(
          `Invalid request: ${parameters.join(", ")}: malformed percent-encoding`,
          parameters.map((path) => ({ path, message: "Malformed percent-encoding" })),
        ),
      );
    }
    const guarded = GUARDED.test(request.url);
    const account = !guarded && ACCOUNT.test(request.url);
    if (!guarded && !account) {
      // The caller of a /trpc request, known here for the rate limits; createContext refuses it
      // when there is none, in tRPC's envelope.
      if (TRPC.test(request.url)) {
        request.auth = (await authenticator.authenticate(request.headers.authorization))?.identity;
      }
      return;
    }
    const { teamId } = request.params as { teamId?: string };
    const authenticated = await authenticator.authenticate(
      request.headers.authorization,
      // A malformed team id is not looked up here; the procedure refuses it by name.
      teamId !== undefined && isId(teamId) ? teamId : undefined,
      request.cookies[SESSION_COOKIE],
    );
    if (authenticated) {
      request.auth = authenticated.identity;
      request.preloadedTeam = authenticated.team;
    } else if (guarded) {
      // A person's browser goes to the sign-in page; scripts get the bare 401.
      const wantsPage =
        request.method === "GET" &&
        new Negotiator(request.raw).mediaType(["application/json", "text/html"]) === "text/html";
      if (wantsPage) return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`);
      return reply.code(401).send(toErrorResponse(unauthorized(), request.id).body);
    }
    // Cross-site request forgery: a write that rides on the browser's cookie (or signs in) must
    // come from a page of this platform. Bearer-token requests carry no ambient credential.
    if (!SAFE_METHODS.has(request.method) && (account || request.auth?.kind === "session")) {
      const origin = request.headers.origin;
      const needsOrigin = request.auth?.kind === "session";
      if (origin !== undefined ? origin !== ownOrigin : needsOrigin) {
        return sendError(
          request,
          reply,
          forbidden("Cross-site request refused: the Origin is not this platform's", "csrf_failed"),
        );
      }
    }
  });

  // While shutting down, answers close their connection so keep-alive sockets do not hold the exit.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  app.setErrorHandler(async (error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler(async (request, reply) => {
    const allowed = routeMethods.allowed(request.url);
    return sendError(request, reply, allowed.length > 0 ? methodNotAllowed(allowed) : notFound());
  });

  const document = openApiDocument(appRouter, VERSION, options.baseUrl, limits.mayRefuse);
  await app.register(healthPlugin, { db: options.db });
  if (brokerAccess) {
    await app.register(brokerCallbacksPlugin, {
      db: options.db,
      tokenSecret: options.tokenSecret,
      access: brokerAccess,
    });
  }
  await app.register(instanceStoragePlugin, {
    db: options.db,
    tokenSecret: options.tokenSecret,
    authenticator,
    signInLimits: limits.signIn,
  });
  await app.register(docsPlugin, { document, baseUrl: options.baseUrl });
  await app.register(accountPlugin, {
    db: options.db,
    tokenSecret: options.tokenSecret,
    baseUrl: options.baseUrl,
    sessionMaxAgeMs,
    signInLimits: limits.signIn,
  });
  await app.register(pagesPlugin, {
    account: {
      db: options.db,
      tokenSecret: options.tokenSecret,
      baseUrl: options.baseUrl,
      sessionMaxAgeMs,
      signInLimits: limits.signIn,
    },
    authenticator,
    context: contextOf,
  });
  registerRestRoutes(app, appRouter, contextOf);
  await app.register(fastifyTRPCPlugin, {
    prefix: "/trpc",
    trpcOptions: {
      router: appRouter,
      createContext: async ({ req }: { req: FastifyRequest }) => {
        // Authenticated by the onRequest hook.
        if (!req.auth) throw unauthorized();
        return contextOf(req);
      },
      // A refusal's Retry-After (429), as sendError sets it for REST.
      responseMeta: ({ errors }: { errors: Error[] }) => {
        const retryAfter = errors.find((e) => e instanceof ApiError && e.retryAfter);
        return retryAfter instanceof ApiError
          ? { headers: { "retry-after": String(retryAfter.retryAfter) } }
          : {};
      },
      onError: ({ error, req }: { error: Error; req: FastifyRequest }) => {
        if (toErrorResponse(error, req.id).internal)
          req.log.error({ err: error }, "unexpected error");
      },
    },
  });

  // Housekeeping: expired tokens deleted, lastUsedAt written, on a timer and at close.
  const sweep = async () => {
    try {
      await authenticator.flushUsage();
      const expired = await deleteExpiredTokens(options.db);
      if (expired.length > 0) app.log.info({ count: expired.length }, "deleted expired tokens");
      const stale = await deleteStaleSessions(options.db, new Date(), sessionIdleMs);
      if (stale > 0) app.log.info({ count: stale }, "deleted ended sessions");
      await deleteExpiredInvitations(options.db);
    } catch (error) {
      app.log.error({ err: error }, "token housekeeping failed");
    }
  };
  const timer = setInterval(() => void sweep(), options.sweepIntervalMs ?? 60_000);
  timer.unref();
  app.addHook("onClose", async () => {
    clearInterval(timer);
    await authenticator.flushUsage();
  });
  app.decorate("sweepTokens", sweep);

  return app;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Runs the token housekeeping now (tests and shutdown). */
    sweepTokens(): Promise<void>;
    /** The embedded broker's MQTT port (BROKER_MODE=embedded only). */
    mqttPort?: number;
  }
}
