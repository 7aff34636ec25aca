// The Fastify server: plugins registered in one place, authentication in one hook, errors in one
// handler. `buildApp` does not listen, so tests and the CLI's tests run the real thing in-process.
import type { Db, TokenIdentity } from "@flowplane/db";
import { deleteExpiredTokens } from "@flowplane/db";
import { fastifyTRPCPlugin } from "@trpc/server/adapters/fastify";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import { randomUUID } from "node:crypto";
import { type DestinationStream, type Logger, pino } from "pino";
import { Authenticator, type PreloadedTeam } from "./authentication";
import { notFound, toErrorResponse, trpcErrorEnvelope, unauthorized } from "./errors";
import { openApiDocument } from "./openapi";
import { docsPlugin } from "./plugins/docs";
import { healthPlugin } from "./plugins/health";
import { registerRestRoutes } from "./rest";
import { appRouter } from "./routers/index";
import type { Context } from "./trpc";
import { VERSION } from "./version";

declare module "fastify" {
  interface FastifyRequest {
    auth?: TokenIdentity;
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
        paths: ["req.headers.authorization", "*.authorization", "token"],
        censor: "[redacted]",
      },
    },
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** REST and the document; /trpc authenticates in its createContext, to answer in tRPC's shape. */
const GUARDED = /^\/api(\/|\?|$)/;

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

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger as FastifyBaseLogger }
      : { logger: false }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logController: new RequestLog(),
    routerOptions: { ignoreTrailingSlash: true },
  });

  const authenticator = new Authenticator(options.db, options.tokenSecret);
  const contextOf = (request: FastifyRequest): Context => ({
    db: options.db,
    auth: request.auth!,
    preloadedTeam: request.preloadedTeam,
    requestId: request.id,
    log: request.log,
    baseUrl: options.baseUrl,
    tokenSecret: options.tokenSecret,
  });

  // Only JSON bodies: without a parser for text/plain, Fastify answers 415 for it.
  app.removeContentTypeParser("text/plain");

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (GUARDED.test(request.url)) {
      const { teamId } = request.params as { teamId?: string };
      const authenticated = await authenticator.authenticate(request.headers.authorization, teamId);
      if (!authenticated) {
        return reply.code(401).send(toErrorResponse(unauthorized(), request.id).body);
      }
      request.auth = authenticated.identity;
      request.preloadedTeam = authenticated.team;
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

  app.setErrorHandler(async (error, request, reply) => {
    const { status, body, internal } = toErrorResponse(error, request.id);
    if (internal) request.log.error({ err: error }, "unexpected error");
    // Refusals before tRPC runs (too large, not JSON) still answer /trpc clients in their envelope.
    if (request.url.startsWith("/trpc/")) {
      return reply.code(status).send(trpcErrorEnvelope(status, body));
    }
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const { status, body } = toErrorResponse(notFound(), request.id);
    return reply.code(status).send(body);
  });

  const document = openApiDocument(appRouter, VERSION);
  await app.register(healthPlugin, { db: options.db });
  await app.register(docsPlugin, { document });
  registerRestRoutes(app, appRouter, contextOf);
  await app.register(fastifyTRPCPlugin, {
    prefix: "/trpc",
    trpcOptions: {
      router: appRouter,
      createContext: async ({ req }: { req: FastifyRequest }) => {
        const authenticated = await authenticator.authenticate(req.headers.authorization);
        if (!authenticated) throw unauthorized();
        req.auth = authenticated.identity;
        return contextOf(req);
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
  }
}
