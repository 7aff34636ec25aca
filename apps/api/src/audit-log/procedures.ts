// The audit log to read: a team's (owners), the platform's (administrators) and the caller's own,
// each as JSON a page at a time and as a CSV export of the same page.
import { AuditLog, AuditLogInput, TeamAuditLogInput } from "@flowplane/contract";
import type { AuditLogOf } from "@flowplane/db";
import { z } from "zod";
import { procedure, router } from "../core/trpc";
import { ownedAuditLogProcedures } from "./owned";
import { auditLogCsv, EXPORT, PAGING, readLog } from "./read";

const teamLog = (input: TeamAuditLogInput): AuditLogOf => ({
  teamId: input.teamId,
  entityType: input.scope,
});
const teamFilters = ({ teamId: _, scope: __, ...filters }: TeamAuditLogInput): AuditLogInput =>
  filters;

const TEAM_DESCRIPTION = `The team's entries. ${PAGING} \`scope\` narrows the log to entries about the team itself (\`team\`) or about its applications (\`application\`), instances (\`project\`) or devices (\`device\`). FlowFuse's \`associations\` and \`includeChildren\` are not given.`;
const PLATFORM_DESCRIPTION = `Platform and account events (sign-ins, users created, changed and deleted, tokens, passwords), as FlowFuse's platform log. ${PAGING}`;
const USER_DESCRIPTION = `The caller's own account events: entries about their account (sign-ins, tokens, password and profile changes, made by them or by an administrator) and changes they made to other accounts. Beyond FlowFuse, which shows these only to administrators. ${PAGING}`;

export const auditLogRouter = router({
  ...ownedAuditLogProcedures,
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
    .query(({ ctx, input }) => readLog(ctx, teamLog(input), teamFilters(input))),

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
      auditLogCsv((await readLog(ctx, teamLog(input), teamFilters(input))).log),
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
    .query(({ ctx, input }) => readLog(ctx, { platform: true }, input)),

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
      auditLogCsv((await readLog(ctx, { platform: true }, input)).log),
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
    .query(({ ctx, input }) => readLog(ctx, { userId: ctx.auth.userId }, input)),

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
      auditLogCsv((await readLog(ctx, { userId: ctx.auth.userId }, input)).log),
    ),
});
