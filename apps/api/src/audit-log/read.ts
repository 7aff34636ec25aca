// Reading a log, as every audit log does: a page of entries as the API shows them, its CSV, and
// the words every log's description shares.
import {
  AUDIT_LOG_COUNT_CAP,
  AUDIT_LOG_CSV_COLUMNS,
  type AuditLog,
  type AuditLogEntry,
  type AuditLogInput,
} from "@flowplane/contract";
import { actsAsAdmin, type Caller } from "@flowplane/auth";
import { type AuditLogOf, type AuditLogRow, type Db, listAuditLog } from "@flowplane/db";
import { stringify } from "csv-stringify/sync";

/** The trigger's name for what the platform did itself. */
const PLATFORM_NAME = "Flowplane Platform";

/**
 * An entry as the API shows it. The address the acting request came from (`trigger.ip`) is shown
 * to the platform's administrators only: a team's members read its log, and where each of them
 * sits is not theirs to see.
 */
export function auditLogEntryView(row: AuditLogRow, addresses = false): AuditLogEntry {
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
        : {
            id: row.actor_id,
            type: "user",
            name: row.username ?? "deleted user",
            ...(addresses && { ip: row.ip }),
          },
    body: row.body,
  };
}

/** Who reads: an administrator acting as one also sees each entry's address. */
export interface LogReader {
  db: Db;
  auth: Caller;
}

export async function readLog(
  { db, auth }: LogReader,
  of: AuditLogOf,
  input: AuditLogInput,
): Promise<AuditLog> {
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
    log: page.rows.map((row) => auditLogEntryView(row, actsAsAdmin(auth))),
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

export const PAGING =
  "Newest first, a page at a time: `meta.next_cursor` (present when there are older entries) is the `cursor` of the next page. " +
  `\`limit\` defaults to 100, at most 1000 (FlowFuse's default is 1000 with no maximum). \`count\` counts the matching entries only up to ${AUDIT_LOG_COUNT_CAP} (FlowFuse counts them all, which costs a scan of the whole log): ${AUDIT_LOG_COUNT_CAP} means at least that many. ` +
  "A page costs the same however long the log is; `query` (a text search) reads entries until the page is full, so a rare match in a long log is slower.";

export const EXPORT =
  "The same entries as the list with the same parameters (one page: the first column of the last row is the next page's `cursor`), as CSV: header `id,event,body,scope,trigger,createdAt`, CRLF line ends, each cell the JSON of the field.";
