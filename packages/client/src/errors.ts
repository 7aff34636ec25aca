// The API's errors as a program sees them: whatever a call threw (tRPC's client error, or a REST
// route's error envelope), read as the contract's error code, the server's message, the HTTP status
// and the request id the server log is searched by. The contract is imported for its types only:
// its schemas (and zod) would make a browser's bundle of this client fourteen times larger.
import type { ErrorCode } from "@flowplane/contract";
import { TRPCClientError } from "@trpc/client";

/** A failure the API answered with: its `code` is one of the contract's. */
export class FlowplaneClientError extends Error {
  override name = "FlowplaneClientError";
  readonly code: ErrorCode;
  /** The HTTP status, where the failure came with one. */
  readonly status: number | undefined;
  /** The request's id in the server log (quoted for `unexpected_error`). */
  readonly requestId: string | undefined;

  constructor(
    message: string,
    details: { code: ErrorCode; status?: number; requestId?: string; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
    this.code = details.code;
    this.status = details.status;
    this.requestId = details.requestId;
  }
}

/**
 * The API's code in its error data or envelope: the server is built with the contract, so its
 * codes are the contract's (a newer server may answer with a code this version does not list).
 */
const isErrorCode = (code: unknown): code is ErrorCode =>
  typeof code === "string" && /^[a-z_]+$/.test(code);

/**
 * The API's error in whatever a call threw: a FlowplaneClientError as it is, tRPC's client error
 * by its `data` (or, for Fastify's own refusals before tRPC runs, the REST envelope of its
 * response); undefined when the API did not answer with one of its codes (no answer at all, or
 * not the API).
 */
export function flowplaneError(error: unknown): FlowplaneClientError | undefined {
  if (error instanceof FlowplaneClientError) return error;
  if (!(error instanceof TRPCClientError)) return undefined;
  const data: unknown = error.data;
  const status = (error.meta?.response as Response | undefined)?.status;
  if (isRecord(data) && isErrorCode(data.code)) {
    return new FlowplaneClientError(error.message, {
      code: data.code,
      status: typeof data.httpStatus === "number" ? data.httpStatus : status,
      requestId: typeof data.requestId === "string" ? data.requestId : undefined,
      cause: error,
    });
  }
  return envelopeError(error.meta?.responseJSON, status, error);
}

/** The API's `{ code, error, requestId }` envelope of a failed REST request, if it is one. */
export function envelopeError(
  body: unknown,
  status: number | undefined,
  cause?: unknown,
): FlowplaneClientError | undefined {
  if (!isRecord(body) || !isErrorCode(body.code) || typeof body.error !== "string") {
    return undefined;
  }
  return new FlowplaneClientError(body.error, {
    code: body.code,
    ...(status !== undefined && { status }),
    ...(typeof body.requestId === "string" && { requestId: body.requestId }),
    cause,
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null;

/** What a REST route outside tRPC refused with: its error envelope, or the bare status. */
export async function refusalOf(response: Response): Promise<FlowplaneClientError> {
  const body: unknown = await response.json().catch(() => undefined);
  return (
    envelopeError(body, response.status) ??
    new FlowplaneClientError(`the server answered HTTP ${response.status} with no API error`, {
      code: "unexpected_error",
      status: response.status,
    })
  );
}
