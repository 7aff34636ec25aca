// Request logging: the platform's logger (structured JSON, asynchronous, tokens and passwords
// redacted), one line per request when it completes (at `debug`), and the request id every reply
// carries.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type FastifyBaseLogger, LogController } from "fastify";
import fp from "fastify-plugin";
import { randomUUID } from "node:crypto";
import { type DestinationStream, type Logger, pino } from "pino";

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

/**
 * One log line per request, when it completes (Fastify's default is two), at `debug`: at the
 * default level (`info`) a line per request was a third of what a refused request cost the
 * server (23 → 36 µs of CPU, bench/README.md), paid most by a client hammering with bad tokens.
 * Server errors are logged at `error` where they are answered (core/errors.ts); what users did is
 * in the audit log.
 */
class RequestLog extends LogController {
  override incomingRequest() {}
  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply) {
    request.log.debug(
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

/** Fastify's options for the log: given when the server is made, before any plugin. */
export function requestLogOptions(logger: Logger | undefined) {
  return {
    ...(logger ? { loggerInstance: logger as FastifyBaseLogger } : { logger: false }),
    // Each request's id is a UUID of ours (`x-request-id`, `requestId` in error bodies), never
    // one a client sends.
    genReqId: () => randomUUID(),
    requestIdHeader: false as const,
    logController: new RequestLog(),
  };
}

/** Every reply names its request, so a client can quote it. */
export const requestLogPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook("onRequest", (request, reply, done) => {
      reply.header("x-request-id", request.id);
      done();
    });
  },
  { name: "request-log" },
);
