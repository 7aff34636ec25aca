// The audit log as it is read: a team's, the platform's (administrators) and a user's own, with
// FlowFuse's entry shape, filters and envelope, and cursor paging newest first.
import { z } from "zod";
import { Id, ListMeta, PageInput, Text, Timestamp } from "./common";

/** What a team's log can be narrowed to (FlowFuse's values). */
export const AUDIT_LOG_SCOPES = ["team", "application", "project", "device"] as const;
export const AuditLogScope = z.enum(AUDIT_LOG_SCOPES);

/**
 * `count` counts matching entries up to this many and stops there: a count over every entry of a
 * long log would cost as much as reading it.
 */
export const AUDIT_LOG_COUNT_CAP = 1000;

/** How many `event` values one request may give. */
export const MAX_AUDIT_EVENTS = 50;

const EventName = Text.min(1).max(128);

/** Filters and paging every audit log takes. */
const AuditLogFilters = {
  ...PageInput,
  event: z
    .union([EventName, z.array(EventName).min(1).max(MAX_AUDIT_EVENTS)])
    .describe(
      "Only these events (exact names); repeat the parameter for several (`?event=a&event=b`)",
    )
    .optional(),
  username: Text.min(1)
    .max(64)
    .describe("Only entries whose user (trigger) has exactly this username")
    .optional(),
  query: Text.min(1)
    .max(128)
    .describe(
      "Only entries whose event, body, username or user's name contains this text (any case)",
    )
    .optional(),
};

export const AuditLogInput = z.strictObject(AuditLogFilters);
export type AuditLogInput = z.infer<typeof AuditLogInput>;

export const TeamAuditLogInput = z.strictObject({
  teamId: Id,
  ...AuditLogFilters,
  scope: AuditLogScope.describe(
    "Only entries about the team itself (`team`), or about its applications, instances (`project`) or devices; absent: all of them",
  ).optional(),
});
export type TeamAuditLogInput = z.infer<typeof TeamAuditLogInput>;

const IncludeChildren = z
  .enum(["true", "false", "1", "0"])
  .describe("`true` (or `1`): the scope's entities' children too, as FlowFuse's");

export const ApplicationAuditLogInput = z.strictObject({
  applicationId: Id,
  ...AuditLogFilters,
  scope: z
    .enum(["application", "project", "device"])
    .describe(
      "Entries about the application itself (`application`, the default), its instances (`project`) or its devices (`device`)",
    )
    .optional(),
  includeChildren: IncludeChildren.optional(),
});
export type ApplicationAuditLogInput = z.infer<typeof ApplicationAuditLogInput>;

export const InstanceAuditLogInput = z.strictObject({
  instanceId: Id,
  ...AuditLogFilters,
  scope: z
    .enum(["project", "device"])
    .describe(
      "Entries about the instance itself (`project`, the default) or its devices (`device`)",
    )
    .optional(),
  includeChildren: IncludeChildren.optional(),
});
export type InstanceAuditLogInput = z.infer<typeof InstanceAuditLogInput>;

export const AuditLogEntry = z
  .object({
    id: Id,
    createdAt: Timestamp,
    username: z.string().nullable().describe("The acting user's username; null for the platform"),
    event: z.string().describe("FlowFuse's event name, e.g. `team.created`"),
    source: z
      .string()
      .nullable()
      .describe("`api` for a token's request, `system` for the platform, null in a browser"),
    scope: z
      .object({
        id: z.string().nullable().describe("The entity's id; null for the platform"),
        type: z.string().describe("`platform`, `user` or `team` (later: application …)"),
      })
      .describe("What the entry is about"),
    trigger: z
      .object({
        id: z.string().nullable().describe("The acting user's id; null for the platform"),
        type: z.enum(["user", "system"]),
        name: z.string().describe("The acting user's username, or the platform's name"),
        ip: z
          .string()
          .nullable()
          .optional()
          .describe(
            "The address the request came from (the client's, past the proxies `TRUST_PROXY` trusts); shown to administrators acting as such only; null when not recorded",
          ),
      })
      .describe("Who acted"),
    body: z
      .record(z.string(), z.unknown())
      .describe("What changed: names and ids, never a token or a password"),
  })
  .meta({ id: "AuditLogEntry" });
export type AuditLogEntry = z.infer<typeof AuditLogEntry>;

export const AuditLog = z
  .object({
    meta: ListMeta,
    count: z
      .number()
      .int()
      .describe(
        `Matching entries, counted up to ${AUDIT_LOG_COUNT_CAP}: ${AUDIT_LOG_COUNT_CAP} means at least that many`,
      ),
    log: z.array(AuditLogEntry).describe("Newest first"),
  })
  .meta({ id: "AuditLog" });
export type AuditLog = z.infer<typeof AuditLog>;

/** The CSV export's columns, in order; each cell is the JSON of the entry's field. */
export const AUDIT_LOG_CSV_COLUMNS = [
  "id",
  "event",
  "body",
  "scope",
  "trigger",
  "createdAt",
] as const;
