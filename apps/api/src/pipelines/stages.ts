// A pipeline's stages (FlowFuse's `forge/ee/routes/pipeline`): a linked list of stages, each with
// one target (an instance, a device group or a device: targets.ts),
// each with the action a deploy takes on it. Owners add, edit and delete them; viewers and up read
// them. Every change is audited, edits and deletions too (FlowFuse leaves those unaudited).
import {
  CreatePipelineStageInput,
  PipelineStage,
  PipelineStageIdInput,
  Status,
  UpdatePipelineStageInput,
} from "@flowplane/contract";
import {
  countStages,
  deleteStage,
  findStage,
  findWebhook,
  insertStage,
  lockPipeline,
  type PipelineStageRow,
  updateStage,
} from "@flowplane/db";
import { ApiError, invalidRequest, notFound } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import { stageView } from "./views";
import { recordAssignedToStage, recordPipelineEvent } from "./events";
import { TAG, pipelineOf } from "./procedures";
import { checkAction, checkTargetFree, kindOfStage, targetOf } from "./targets";

async function stageOf(ctx: Pick<Context, "db">, pipelineId: string, stageId: string) {
  const stage = await findStage(ctx.db, pipelineId, stageId);
  if (!stage) throw notFound();
  return stage;
}

/** The hook a stage names: the pipeline's team's (else 400 naming `webhookId`); null clears it. */
async function checkWebhook(
  ctx: Pick<Context, "db">,
  teamId: string,
  webhookId: string | null | undefined,
): Promise<void> {
  if (!webhookId || (await findWebhook(ctx.db, teamId, webhookId))) return;
  throw invalidRequest("Invalid request: webhookId: not a webhook of this team", [
    { path: "webhookId", message: "Not a webhook of the pipeline's team" },
  ]);
}

/** The stage an entry is about: FlowFuse's `pipelineStage` (`id`, `name`), and what it does. */
const stageBody = (stage: PipelineStageRow) => ({
  pipelineStage: {
    id: stage.id,
    name: stage.name,
    action: stage.action,
    instanceId: stage.instance_id,
    deviceGroupId: stage.device_group_id,
    deviceId: stage.device_id,
    webhookId: stage.webhook_id,
  },
});

