// The log of one thing (a device, an application, an instance) and its CSV twin: the same filters
// and paging as the team's log, over the entries `of` picks.
import { AuditLog, type AuditLogInput } from "@flowplane/contract";
import type { Permission } from "@flowplane/auth";
import type { AuditLogOf } from "@flowplane/db";
import { z } from "zod";
import { procedure } from "../core/trpc";
import { auditLogCsv, EXPORT, type LogReader, readLog } from "./read";

interface EntityLog<I extends z.ZodType<Record<string, unknown>>> {
  permission: Permission;
  /** The list's path; the export's is this + `/export`. */
  path: `/${string}`;
  tag: string;
  /** What the log is, e.g. "A device's audit log". */
  summary: string;
  description: string;
  input: I;
  /** The entries the input picks, and the filters left for every log. */
  of: (input: z.infer<I>) => { of: AuditLogOf; filters: AuditLogInput };
}

/** `list` and `export` procedures of one entity's log. */
export function entityAuditLog<I extends z.ZodType<Record<string, unknown>>>(log: EntityLog<I>) {
  const read = (ctx: LogReader, input: z.infer<I>) => {
    const { of, filters } = log.of(input);
    return readLog(ctx, of, filters);
  };
  return {
    list: procedure
      .meta({
        permission: log.permission,
        openapi: {
          method: "GET",
          path: log.path,
          tags: [log.tag],
          summary: log.summary,
          description: log.description,
        },
      })
      .input(log.input)
      .output(AuditLog)
      .query(({ ctx, input }) => read(ctx, input as z.infer<I>)),

    export: procedure
      .meta({
        permission: log.permission,
        contentType: "text/csv",
        openapi: {
          method: "GET",
          path: `${log.path}/export`,
          tags: [log.tag],
          summary: `${log.summary} as CSV`,
          description: EXPORT,
        },
      })
      .input(log.input)
      .output(z.string())
      .query(async ({ ctx, input }) => auditLogCsv((await read(ctx, input as z.infer<I>)).log)),
  };
}
