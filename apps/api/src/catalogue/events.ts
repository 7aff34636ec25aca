// What the catalogue area writes in the audit log: `platform.<kind>.created|updated|deleted`
// (`platform.project-type.created`…) in the platform's log, naming the entry under the kind's key
// (`projectType`) with what else the change says.
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, platformLog } from "../core/audit";
import type { CatalogueKind, Entry, KindSchemas } from "./kind";

export function recordCatalogueEvent(
  trx: Db,
  actor: Actor,
  kind: Pick<CatalogueKind<Entry, Entry, KindSchemas>, "name" | "auditKey">,
  verb: "created" | "updated" | "deleted",
  entry: { id: string; name: string },
  more: Record<string, unknown> = {},
): Promise<void> {
  const body = { [kind.auditKey]: { id: entry.id, name: entry.name }, ...more };
  return recordAudit(trx, { event: `platform.${kind.name}.${verb}`, ...platformLog, actor, body });
}
