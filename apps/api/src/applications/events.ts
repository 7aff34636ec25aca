// What the applications area writes in the audit log, as FlowFuse logs it: `application.created`,
// `application.updated` (with what changed) and `application.deleted`, in the application's own
// log, the body naming the application.
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, ownEntry } from "../core/audit";

export function recordApplicationEvent(
  trx: Db,
  verb: "created" | "updated" | "deleted",
  actor: Actor,
  application: { id: string; name: string; team_id: string },
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(trx, ownEntry(`application.${verb}`, "application", application, actor, more));
}
