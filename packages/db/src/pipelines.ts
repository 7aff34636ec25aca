// Delivery pipelines: an application's pipelines and their stages, kept as a singly linked list
// (each stage names the next; `next_stage_id` is unique, so no two stages point at one), and the
// operations a deploy runs as. Every change to a pipeline's stages locks the pipeline's row first,
// so concurrent edits cannot break the list.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, OperationRow, PipelineRow, PipelineStageRow } from "./schema";
import type { StageActionValue } from "./schema-instances";
import { countWhere, findWhere, teamOfRow } from "./rows";

export const teamOfPipeline = teamOfRow("pipelines");

export const teamOfOperation = teamOfRow("operations");

export interface PipelineWithApplication extends PipelineRow {
  application_name: string;
}

function pipelinesQuery(db: Kysely<Database>) {
  return db
    .selectFrom("pipelines as p")
    .innerJoin("applications as a", "a.id", "p.application_id")
    .selectAll("p")
    .select("a.name as application_name");
}

export async function findPipeline(
  db: Kysely<Database>,
  id: string,
): Promise<PipelineWithApplication | undefined> {
  return pipelinesQuery(db).where("p.id", "=", id).executeTakeFirst();
}

/** The pipelines of an application or of a team, by name. */
export async function listPipelines(
  db: Kysely<Database>,
  filter: { applicationId: string } | { teamId: string },
): Promise<PipelineWithApplication[]> {
  let query = pipelinesQuery(db).orderBy("p.name").orderBy("p.id");
  query =
    "applicationId" in filter
      ? query.where("p.application_id", "=", filter.applicationId)
      : query.where("p.team_id", "=", filter.teamId);
  return query.execute();
}

