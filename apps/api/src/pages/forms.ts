// What a page shows when a form fails: the API's own error message, and its per-field messages
// beside the fields they name.
import type { FastifyReply, FastifyRequest } from "fastify";
import { retryAfterOf, toErrorResponse } from "../core/errors";

export interface FormError {
  status: number;
  /** The API's `code` (e.g. password_change_failed_too_weak). */
  code: string;
  message: string;
  /** Field name → message, for the fields the error names (the first message of each). */
  fields: Record<string, string>;
  /** Every message about a field, in order (several invitees may each have their reason). */
  reasons: string[];
}

/**
 * Any error a procedure threw, as the page shows it (unexpected ones are logged, not shown). A
 * rate limit's Retry-After goes on the reply, as the API sends it.
 */
export function formError(request: FastifyRequest, reply: FastifyReply, error: unknown): FormError {
  const { status, body, internal } = toErrorResponse(error, request.id);
  const retryAfter = status === 429 || status === 503 ? retryAfterOf(error) : undefined;
  if (retryAfter) reply.header("retry-after", retryAfter);
  if (internal) {
    request.log.error({ err: error }, "unexpected error");
    return {
      status,
      code: body.code,
      message: `Something went wrong on our side; please try again (request ${request.id}).`,
      fields: {},
      reasons: [],
    };
  }
  const fields: Record<string, string> = {};
  for (const field of body.errors ?? []) fields[field.path] ??= field.message;
  const reasons = (body.errors ?? []).map((item) => item.message);
  return { status, code: body.code, message: body.error, fields, reasons };
}

/** A form field as posted: one string (the first, if repeated), or undefined. */
export function field(body: unknown, name: string): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : undefined;
}

/** A repeated form field (checkboxes) as a list. */
export function fields(body: unknown, name: string): string[] {
  if (typeof body !== "object" || body === null) return [];
  const value = (body as Record<string, unknown>)[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((item): item is string => typeof item === "string");
}
