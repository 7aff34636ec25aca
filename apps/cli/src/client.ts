// The CLI's one way to the server: @flowplane/client's typed tRPC client of the API's router (with
// the CLI's own fetch: its timeout and its messages), and the translation of whatever it throws
// into the API's error code and message.
import {
  createFlowplaneClient,
  type FlowplaneClient,
  type FlowplaneRouter,
} from "@flowplane/client";
import { TRPCClientError } from "@trpc/client";
import { CliError } from "./errors";
import { when } from "./output";

export type Client = FlowplaneClient;

export const TIMEOUT_MS = 30_000;

/** Where the token in use came from: a refused token is reported by its source, never its value. */
export type TokenSource =
  | { kind: "environment" }
  | {
      kind: "login";
      /** The file the login is stored in. */
      file: string;
      /** The token's expiry where the CLI knows it (null: never; absent: not known). */
      expiresAt?: string | null;
    }
  | { kind: "argument"; option: string };

export function createClient(
  { url, token }: { url: string; token: string },
  source: TokenSource,
): Client {
  return createFlowplaneClient({
    url,
    token,
    // Network failures name the server, which fetch's own "fetch failed" does not.
    fetch: async (input, init) => {
      const signal = AbortSignal.any([
        AbortSignal.timeout(TIMEOUT_MS),
        ...(init?.signal ? [init.signal] : []),
      ]);
      let response: Response;
      try {
        response = await fetch(input, { ...init, signal });
      } catch (error) {
        throw unreachable(url, error);
      }
      // The API's 401 says only `unauthorized`: the user needs to know which token it was.
      if (response.status === 401) throw refused(url, source);
      return response;
    },
  });
}

/** The server's 401: which token it refused, why where the CLI knows, and what to do. */
export function refused(url: string, source: TokenSource, now = Date.now()): CliError {
  const fail = (message: string, ...details: string[]) =>
    new CliError(message, "unauthorized", details, 401);
  const anyReason = "it was revoked or has expired, or its user is suspended or deleted";
  switch (source.kind) {
    case "environment":
      return fail(
        `${url} refused the token in FLOWPLANE_TOKEN`,
        anyReason,
        "set FLOWPLANE_TOKEN to a token that works, or unset it to use the login stored by `flowplane login`",
      );
    case "argument":
      return fail(
        `${url} refused the token given to ${source.option}`,
        `${anyReason}, or it was never issued by this server`,
      );
    case "login": {
      const again = `run \`flowplane login\` again (the login is stored in ${source.file})`;
      const { expiresAt } = source;
      if (expiresAt && Date.parse(expiresAt) <= now) {
        return fail(`the token of the stored login expired on ${when(expiresAt)}`, again);
      }
      return fail(
        `${url} refused the token of the stored login`,
        expiresAt === undefined
          ? anyReason
          : "it was revoked (`flowplane tokens revoke`, or with the token that created it), or its user is suspended or deleted",
        again,
      );
    }
  }
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
  const failure = error as TRPCClientError<FlowplaneRouter>;
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

/**
 * An administrator's request. The API refuses anyone else with only `unauthorized`, which tells
 * nobody what is missing: `hint` says it, under the message.
 */
export async function asAdministrator<T>(request: Promise<T>, hint: string): Promise<T> {
  try {
    return await request;
  } catch (error) {
    const failure = apiFailure(error);
    if (failure instanceof CliError && failure.status === 403 && failure.code === "unauthorized") {
      throw new CliError(failure.message, failure.code, [hint]);
    }
    throw failure;
  }
}
