// One error type with an HTTP status and a snake_case code, and the one function that turns any
// error into the `{ code, error, requestId }` body. No stack or driver text ever reaches a client.
import type { ErrorBody, ErrorCode } from "@flowplane/contract";
import { DatabaseUnavailableError } from "@flowplane/db";
import { TRPCError } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED",
  408: "TIMEOUT",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "TOO_MANY_REQUESTS",
  501: "NOT_IMPLEMENTED",
  503: "SERVICE_UNAVAILABLE",
};

const STATUS_BY_TRPC_CODE = Object.fromEntries(
  Object.entries(TRPC_CODE_BY_STATUS).map(([status, code]) => [code, Number(status)]),
) as Partial<Record<TRPC_ERROR_CODE_KEY, number>>;

const DEFAULT_CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  408: "request_timeout",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "too_many_requests",
  503: "not_ready",
};

export type FieldError = { path: string; message: string };

/** An error a client should see. It is a TRPCError so that tRPC passes it through unchanged. */
export class ApiError extends TRPCError {
  readonly status: number;
  readonly apiCode: string;
  readonly fields: FieldError[] | undefined;
  /** With 405: the methods the path does answer (the Allow header). */
  allow?: string;
  /** With 429: seconds until the limit's window ends; with 503: when to try again (Retry-After). */
  retryAfter?: number;

  constructor(status: number, apiCode: string, message: string, fields?: FieldError[]) {
    // A client error needs no stack trace, and capturing one is most of what throwing costs.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super({ code: TRPC_CODE_BY_STATUS[status] ?? "INTERNAL_SERVER_ERROR", message });
    Error.stackTraceLimit = stackTraceLimit;
    this.status = status;
    this.apiCode = apiCode;
    this.fields = fields;
  }
}

export const unauthorized = () => new ApiError(401, "unauthorized", "unauthorized");
/** FlowFuse answers a failed permission check with 403 `unauthorized`; so do we. */
export const forbidden = (message = "unauthorized", code = "unauthorized") =>
  new ApiError(403, code, message);
export const notFound = (message = "Not Found") => new ApiError(404, "not_found", message);
/** A snapshot's secrets that do not open with the platform's secret (it changed since). */
export const unreadableSnapshot = () =>
  new ApiError(
    500,
    "unexpected_error",
    "The snapshot's credentials cannot be decrypted with the platform's secret",
  );
/** Seconds a client waits before it tries again while the database is away. */
export const DATABASE_RETRY_AFTER_S = 5;

/** The database cannot be reached now (down, restarting, out of connections): try again soon. */
export function databaseUnavailable(): ApiError {
  const error = new ApiError(
    503,
    "database_unavailable",
    "The database is unavailable; try again shortly",
  );
  error.retryAfter = DATABASE_RETRY_AFTER_S;
  return error;
}

/**
 * Whether `error` is the database's connection failing: the pool's DatabaseUnavailableError
 * (create-db.ts turns every connection failure into one), thrown as it is or wrapped by tRPC. A
 * socket error of anything else (an instance, a webhook's receiver) is not the database's.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof DatabaseUnavailableError ||
    (error instanceof TRPCError && error.cause instanceof DatabaseUnavailableError)
  );
}

/** Seconds before a retry, for the refusals that say (Retry-After): 429 and 503. */
export function retryAfterOf(error: unknown): number | undefined {
  return toApiError(error)?.retryAfter;
}

export const invalidRequest = (message: string, fields?: FieldError[]) =>
  new ApiError(400, "invalid_request", message, fields);
export function methodNotAllowed(allowed: string[]): ApiError {
  const error = new ApiError(
    405,
    "method_not_allowed",
    `Method not allowed; use ${allowed.join(", ")}`,
  );
  error.allow = allowed.join(", ");
  return error;
}

