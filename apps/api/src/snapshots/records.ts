// What the snapshot procedures share: finding an instance or a snapshot (another team's is as
// missing as an unknown one), storing a new snapshot of an instance, deleting one, and the audit
// event and entity of a change to a snapshot, by its owner.
import {
  type Db,
  deleteSnapshot,
  findProject,
  findSnapshotSummary,
  insertSnapshot,
  newId,
  type ProjectDetail,
  recordAudit,
  type SnapshotSummaryRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context } from "../core/trpc";
import { sealSecrets, type SnapshotContent } from "./content";

export const TAG = "Snapshots";

export async function projectOf(
  ctx: Pick<Context, "db">,
  instanceId: string,
): Promise<ProjectDetail> {
  const project = await findProject(ctx.db, instanceId);
  if (!project) throw notFound();
  return project;
}

/** The snapshot, when it is the instance's (another's is as missing as an unknown one). */
export async function instanceSnapshotOf(
  ctx: Pick<Context, "db">,
  instanceId: string,
  snapshotId: string,
): Promise<SnapshotSummaryRow> {
  const row = await findSnapshotSummary(ctx.db, snapshotId);
  if (!row || row.project_id !== instanceId) throw notFound();
  return row;
}

export async function snapshotOf(ctx: Pick<Context, "db">, snapshotId: string) {
  const row = await findSnapshotSummary(ctx.db, snapshotId);
  if (!row) throw notFound();
  return row;
}

/** The audit event of a change to a snapshot, by its owner (FlowFuse's names). */
export function snapshotEvent(
  row: Pick<SnapshotSummaryRow, "owner_type">,
  action: "created" | "updated" | "deleted" | "exported" | "imported",
): string {
  return row.owner_type === "instance"
    ? `project.snapshot.${action}`
    : `application.device.snapshot.${action}`;
}

/** Where a snapshot's audit entry goes: its instance's log (devices: their own area). */
export function snapshotAuditEntity(
  row: Pick<SnapshotSummaryRow, "project_id" | "application_id">,
) {
  return row.project_id !== null
    ? { type: "project" as const, id: row.project_id }
    : { type: "application" as const, id: row.application_id };
}

/** Stores a new snapshot of an instance: its content with its secrets sealed, and the audit entry. */
export async function storeInstanceSnapshot(
  ctx: Pick<Context, "db" | "tokenSecret" | "auth">,
  db: Db,
  project: ProjectDetail,
  content: SnapshotContent,
  meta: { name: string; description?: string; event: "created" | "imported" },
) {
  const id = newId();
  const row = await insertSnapshot(db, {
    id,
    teamId: project.team_id,
    applicationId: project.application_id,
    owner: { type: "instance", projectId: project.id },
    name: meta.name,
    description: meta.description ?? "",
    userId: ctx.auth.userId,
    flows: content.flows,
    settings: content.settings,
    secrets: sealSecrets(ctx.tokenSecret, id, content.secrets),
  });
  await recordAudit(db, {
    event: `project.snapshot.${meta.event}`,
    entity: { type: "project", id: project.id },
    teamId: project.team_id,
    actor: actorOf(ctx),
    body: { project: { id: project.id, name: project.name }, snapshot: { id, name: row.name } },
  });
  return row;
}

/** A snapshot named in a body that is not the one it must be: 400 naming the field. */
export const invalidSnapshot = (field: string, message: string) =>
  new ApiError(400, "invalid_snapshot", message, [{ path: field, message }]);

/** Deletes a snapshot and records it in its owner's log. */
export async function remove(ctx: Context, row: SnapshotSummaryRow) {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteSnapshot(trx, row.id))) throw notFound();
    await recordAudit(trx, {
      event: snapshotEvent(row, "deleted"),
      entity: snapshotAuditEntity(row),
      teamId: row.team_id,
      actor: actorOf(ctx),
      body: {
        ...(row.project_id !== null && { project: { id: row.project_id, name: row.project_name } }),
        snapshot: { id: row.id, name: row.name },
      },
    });
  });
}