export async function insertPipeline(
  db: Kysely<Database>,
  values: { teamId: string; applicationId: string; name: string },
): Promise<PipelineRow> {
  return db
    .insertInto("pipelines")
    .values({
      id: newId(),
      team_id: values.teamId,
      application_id: values.applicationId,
      name: values.name,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function renamePipeline(db: Kysely<Database>, id: string, name: string) {
  await db
    .updateTable("pipelines")
    .set({ name, updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .execute();
}

/** Deletes a pipeline and its stages (cascade). */
export async function deletePipeline(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom("pipelines").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Locks the pipeline's row for a change to its stages; false when it is gone. */
export async function lockPipeline(trx: Kysely<Database>, id: string): Promise<boolean> {
  const row = await trx
    .selectFrom("pipelines")
    .select("id")
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The stages of these pipelines, each pipeline's in order: from the stage no other names, along
 * `next_stage_id`.
 */
export async function listStages(
  db: Kysely<Database>,
  pipelineIds: readonly string[],
): Promise<Map<string, PipelineStageRow[]>> {
  const byPipeline = new Map<string, PipelineStageRow[]>(pipelineIds.map((id) => [id, []]));
  if (pipelineIds.length === 0) return byPipeline;
  const rows = await db
    .selectFrom("pipeline_stages")
    .selectAll()
    .where("pipeline_id", "in", pipelineIds)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  for (const id of pipelineIds) {
    byPipeline.set(id, inOrder(rows.filter((row) => row.pipeline_id === id)));
  }
  return byPipeline;
}

/** Stages in list order; any not reachable from the head (never, while edits lock) at the end. */
function inOrder(rows: PipelineStageRow[]): PipelineStageRow[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const named = new Set(rows.map((row) => row.next_stage_id).filter((id) => id !== null));
  const ordered: PipelineStageRow[] = [];
  let current = rows.find((row) => !named.has(row.id));
  while (current && !ordered.includes(current)) {
    ordered.push(current);
    current = current.next_stage_id ? byId.get(current.next_stage_id) : undefined;
  }
  return [...ordered, ...rows.filter((row) => !ordered.includes(row))];
}

export async function findStage(
  db: Kysely<Database>,
  pipelineId: string,
  stageId: string,
): Promise<PipelineStageRow | undefined> {
  return findWhere(db, "pipeline_stages", { id: stageId, pipeline_id: pipelineId });
}

export async function countStages(db: Kysely<Database>, pipelineId: string): Promise<number> {
  return countWhere(db, "pipeline_stages", "pipeline_id", pipelineId);
}

/**
 * The stage of this pipeline, other than `exceptStageId`, whose target is this instance, device
 * group or device (FlowFuse offers each target to one stage of a pipeline only).
 */
export async function stageWithTarget(
  db: Kysely<Database>,
  pipelineId: string,
  target: { instanceId: string | null; deviceGroupId: string | null; deviceId: string | null },
  exceptStageId?: string,
): Promise<PipelineStageRow | undefined> {
  let query = db.selectFrom("pipeline_stages").selectAll().where("pipeline_id", "=", pipelineId);
  if (target.instanceId !== null) query = query.where("instance_id", "=", target.instanceId);
  else if (target.deviceGroupId !== null) {
    query = query.where("device_group_id", "=", target.deviceGroupId);
  } else if (target.deviceId !== null) query = query.where("device_id", "=", target.deviceId);
  else return undefined;
  if (exceptStageId !== undefined) query = query.where("id", "<>", exceptStageId);
  return query.limit(1).executeTakeFirst();
}

export interface StageValues {
  name: string;
  action: StageActionValue;
  deployToDevices: boolean;
  instanceId: string | null;
  deviceGroupId: string | null;
  deviceId: string | null;
  /** The team's hook told of each deploy into the stage (null: none). */
  webhookId?: string | null;
}

/**
 * Adds a stage after `after` (its old next stage now follows the new one), or as the first of an
 * empty pipeline. Call in a transaction that locked the pipeline.
 */
export async function insertStage(
  trx: Kysely<Database>,
  pipelineId: string,
  values: StageValues,
  after: PipelineStageRow | undefined,
): Promise<PipelineStageRow> {
  const id = newId();
  if (after) {
    await trx
      .updateTable("pipeline_stages")
      .set({ next_stage_id: null })
      .where("id", "=", after.id)
      .execute();
  }
  const row = await trx
    .insertInto("pipeline_stages")
    .values({
      id,
      pipeline_id: pipelineId,
      name: values.name,
      action: values.action,
      deploy_to_devices: values.deployToDevices,
      instance_id: values.instanceId,
      device_group_id: values.deviceGroupId,
      device_id: values.deviceId,
      webhook_id: values.webhookId ?? null,
      next_stage_id: after?.next_stage_id ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (after) {
    await trx
      .updateTable("pipeline_stages")
      .set({ next_stage_id: id })
      .where("id", "=", after.id)
      .execute();
  }
  return row;
}

export async function updateStage(
  db: Kysely<Database>,
  stageId: string,
  values: Partial<StageValues>,
): Promise<PipelineStageRow> {
  return db
    .updateTable("pipeline_stages")
    .set({
      ...(values.name !== undefined && { name: values.name }),
      ...(values.action !== undefined && { action: values.action }),
      ...(values.deployToDevices !== undefined && { deploy_to_devices: values.deployToDevices }),
      ...(values.instanceId !== undefined && { instance_id: values.instanceId }),
      ...(values.deviceGroupId !== undefined && { device_group_id: values.deviceGroupId }),
      ...(values.deviceId !== undefined && { device_id: values.deviceId }),
      ...(values.webhookId !== undefined && { webhook_id: values.webhookId }),
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", stageId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Deletes a stage; the stage before it then leads to the one after (A → B → C becomes A → C).
 * Call in a transaction that locked the pipeline.
 */
export async function deleteStage(trx: Kysely<Database>, stage: PipelineStageRow): Promise<void> {
  const previous = await trx
    .selectFrom("pipeline_stages")
    .select("id")
    .where("next_stage_id", "=", stage.id)
    .executeTakeFirst();
  // The foreign key clears the previous stage's link; then it takes the deleted one's next.
  await trx.deleteFrom("pipeline_stages").where("id", "=", stage.id).execute();
  if (previous && stage.next_stage_id) {
    await trx
      .updateTable("pipeline_stages")
      .set({ next_stage_id: stage.next_stage_id })
      .where("id", "=", previous.id)
      .execute();
  }
}

// ---- Operations ----

export async function insertOperation(
  db: Kysely<Database>,
  values: {
    teamId: string;
    kind: string;
    subject: Record<string, unknown>;
    userId: string | null;
    /** At most one pending operation names a target: another is a unique violation. */
    target?: string;
  },
): Promise<OperationRow> {
  return db
    .insertInto("operations")
    .values({
      id: newId(),
      team_id: values.teamId,
      kind: values.kind,
      subject: JSON.stringify(values.subject),
      user_id: values.userId,
      target: values.target ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findOperation(
  db: Kysely<Database>,
  id: string,
): Promise<OperationRow | undefined> {
  return db.selectFrom("operations").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Adds to what the operation is about (e.g. the snapshot, once taken). */
export async function noteOperation(
  db: Kysely<Database>,
  id: string,
  subject: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable("operations")
    .set({
      subject: sql`subject || ${JSON.stringify(subject)}::jsonb`,
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .execute();
}

type OperationOutcome =
  { status: "succeeded" } | { status: "failed"; code: string; message: string };

/** What an operation's row says once it has ended: how, the error if it failed, and when. */
function ended(outcome: OperationOutcome) {
  return {
    status: outcome.status,
    error_code: outcome.status === "failed" ? outcome.code : null,
    error_message: outcome.status === "failed" ? outcome.message : null,
    updated_at: sql<Date>`now()`,
    finished_at: sql<Date>`now()`,
  };
}

/** An update of the operations still pending: one that has ended never changes again. */
const updatePending = (db: Kysely<Database>) =>
  db.updateTable("operations").where("status", "=", "pending");

/** Ends a pending operation: the row it ended, none if it had ended already (failed by a sweep). */
export async function finishOperation(
  db: Kysely<Database>,
  id: string,
  outcome: OperationOutcome,
): Promise<OperationRow | undefined> {
  return updatePending(db)
    .set(ended(outcome))
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** The pending operation that names this target, if any. */
export async function pendingOperationFor(
  db: Kysely<Database>,
  target: string,
): Promise<OperationRow | undefined> {
  return findWhere(db, "operations", { target, status: "pending" });
}

/** The running process's heartbeat on the operations it runs. */
export async function touchOperations(db: Kysely<Database>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await updatePending(db)
    .set({ updated_at: sql<Date>`now()` })
    .where("id", "in", ids)
    .execute();
}

/**
 * Fails the operations still pending whose heartbeat stopped `staleSeconds` ago: the process that
 * ran them is gone. Returns them, failed.
 */
export async function failAbandonedOperations(
  db: Kysely<Database>,
  staleSeconds: number,
  error: { code: string; message: string },
): Promise<OperationRow[]> {
  return updatePending(db)
    .set(ended({ status: "failed", ...error }))
    .where("updated_at", "<", sql<Date>`now() - make_interval(secs => ${staleSeconds})`)
    .returningAll()
    .execute();
}
