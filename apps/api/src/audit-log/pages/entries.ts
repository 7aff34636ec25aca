// A team's audit log entries as its page and its CSV download show them: when, what, who, the
// resource the entry is about (its type, and its name where the entry's body names it) and the
// rest of the body. The CSV's cells are guarded against formula injection (OWASP's advice).
import type { AuditLogEntry } from "@flowplane/contract";
import { stringify } from "csv-stringify/sync";

/** The key of an entry's body that names what its scope is (`project` for an instance). */
const NAMED_BY: Record<string, string> = {
  team: "team",
  application: "application",
  project: "project",
  device: "device",
};

const KINDS: Record<string, string> = { project: "instance" };

export interface EntryRow {
  id: string;
  createdAt: string;
  event: string;
  who: string;
  resource: { kind: string; id: string | null; name?: string };
  details: string;
}

export function entryRow(entry: AuditLogEntry): EntryRow {
  const { type, id } = entry.scope;
  const named = entry.body[NAMED_BY[type] ?? ""] as { name?: unknown } | undefined;
  return {
    id: entry.id,
    createdAt: entry.createdAt,
    event: entry.event,
    who: entry.trigger.name,
    resource: {
      kind: KINDS[type] ?? type,
      id,
      ...(typeof named?.name === "string" && { name: named.name }),
    },
    details: Object.keys(entry.body).length === 0 ? "" : JSON.stringify(entry.body, null, 2),
  };
}

/**
 * A cell a spreadsheet would read as a formula (=, +, -, @, or a tab or carriage return first)
 * is prefixed with a single quote, which makes it text.
 */
export function guardCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

const COLUMNS = ["time", "event", "user", "resource", "resource id", "resource name", "details"];

/** The rows as CSV (RFC 4180: quoted where needed, CRLF line ends), with a header line. */
export function entriesCsv(rows: readonly EntryRow[]): string {
  return stringify(
    rows.map((row) =>
      [
        row.createdAt,
        row.event,
        row.who,
        row.resource.kind,
        row.resource.id ?? "",
        row.resource.name ?? "",
        row.details === "" ? "" : JSON.stringify(JSON.parse(row.details)),
      ].map(guardCell),
    ),
    { header: true, columns: COLUMNS, record_delimiter: "windows" },
  );
}