/** The procedures of a pipeline's stages (index.ts puts them in one router with the rest). */
export const stageProcedures = {
  stage: procedure
    .meta({
      permission: "pipeline:read",
      openapi: {
        method: "GET",
        path: "/api/v1/pipelines/{pipelineId}/stages/{stageId}",
        tags: [TAG],
        summary: "A stage of a pipeline (viewers and up)",
        description: "FlowFuse has this route but leaves it out of its document.",
      },
    })
    .input(PipelineStageIdInput)
    .output(PipelineStage)
    .query(async ({ ctx, input }) => {
      await pipelineOf(ctx, input.pipelineId);
      return stageView(await stageOf(ctx, input.pipelineId, input.stageId), ctx);
    }),

  addStage: procedure
    .meta({
      create: "replay",
      permission: "pipeline:edit",
      openapi: {
        method: "POST",
        path: "/api/v1/pipelines/{pipelineId}/stages",
        tags: [TAG],
        summary: "Add a stage (owners)",
        description:
          "The stage deploys to exactly one of `instanceId` (a hosted instance), `deviceGroupId` (a device group: its target snapshot) or `deviceId` (a device: its target snapshot), of the pipeline's application (else 400 naming the field); answered as `instances`, `deviceGroups`, `devices`. A device group stage is never first (400 `invalid_input`). An instance, device group or device another stage of the pipeline has is 400 `invalid_input` naming the field (FlowFuse's editor offers each to one stage). `source` is the stage it follows: linked in after it, before the stage that followed it. Without `source`, only the first stage of an empty pipeline (else 400 `invalid_input`: FlowFuse then leaves a stage no other leads to). `action` defaults to `create_snapshot` (device stages: `use_active_snapshot`); `use_active_snapshot` is for device stages and `create_snapshot` for instance and group stages (400 `invalid_input` naming `action`). `webhookId` names a webhook of the pipeline's team (else 400 naming the field) told the outcome of each deploy into the stage. Audit events `application.pipeline.stage-added` and, on an instance, `project.assigned-to-pipeline-stage`.",
      },
    })
    .input(CreatePipelineStageInput)
    .output(PipelineStage)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelineOf(ctx, input.pipelineId);
      const target = (await targetOf(ctx.db, pipeline, input, true))!;
      const action =
        input.action ?? (target.kind === "device" ? "use_active_snapshot" : "create_snapshot");
      checkAction(action, target.kind);
      await checkWebhook(ctx, pipeline.team_id, input.webhookId);
      if (target.kind === "deviceGroup" && input.source === undefined) {
        // FlowFuse's rule: a device group stage only receives, so it cannot be first.
        throw new ApiError(400, "invalid_input", "A device group stage cannot be the first", [
          { path: "deviceGroupId", message: "A device group stage follows another stage" },
        ]);
      }
      const instance = target.instance;
      const stage = await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockPipeline(trx, pipeline.id))) throw notFound();
        await checkTargetFree(trx, pipeline.id, target);
        let after: PipelineStageRow | undefined;
        if (input.source !== undefined) {
          after = await findStage(trx, pipeline.id, input.source);
          if (!after) {
            throw invalidRequest("Invalid request: source: not a stage of this pipeline", [
              { path: "source", message: "Not a stage of this pipeline" },
            ]);
          }
        } else if ((await countStages(trx, pipeline.id)) > 0) {
          throw new ApiError(
            400,
            "invalid_input",
            "The pipeline has stages: give `source`, the stage the new one follows",
            [{ path: "source", message: "Required once the pipeline has a stage" }],
          );
        }
        const created = await insertStage(
          trx,
          pipeline.id,
          {
            name: input.name,
            action,
            deployToDevices: input.deployToDevices ?? false,
            webhookId: input.webhookId ?? null,
            ...target.values,
          },
          after,
        );
        const event = "application.pipeline.stage-added";
        await recordPipelineEvent(trx, event, ctx, pipeline, stageBody(created));
        if (instance) {
          await recordAssignedToStage(trx, actorOf(ctx), pipeline, created, instance);
        }
        return created;
      });
      return stageView(stage, ctx);
    }),

  updateStage: procedure
    .meta({
      permission: "pipeline:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/pipelines/{pipelineId}/stages/{stageId}",
        tags: [TAG],
        summary: "Change a stage (owners)",
        description:
          "Fields given replace the stage's; the order of stages does not change. A new target (one of `instanceId`, `deviceGroupId`, `deviceId`, of the pipeline's application, else 400 naming the field) replaces the stage's; the action must suit the new kind, and no other stage of the pipeline may have it (400 `invalid_input`). `webhookId` (a webhook of the pipeline's team, else 400 naming the field; null clears it) is told the outcome of each deploy into the stage. Audit event `application.pipeline.stage-updated` (Flowplane's: FlowFuse audits none), and `project.assigned-to-pipeline-stage` for a new instance.",
      },
    })
    .input(UpdatePipelineStageInput)
    .output(PipelineStage)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelineOf(ctx, input.pipelineId);
      const before = await stageOf(ctx, pipeline.id, input.stageId);
      const target = await targetOf(ctx.db, pipeline, input, false);
      const kind = target?.kind ?? kindOfStage(before);
      if (input.action !== undefined) checkAction(input.action, kind);
      else if (target && target.kind !== kindOfStage(before)) checkAction(before.action, kind);
      await checkWebhook(ctx, pipeline.team_id, input.webhookId);
      const instance = target?.instance;
      const after = await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockPipeline(trx, pipeline.id))) throw notFound();
        if (target) await checkTargetFree(trx, pipeline.id, target, before.id);
        const changed = await updateStage(trx, before.id, {
          name: input.name,
          action: input.action,
          deployToDevices: input.deployToDevices,
          webhookId: input.webhookId,
          ...target?.values,
        });
        const updates = (
          [
            "name",
            "action",
            "deploy_to_devices",
            "instance_id",
            "device_group_id",
            "device_id",
            "webhook_id",
          ] as const
        )
          .filter((key) => before[key] !== changed[key])
          .map((key) => ({ key, old: before[key], new: changed[key] }));
        await recordPipelineEvent(trx, "application.pipeline.stage-updated", ctx, pipeline, {
          ...stageBody(changed),
          updates,
        });
        if (instance && instance.id !== before.instance_id) {
          await recordAssignedToStage(trx, actorOf(ctx), pipeline, changed, instance);
        }
        return changed;
      });
      return stageView(after, ctx);
    }),

  deleteStage: procedure
    .meta({
      permission: "pipeline:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/pipelines/{pipelineId}/stages/{stageId}",
        tags: [TAG],
        summary: "Delete a stage (owners)",
        description:
          "The stage before it then leads to the one after it (A → B → C becomes A → C). Audit event `application.pipeline.stage-deleted` (Flowplane's: FlowFuse audits none).",
      },
    })
    .input(PipelineStageIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelineOf(ctx, input.pipelineId);
      await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockPipeline(trx, pipeline.id))) throw notFound();
        // Read again under the lock: its neighbours are what they are now.
        const stage = await findStage(trx, pipeline.id, input.stageId);
        if (!stage) throw notFound();
        await deleteStage(trx, stage);
        const event = "application.pipeline.stage-deleted";
        await recordPipelineEvent(trx, event, ctx, pipeline, stageBody(stage));
      });
      return { status: "okay" as const };
    }),
};
