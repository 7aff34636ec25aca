// The one place that writes the audit log. Callers pass the transaction of the change, so an entry
// exists exactly when its change does.
import type { Insertable, Kysely } from "kysely";
import { newId } from "../ids";
import type { Database } from "../schema";
import type { AuditLogTable } from "../schema-accounts";

export interface AuditEntry {
  event: string;
  entity: {
    type: "platform" | "user" | "team" | "application" | "project" | "device";
    id: string | null;
  };
  teamId?: string | null;
  /**
   * Who acted: a user with the token they used (null: a signed-in session) and the address the
   * request came from, or the platform.
   */
  actor: { userId: string; tokenId: string | null; ip?: string } | "system";
  /** Never a secret: names and ids of what changed, before and after. */
  body?: Record<string, unknown>;
}

/** The row an entry is stored as. */
export function auditRow(entry: AuditEntry): Insertable<AuditLogTable> {
  const actor = entry.actor === "system" ? null : entry.actor;
  return {
    id: newId(),
    event: entry.event,
    entity_type: entry.entity.type,
    entity_id: entry.entity.id,
    team_id: entry.teamId ?? null,
    actor_id: actor?.userId ?? null,
    source: actor ? (actor.tokenId ? "api" : null) : "system",
    token_id: actor?.tokenId ?? null,
    body: JSON.stringify(entry.body ?? {}),
    ip: actor?.ip ?? null,
  };
}

export async function recordAudit(trx: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await trx.insertInto("audit_log").values(auditRow(entry)).execute();
  auditWritten(entry);
}

type AuditListener = (entry: AuditEntry) => void;
const listeners = new Set<AuditListener>();

/**
 * Hears every entry as it is written, in its change's transaction (an entry is the last statement
 * of its change, so one whose transaction then fails to commit is rare, and heard all the same).
 * The platform's entry point logs each: what people did, a line each. Returns the unsubscribe.
 */
export function onAuditWritten(listener: AuditListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells the listeners of an entry a writer (recordAudit or a statement of its own) wrote. */
export function auditWritten(entry: AuditEntry): void {
  for (const listener of listeners) listener(entry);
}

/** What a test reads of the log: every entry (of one event), oldest first. */
export async function auditEntries(db: Kysely<Database>, filter: { event?: string } = {}) {
  let query = db.selectFrom("audit_log").selectAll().orderBy("created_at").orderBy("id");
  if (filter.event) query = query.where("event", "=", filter.event);
  const entries = await query.execute();
  // Bodies are free-form JSON, read field by field (`body.user?.id`).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return entries as (Omit<(typeof entries)[number], "body"> & { body: Record<string, any> })[];
}