function fieldErrors(error: ZodError): FieldError[] {
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          path: [...issue.path, key].join("."),
          message: "Unknown field",
        }))
      : [{ path: issue.path.join("."), message: issue.message }],
  );
}

export function validationError(error: ZodError): ApiError {
  const fields = fieldErrors(error);
  const summary = fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message)).join("; ");
  return invalidRequest(`Invalid request: ${summary}`, fields);
}

/** Whatever was thrown, as the status and body a client gets; `internal` when it must be logged. */
export function toErrorResponse(
  error: unknown,
  requestId: string,
): { status: number; body: ErrorBody; internal: boolean } {
  const apiError = toApiError(error);
  if (apiError) {
    const body: ErrorBody = { code: apiError.apiCode, error: apiError.message, requestId };
    if (apiError.fields) body.errors = apiError.fields;
    return { status: apiError.status, body, internal: false };
  }
  return {
    status: 500,
    body: { code: "unexpected_error", error: "Unexpected error", requestId },
    internal: true,
  };
}

function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (error instanceof TRPCError) {
    if (error.cause instanceof ApiError) return error.cause;
    // tRPC reports a failed input parse as BAD_REQUEST caused by the ZodError.
    if (error.code === "BAD_REQUEST" && error.cause instanceof ZodError) {
      return validationError(error.cause);
    }
    const status = STATUS_BY_TRPC_CODE[error.code];
    if (status && status < 500) {
      return new ApiError(
        status,
        DEFAULT_CODE_BY_STATUS[status] ?? "invalid_request",
        error.message,
      );
    }
    return undefined;
  }
  // Fastify's own client errors: body too large, wrong content type, malformed JSON, bad URL.
  if (error instanceof Error && "statusCode" in error) {
    const status = Number((error as { statusCode: unknown }).statusCode);
    const code = (error as { code?: unknown }).code;
    if (code === "FST_ERR_BAD_URL") {
      return invalidRequest("The URL is not valid: a percent-encoding is malformed");
    }
    // A path parameter too long to be any id: no such resource.
    if (code === "FST_ERR_MAX_PARAM_LENGTH") return notFound();
    if (status === 413) return new ApiError(413, "payload_too_large", "The body is too large");
    if (status === 415) {
      return new ApiError(415, "unsupported_media_type", "The body must be application/json");
    }
    if (status === 400 && typeof code === "string" && code.startsWith("FST_ERR_CTP")) {
      return invalidRequest("The body is not valid JSON");
    }
    if (status >= 400 && status < 500) {
      return new ApiError(
        status,
        DEFAULT_CODE_BY_STATUS[status] ?? "invalid_request",
        error.message,
      );
    }
  }
  return undefined;
}

/** An error body in tRPC's envelope, as the errorFormatter in trpc.ts shapes it. */
export function trpcErrorEnvelope(status: number, body: ErrorBody) {
  const key = TRPC_CODE_BY_STATUS[status] ?? "INTERNAL_SERVER_ERROR";
  return {
    error: {
      message: body.error,
      code: TRPC_ERROR_CODES_BY_KEY[key],
      data: { code: body.code, httpStatus: status, requestId: body.requestId, errors: body.errors },
    },
  };
}

/** Sends any error as our envelope (tRPC's on /trpc), with the request id. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown) {
  const { status, body, internal } = toErrorResponse(error, request.id);
  if (internal) request.log.error({ err: error }, "unexpected error");
  reply.header("x-request-id", request.id);
  if (status === 405 && error instanceof ApiError && error.allow)
    reply.header("allow", error.allow);
  const retryAfter = status === 429 || status === 503 ? retryAfterOf(error) : undefined;
  if (retryAfter) reply.header("retry-after", retryAfter);
  // Refusals before tRPC runs (too large, not JSON) still answer /trpc clients in their envelope.
  if (request.url.startsWith("/trpc/")) {
    return reply.code(status).send(trpcErrorEnvelope(status, body));
  }
  return reply.code(status).send(body);
}
