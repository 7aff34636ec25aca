// Request logging: the platform's logger (structured JSON, asynchronous, tokens and passwords
// redacted), one line per request when it completes (at `debug`), and the request id every reply
// carries.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type FastifyBaseLogger, LogController } from "fastify";
import fp from "fastify-plugin";
import { randomUUID } from "node:crypto";
import {
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type Logger,
  pino,
} from "pino";

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
        // The client's (the forwarded one behind TRUST_PROXY's proxies).
        ip: request.ip,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      "request",
    );
  }
}

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type Log = (...args: unknown[]) => void;

/**
 * A request's logger, made when the request first logs something at an enabled level. Fastify
 * makes a child logger for every request, and pino's child serializes its bindings through the
 * redaction on the spot: on a refused request that was ~3 % of the server's busy time, for a
 * logger that at the default level (`info`) almost never writes (the line per request is at
 * `debug`). A line it writes is the same as the child's: the request id bound, redaction applied.
 */
class RequestLogger {
  #made: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Record<string, unknown>;

  constructor(parent: Logger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  get #logger(): Logger {
    return (this.#made ??= this.#parent.child(this.#bindings));
  }

  #log(level: Level, args: unknown[]): void {
    if ((this.#made ?? this.#parent).isLevelEnabled(level)) {
      (this.#logger[level] as Log).apply(this.#logger, args);
    }
  }

  // Methods on the prototype rather than closures made for each request's logger.
  fatal(...args: unknown[]) {
    this.#log("fatal", args);
  }
  error(...args: unknown[]) {
    this.#log("error", args);
  }
  warn(...args: unknown[]) {
    this.#log("warn", args);
  }
  info(...args: unknown[]) {
    this.#log("info", args);
  }
  debug(...args: unknown[]) {
    this.#log("debug", args);
  }
  trace(...args: unknown[]) {
    this.#log("trace", args);
  }
  silent() {}

  get level(): string {
    return (this.#made ?? this.#parent).level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  child(bindings: Record<string, unknown>, options?: Record<string, unknown>) {
    return this.#logger.child(bindings, options);
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
    // Without a logger Fastify's requests share its null logger (no child to save).
    ...(logger && { childLoggerFactory: lazyChildLogger }),
  };
}

/** A route of its own level or serializers gets pino's child at once; others a lazy one. */
const lazyChildLogger = (
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger =>
  Object.keys(options).length > 0
    ? parent.child(bindings, options)
    : (new RequestLogger(parent as Logger, bindings) as unknown as FastifyBaseLogger);

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
