// What the snapshot procedures share: finding an instance or a snapshot (another team's is as
// missing as an unknown one), storing a new snapshot of an instance, and deleting one.
import {
  type Db,
  deleteSnapshot,
  findProject,
  findSnapshotSummary,
  insertSnapshot,
  newId,
  type ProjectDetail,
  type SnapshotSummaryRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context } from "../core/trpc";
import { sealSecrets, type SnapshotContent } from "./content";
import { recordInstanceSnapshotEvent, recordSnapshotEvent } from "./events";

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
  const event = `project.snapshot.${meta.event}` as const;
  await recordInstanceSnapshotEvent(db, event, actorOf(ctx), project, { id, name: row.name });
  return row;
}

/** A snapshot named in a body that is not the one it must be: 400 naming the field. */
export const invalidSnapshot = (field: string, message: string) =>
  new ApiError(400, "invalid_snapshot", message, [{ path: field, message }]);

/** Deletes a snapshot and records it in its owner's log. */
export async function remove(ctx: Context, row: SnapshotSummaryRow) {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteSnapshot(trx, row.id))) throw notFound();
    await recordSnapshotEvent(trx, "deleted", actorOf(ctx), row);
  });
}
