// The CLI's one way to the server: the typed tRPC client of the API's router, and the translation
// of whatever it throws into the API's error code and message.
import type { AppRouter } from "@flowplane/api";
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from "@trpc/client";
import type { Login } from "./config";
import { CliError } from "./errors";

export type Client = TRPCClient<AppRouter>;

export const TIMEOUT_MS = 30_000;

export function createClient({ url, token }: Login): Client {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${url}/trpc`,
        headers: { authorization: `Bearer ${token}` },
        // Network failures name the server, which fetch's own "fetch failed" does not.
        fetch: async (input, init) => {
          const signal = AbortSignal.any([
            AbortSignal.timeout(TIMEOUT_MS),
            ...(init?.signal ? [init.signal] : []),
          ]);
          try {
            return await fetch(input, { ...init, signal });
          } catch (error) {
            throw unreachable(url, error);
          }
        },
      }),
    ],
  });
}

/** A request that got no answer, as the user should see it: the server's URL and the reason. */
export function unreachable(url: string, error: unknown): CliError {
  if (error instanceof Error && error.name === "TimeoutError") {
    return new CliError(`${url} did not answer within ${TIMEOUT_MS / 1000} s`, "unreachable");
  }
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new CliError(`cannot reach ${url}: ${reason}`, "unreachable");
}

/** The API's error as the user should see it; anything else is passed through unchanged. */
export function apiFailure(error: unknown): unknown {
  if (!(error instanceof TRPCClientError)) return error;
  const failure = error as TRPCClientError<AppRouter>;
  if (failure.cause instanceof CliError) return failure.cause;

  if (failure.data) {
    const { code, requestId, httpStatus } = failure.data;
    return new CliError(failure.message, code, serverFault(code, requestId), httpStatus);
  }
  // Fastify's own refusals (a body too large, not JSON) come before tRPC runs, in the REST body.
  const body = failure.meta?.responseJSON;
  const status = (failure.meta?.response as Response | undefined)?.status;
  if (isErrorBody(body)) {
    return new CliError(body.error, body.code, serverFault(body.code, body.requestId), status);
  }
  return new CliError(
    status ? `the server answered HTTP ${status} with no API error` : failure.message,
    "unexpected_response",
  );
}

/** The API's `{ code, error, requestId }` envelope of a failed REST request (or Fastify's). */
export function restFailure(body: unknown, status: number): CliError {
  if (isErrorBody(body)) {
    return new CliError(body.error, body.code, serverFault(body.code, body.requestId), status);
  }
  return new CliError(
    `the server answered HTTP ${status} with no API error`,
    "unexpected_response",
  );
}

function isErrorBody(body: unknown): body is { code: string; error: string; requestId?: string } {
  return (
    typeof body === "object" &&
    body !== null &&
    "code" in body &&
    typeof body.code === "string" &&
    "error" in body &&
    typeof body.error === "string"
  );
}

/** The request id is what the server log is searched by; only worth showing for its own faults. */
function serverFault(code: string, requestId: string | undefined): string[] {
  return code === "unexpected_error" && requestId ? [`request id: ${requestId}`] : [];
}
