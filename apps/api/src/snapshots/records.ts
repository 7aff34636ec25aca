// What the snapshot procedures share: finding an instance or a snapshot (another team's is as
// missing as an unknown one), listing an owner's, storing a new one (of an instance, or any
// owner's content), setting the snapshot an instance's devices run, deleting one, and the audit
// event and entity of a change to a snapshot, by its owner.
import { sealSnapshotSecrets } from "@flowplane/auth";
import {
  type Db,
  deleteSnapshot,
  findProject,
  findSnapshotSummary,
  insertSnapshot,
  listSnapshots,
  type NewSnapshot,
  newId,
  type ProjectDetail,
  setProjectDeviceTarget,
  type SnapshotOwnerFilter,
  type SnapshotRow,
  type SnapshotSummaryRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context } from "../core/trpc";
import type { SnapshotContent } from "./content";
import { recordInstanceSnapshotEvent, recordSnapshotEvent } from "./events";
import { snapshotView } from "./views";

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

/** A page of an owner's snapshots, newest first, as the API lists them. */
export async function snapshotPage(
  ctx: Pick<Context, "db" | "baseUrl">,
  owner: SnapshotOwnerFilter,
  page: { limit: number; cursor?: string },
) {
  const found = await listSnapshots(ctx.db, owner, page);
  return {
    meta: { ...(found.nextCursor && { next_cursor: found.nextCursor }) },
    count: found.total,
    snapshots: found.rows.map((row) => snapshotView(row, ctx.baseUrl)),
  };
}

/** Inserts a snapshot of this content for its owner, its secrets sealed under its own key. */
export async function insertContent(
  ctx: Pick<Context, "tokenSecret" | "auth">,
  db: Db,
  owner: Pick<NewSnapshot, "teamId" | "applicationId" | "owner">,
  content: SnapshotContent,
  meta: { name: string; description?: string },
): Promise<SnapshotRow> {
  const id = newId();
  return insertSnapshot(db, {
    id,
    ...owner,
    name: meta.name,
    description: meta.description ?? "",
    userId: ctx.auth.userId,
    flows: content.flows,
    settings: content.settings,
    secrets: sealSnapshotSecrets(ctx.tokenSecret, id, content.secrets),
  });
}

/** Stores a new snapshot of an instance: its content with its secrets sealed, and the audit entry. */
export async function storeInstanceSnapshot(
  ctx: Pick<Context, "db" | "tokenSecret" | "auth">,
  db: Db,
  project: ProjectDetail,
  content: SnapshotContent,
  meta: { name: string; description?: string; event: "created" | "imported" },
) {
  const row = await insertContent(
    ctx,
    db,
    {
      teamId: project.team_id,
      applicationId: project.application_id,
      owner: { type: "instance", projectId: project.id },
    },
    content,
    meta,
  );
  const event = `project.snapshot.${meta.event}` as const;
  await recordInstanceSnapshotEvent(db, event, actorOf(ctx), project, row);
  return row;
}

/**
 * Takes a snapshot in one transaction: `store` stores it and, with `setAsTarget`, `target` makes
 * it what the devices it is for run. Answers it as the API shows it.
 */
export async function takeSnapshot(
  ctx: Pick<Context, "db" | "baseUrl">,
  setAsTarget: boolean | undefined,
  store: (trx: Db) => Promise<SnapshotRow>,
  target: (trx: Db, stored: SnapshotRow) => Promise<void>,
) {
  const row = await ctx.db.transaction().execute(async (trx) => {
    const stored = await store(trx);
    if (setAsTarget) await target(trx, stored);
    return stored;
  });
  return snapshotView((await findSnapshotSummary(ctx.db, row.id))!, ctx.baseUrl);
}

/** Makes a snapshot (or none) what an instance's devices run, with the audit entry. */
export async function setInstanceDeviceTarget(
  ctx: Pick<Context, "auth">,
  trx: Db,
  project: Pick<ProjectDetail, "id" | "name" | "team_id">,
  snapshot: Pick<SnapshotRow, "id" | "name"> | null,
) {
  await setProjectDeviceTarget(trx, project.id, snapshot?.id ?? null);
  await recordInstanceDeviceTarget(ctx, trx, project, snapshot);
}

/** The audit entry of a new snapshot (or none) for an instance's devices to run. */
export async function recordInstanceDeviceTarget(
  ctx: Pick<Context, "auth">,
  trx: Db,
  project: Pick<ProjectDetail, "id" | "name" | "team_id">,
  snapshot: Pick<SnapshotRow, "id" | "name"> | null,
) {
  const event = "project.snapshot.device-target-set";
  await recordInstanceSnapshotEvent(trx, event, actorOf(ctx), project, snapshot);
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
