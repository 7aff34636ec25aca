// What the snapshots area writes in the audit log, as FlowFuse logs it, bodies with ids and names
// only: an instance's snapshots in the instance's log (`project.snapshot.*`, and
// `project.flow-imported`), a device's in its application's (`application.device.snapshot.*`),
// and one taken of an instance's device in the instance's (`project.device.snapshot.created`).
import { type Db, recordAudit, type SnapshotSummaryRow } from "@flowplane/db";
import { type Actor, ownEntry, ownLog } from "../core/audit";

interface Named {
  id: string;
  name: string;
}

/** An instance, or an application, whose log an entry goes in. */
interface Owner {
  id: string;
  name: string | null;
  team_id: string;
}

const named = (row: Named) => ({ id: row.id, name: row.name });

export type InstanceSnapshotEvent =
  | "project.snapshot.created"
  | "project.snapshot.imported"
  | "project.snapshot.rolled-back"
  | "project.snapshot.device-target-set"
  | "project.flow-imported";

/** An event in the instance's log, naming the snapshot (null: none), or no snapshot at all. */
export function recordInstanceSnapshotEvent(
  trx: Db,
  event: InstanceSnapshotEvent,
  actor: Actor,
  project: Owner,
  snapshot?: Named | null,
): Promise<void> {
  const more = snapshot === undefined ? {} : { snapshot: snapshot && named(snapshot) };
  return recordAudit(trx, ownEntry(event, "project", project, actor, more));
}

export type DeviceSnapshotEvent =
  | "project.device.snapshot.created"
  | "application.device.snapshot.created"
  | "application.device.snapshot.imported"
  | "application.device.snapshot.device-target-set";

/** A device's snapshot in its owner's log (the instance's or the application's), naming the device. */
export function recordDeviceSnapshotEvent(
  trx: Db,
  event: DeviceSnapshotEvent,
  actor: Actor,
  owner: Owner & { type: "project" | "application" },
  device: Named,
  snapshot: Named,
): Promise<void> {
  const more = { device: named(device), snapshot: named(snapshot) };
  return recordAudit(trx, ownEntry(event, owner.type, owner, actor, more));
}

type SnapshotOwned = Pick<
  SnapshotSummaryRow,
  "id" | "name" | "owner_type" | "project_id" | "project_name" | "application_id" | "team_id"
>;

/** A change to a snapshot by its id, in its owner's log under its owner's name for the event. */
function recordChange(
  trx: Db,
  row: SnapshotOwned,
  verb: "updated" | "deleted" | "exported",
  actor: Actor,
  body: Record<string, unknown>,
): Promise<void> {
  const event =
    row.owner_type === "instance"
      ? `project.snapshot.${verb}`
      : `application.device.snapshot.${verb}`;
  const log =
    row.project_id !== null
      ? ownLog("project", row.project_id, row.team_id)
      : ownLog("application", row.application_id, row.team_id);
  return recordAudit(trx, { event, ...log, actor, body });
}

/** A snapshot renamed or described anew: its name after, and what changed. */
export function recordSnapshotUpdated(
  trx: Db,
  actor: Actor,
  before: SnapshotOwned & { description: string },
  change: { name?: string; description?: string },
): Promise<void> {
  const { name, description } = change;
  return recordChange(trx, before, "updated", actor, {
    snapshot: { id: before.id, name: name ?? before.name },
    ...(name !== undefined && name !== before.name && { name: { old: before.name, new: name } }),
    ...(description !== undefined && description !== before.description && { description: true }),
  });
}

/** A snapshot deleted or exported, naming its instance when it has one. */
export function recordSnapshotEvent(
  trx: Db,
  verb: "deleted" | "exported",
  actor: Actor,
  row: SnapshotOwned,
): Promise<void> {
  return recordChange(trx, row, verb, actor, {
    ...(row.project_id !== null && { project: { id: row.project_id, name: row.project_name } }),
    snapshot: named(row),
  });
}
