// The error envelope and every error code the API answers with.
import { z } from "zod";

export const ErrorCode = z.enum([
  "invalid_request",
  "invalid_slug",
  "invalid_team",
  "invalid_team_type",
  "invalid_name",
  "invalid_username",
  "invalid_email",
  "invalid_team_role",
  "invitation_failed",
  "too_many_invites",
  "member_limit_reached",
  "client_already_exists",
  "broker_client_limit_reached",
  "invalid_application",
  "invalid_project_name",
  "invalid_project_type",
  "invalid_stack",
  "invalid_template",
  "instance_limit_reached",
  "project_suspended",
  "runtime_unavailable",
  "password_change_failed",
  "password_change_failed_too_weak",
  "user_suspended",
  "password_expired",
  "csrf_failed",
  "too_many_requests",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "request_timeout",
  "payload_too_large",
  "uri_too_long",
  "unsupported_media_type",
  "headers_too_large",
  "unexpected_error",
  "not_implemented",
  "not_ready",
  "database_unavailable",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorBody = z
  .object({
    code: z.string().describe("Stable snake_case error code"),
    error: z.string().describe("Human-readable message"),
    requestId: z.string().describe("Quote it when reporting a problem; it is in the server log"),
    errors: z
      .array(
        z.object({
          path: z.string().describe("Dotted path of the field at fault; empty for the whole body"),
          message: z.string(),
        }),
      )
      .optional()
      .describe("The fields at fault (validation errors only)"),
  })
  .meta({ id: "APIError" });
export type ErrorBody = z.infer<typeof ErrorBody>;
