// What the platform area writes in the audit log: an administrator's change of the settings, in
// the platform's log.
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, platformLog } from "../core/audit";

/** The settings changed: each as `{ key, old, new }`. */
export function recordSettingsUpdated(trx: Db, actor: Actor, updates: unknown[]): Promise<void> {
  const body = { updates };
  return recordAudit(trx, { event: "platform.settings.updated", ...platformLog, actor, body });
}
