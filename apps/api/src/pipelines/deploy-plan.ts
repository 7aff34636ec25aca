// A deploy's plan, checked in full before anything is made: the pipeline, the source and target
// stages, the source instance, exactly one target (an instance, a device group or a device) and
// the snapshot to send. A last stage, a stage without an instance, a missing snapshot are refused.
import {
  activeRolloutOfGroup,
  findPipeline,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  findStage,
  listSnapshots,
  type PipelineStageRow,
  type PipelineWithApplication,
  type ProjectDetail,
  type SnapshotRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import type { Context } from "../core/trpc";

export const deployError = (status: number, code: string, message: string, field?: string) =>
  new ApiError(status, code, message, field ? [{ path: field, message }] : undefined);
/** What a deploy needs, all of it checked before anything is made. */
export interface Plan {
  pipeline: PipelineWithApplication;
  source: PipelineStageRow;
  target: PipelineStageRow;
  sourceInstance: ProjectDetail;
  /** Exactly one: the instance, device group or device the snapshot goes to. */
  targetInstance?: ProjectDetail;
  targetGroup?: { id: string; name: string };
  targetDevice?: { id: string; name: string };
  /** The snapshot to send: named (`prompt`) or the newest; none: take one now. */
  snapshot?: SnapshotRow;
}

export async function plan(
  ctx: Context,
  input: { pipelineId: string; stageId: string; sourceSnapshotId?: string },
) {
  const pipeline = await findPipeline(ctx.db, input.pipelineId);
  if (!pipeline) throw notFound();
  const source = await findStage(ctx.db, pipeline.id, input.stageId);
  if (!source) throw notFound("Source stage not found");
  const target = source.next_stage_id
    ? await findStage(ctx.db, pipeline.id, source.next_stage_id)
    : undefined;
  // FlowFuse's answer for the last stage, before any snapshot is made.
  if (!target) throw notFound("Target stage not found");
  if (source.action === "none") return { none: true as const };
  const sourceInstance = source.instance_id
    ? await findProject(ctx.db, source.instance_id)
    : undefined;
  if (!sourceInstance) {
    throw deployError(400, "invalid_source_instance", "The source stage has no instance");
  }
  const targetInstance = target.instance_id
    ? await findProject(ctx.db, target.instance_id)
    : undefined;
  const targetGroup = target.device_group_id
    ? await ctx.db
        .selectFrom("device_groups")
        .select(["id", "name"])
        .where("id", "=", target.device_group_id)
        .executeTakeFirst()
    : undefined;
  const targetDevice = target.device_id
    ? await ctx.db
        .selectFrom("devices")
        .select(["id", "name"])
        .where("id", "=", target.device_id)
        .executeTakeFirst()
    : undefined;
  // A rollout to the target group decides its target until it ends: refused now, not later.
  if (targetGroup && (await activeRolloutOfGroup(ctx.db, targetGroup.id))) {
    throw deployError(
      409,
      "rollout_in_progress",
      "A rollout to the target device group is under way: wait for it to end, or abort it",
    );
  }
  if (!targetInstance && !targetGroup && !targetDevice) {
    throw deployError(
      400,
      "invalid_target_stage",
      "The target stage has no instance, device group or device",
    );
  }
  let snapshot: SnapshotRow | undefined;
  if (source.action === "prompt" && input.sourceSnapshotId === undefined) {
    throw deployError(
      400,
      "invalid_source_snapshot",
      "The stage's action is prompt: name the snapshot to deploy",
      "sourceSnapshotId",
    );
  }
  if (input.sourceSnapshotId !== undefined) {
    // Named: that snapshot goes, whatever the action (FlowFuse reads it for `prompt` only).
    const summary = await findSnapshotSummary(ctx.db, input.sourceSnapshotId);
    if (!summary || summary.project_id !== sourceInstance.id) {
      throw deployError(
        400,
        "invalid_source_snapshot",
        "Not a snapshot of the source stage's instance",
        "sourceSnapshotId",
      );
    }
    snapshot = await findSnapshot(ctx.db, summary.id);
  } else if (source.action === "use_latest_snapshot") {
    const newest = await listSnapshots(ctx.db, { projectId: sourceInstance.id }, { limit: 1 });
    const latest = newest.rows[0];
    if (!latest) {
      throw deployError(
        400,
        "invalid_source_snapshot",
        "The source stage's instance has no snapshot to deploy",
      );
    }
    snapshot = await findSnapshot(ctx.db, latest.id);
  } else if (source.action !== "create_snapshot") {
    throw deployError(400, "invalid_source_action", `A stage cannot deploy with ${source.action}`);
  }
  return {
    none: false as const,
    plan: {
      pipeline,
      source,
      target,
      sourceInstance,
      targetInstance,
      targetGroup,
      targetDevice,
      snapshot,
    },
  };
}
