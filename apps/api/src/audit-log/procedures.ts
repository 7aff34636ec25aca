// The audit log to read: a team's (owners), the platform's (administrators) and the caller's own,
// each as JSON a page at a time and as a CSV export of the same page.
import {
  AUDIT_LOG_COUNT_CAP,
  AUDIT_LOG_CSV_COLUMNS,
  AuditLog,
  type AuditLogEntry,
  AuditLogInput,
  TeamAuditLogInput,
} from "@flowplane/contract";
import { type AuditLogOf, type AuditLogRow, type Db, listAuditLog } from "@flowplane/db";
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { procedure, router } from "../core/trpc";

/** The trigger's name for what the platform did itself. */
const PLATFORM_NAME = "Flowplane Platform";

export function auditLogEntryView(row: AuditLogRow): AuditLogEntry {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    username: row.username,
    event: row.event,
    source: row.source,
    scope: { id: row.entity_id, type: row.entity_type },
    trigger:
      row.actor_id === null
        ? { id: null, type: "system", name: PLATFORM_NAME }
        : { id: row.actor_id, type: "user", name: row.username ?? "deleted user" },
    body: row.body,
  };
}

export async function readLog(db: Db, of: AuditLogOf, input: AuditLogInput): Promise<AuditLog> {
  const { event, ...rest } = input;
  const page = await listAuditLog(
    db,
    of,
    { ...rest, events: event === undefined ? undefined : [event].flat() },
    AUDIT_LOG_COUNT_CAP,
  );
  return {
    meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
    count: page.count,
    log: page.rows.map(auditLogEntryView),
  };
}

/**
 * FlowFuse's export: a header line, then one line per entry, each cell the JSON of the entry's
 * field, quoted as CSV needs (RFC 4180, CRLF line ends).
 */
export function auditLogCsv(log: readonly AuditLogEntry[]): string {
  return stringify(
    log.map((entry) => AUDIT_LOG_CSV_COLUMNS.map((column) => JSON.stringify(entry[column]))),
    { header: true, columns: [...AUDIT_LOG_CSV_COLUMNS], record_delimiter: "windows" },
  );
}

const PAGING =
  "Newest first, a page at a time: `meta.next_cursor` (present when there are older entries) is the `cursor` of the next page. " +
  `\`limit\` defaults to 100, at most 1000 (FlowFuse's default is 1000 with no maximum). \`count\` counts the matching entries only up to ${AUDIT_LOG_COUNT_CAP} (FlowFuse counts them all, which costs a scan of the whole log): ${AUDIT_LOG_COUNT_CAP} means at least that many. ` +
  "A page costs the same however long the log is; `query` (a text search) reads entries until the page is full, so a rare match in a long log is slower.";

const EXPORT =
  "The same entries as the list with the same parameters (one page: the first column of the last row is the next page's `cursor`), as CSV: header `id,event,body,scope,trigger,createdAt`, CRLF line ends, each cell the JSON of the field.";

const teamLog = (input: TeamAuditLogInput): AuditLogOf => ({
  teamId: input.teamId,
  entityType: input.scope,
});
const teamFilters = ({ teamId: _, scope: __, ...filters }: TeamAuditLogInput): AuditLogInput =>
  filters;

const TEAM_DESCRIPTION = `The team's entries. ${PAGING} \`scope\` narrows the log to entries about the team itself (\`team\`); \`application\`, \`project\` and \`device\` are accepted, as FlowFuse's, and have no entries until those areas exist. FlowFuse's \`associations\` and \`includeChildren\` are not given.`;
const PLATFORM_DESCRIPTION = `Platform and account events (sign-ins, users created, changed and deleted, tokens, passwords), as FlowFuse's platform log. ${PAGING}`;
const USER_DESCRIPTION = `The caller's own account events: entries about their account (sign-ins, tokens, password and profile changes, made by them or by an administrator) and changes they made to other accounts. Beyond FlowFuse, which shows these only to administrators. ${PAGING}`;

export const auditLogRouter = router({
  team: procedure
    .meta({
      permission: "team:audit-log",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/audit-log",
        tags: ["Audit log"],
        summary: "The team's audit log (owners)",
        description: TEAM_DESCRIPTION,
      },
    })
    .input(TeamAuditLogInput)
    .output(AuditLog)
    .query(({ ctx, input }) => readLog(ctx.db, teamLog(input), teamFilters(input))),

  teamExport: procedure
    .meta({
      permission: "team:audit-log",
      contentType: "text/csv",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/audit-log/export",
        tags: ["Audit log"],
        summary: "The team's audit log as CSV (owners)",
        description: EXPORT,
      },
    })
    .input(TeamAuditLogInput)
    .output(z.string())
    .query(async ({ ctx, input }) =>
      auditLogCsv((await readLog(ctx.db, teamLog(input), teamFilters(input))).log),
    ),

  platform: procedure
    .meta({
      permission: "platform:audit-log",
      openapi: {
        method: "GET",
        path: "/api/v1/admin/audit-log",
        tags: ["Audit log"],
        summary: "The platform's audit log (administrators)",
        description: PLATFORM_DESCRIPTION,
      },
    })
    .input(AuditLogInput)
    .output(AuditLog)
    .query(({ ctx, input }) => readLog(ctx.db, { platform: true }, input)),

  platformExport: procedure
    .meta({
      permission: "platform:audit-log",
      contentType: "text/csv",
      openapi: {
        method: "GET",
        path: "/api/v1/admin/audit-log/export",
        tags: ["Audit log"],
        summary: "The platform's audit log as CSV (administrators)",
        description: EXPORT,
      },
    })
    .input(AuditLogInput)
    .output(z.string())
    .query(async ({ ctx, input }) =>
      auditLogCsv((await readLog(ctx.db, { platform: true }, input)).log),
    ),

  user: procedure
    .meta({
      permission: "user:audit-log",
      openapi: {
        method: "GET",
        path: "/api/v1/user/audit-log",
        tags: ["Audit log"],
        summary: "Your own account's audit log",
        description: USER_DESCRIPTION,
      },
    })
    .input(AuditLogInput)
    .output(AuditLog)
    .query(({ ctx, input }) => readLog(ctx.db, { userId: ctx.auth.userId }, input)),

  userExport: procedure
    .meta({
      permission: "user:audit-log",
      contentType: "text/csv",
      openapi: {
        method: "GET",
        path: "/api/v1/user/audit-log/export",
        tags: ["Audit log"],
        summary: "Your own account's audit log as CSV",
        description: EXPORT,
      },
    })
    .input(AuditLogInput)
    .output(z.string())
    .query(async ({ ctx, input }) =>
      auditLogCsv((await readLog(ctx.db, { userId: ctx.auth.userId }, input)).log),
    ),
});
