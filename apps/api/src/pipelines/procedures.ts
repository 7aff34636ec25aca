// Delivery pipelines (FlowFuse's `forge/ee/routes/pipeline`): an application's pipelines and their
// stages, a linked list in which a deploy moves a snapshot from a stage to the next. Owners create,
// edit, deploy and delete; viewers and up read. Every change is audited, stage edits and deletions
// too (FlowFuse leaves those unaudited).
import {
  ApplicationIdInput,
  CreatePipelineInput,
  CreatePipelineStageInput,
  Pipeline,
  PipelineIdInput,
  PipelineList,
  PipelineStage,
  PipelineStageIdInput,
  type StageAction,
  Status,
  TeamIdInput,
  UpdatePipelineInput,
  UpdatePipelineStageInput,
} from "@flowplane/contract";
import {
  countStages,
  type Db,
  deletePipeline,
  deleteStage,
  findPipeline,
  findStage,
  insertPipeline,
  insertStage,
  listPipelines,
  lockPipeline,
  type PipelineStageRow,
  type PipelineWithApplication,
  recordAudit,
  renamePipeline,
  teamOfApplication,
  updateStage,
} from "@flowplane/db";
import { ApiError, invalidRequest, notFound } from "../core/errors";
import { actorOf, type Context, procedure, teamOf } from "../core/trpc";
import { pipelineViews, stageView } from "./views";

const TAG = "Pipelines";

/** Actions an instance stage may have (FlowFuse's rules). */
const INSTANCE_ACTIONS: readonly StageAction[] = [
  "create_snapshot",
  "use_latest_snapshot",
  "prompt",
  "none",
];

async function pipelineOf(ctx: Pick<Context, "db">, pipelineId: string) {
  const pipeline = await findPipeline(ctx.db, pipelineId);
  if (!pipeline) throw notFound();
  return pipeline;
}

async function stageOf(ctx: Pick<Context, "db">, pipelineId: string, stageId: string) {
  const stage = await findStage(ctx.db, pipelineId, stageId);
  if (!stage) throw notFound();
  return stage;
}

type TargetField = "instanceId" | "deviceGroupId" | "deviceId";
const TARGET_FIELDS: readonly TargetField[] = ["instanceId", "deviceGroupId", "deviceId"];
type StageKind = "instance" | "deviceGroup" | "device";

/** Actions a device stage may have (FlowFuse's rules): no new snapshot of a device. */
const DEVICE_ACTIONS: readonly StageAction[] = [
  "use_active_snapshot",
  "use_latest_snapshot",
  "prompt",
  "none",
];

const notOfApplication = (field: TargetField, what: string) =>
  invalidRequest(`Invalid request: ${field}: not ${what} of the pipeline's application`, [
    { path: field, message: `Not ${what} of the pipeline's application` },
  ]);

/** A stage's target: the one field given, checked to be of the pipeline's application. */
interface Target {
  kind: StageKind;
  id: string;
  /** The instance, for its audit entry. */
  instance?: { id: string; name: string };
  values: { instanceId: string | null; deviceGroupId: string | null; deviceId: string | null };
}

/**
 * The target the input names: exactly one of `instanceId`, `deviceGroupId`, `deviceId` (none is
 * allowed when `required` is false: the stage keeps its own), of the pipeline's application, else
 * 400 naming the field.
 */
async function targetOf(
  db: Db,
  pipeline: PipelineWithApplication,
  input: Partial<Record<TargetField, string>>,
  required: boolean,
): Promise<Target | undefined> {
  const given = TARGET_FIELDS.filter((field) => input[field] !== undefined);
  if (given.length > 1) {
    throw new ApiError(
      400,
      "invalid_input",
      `A stage has one target: give one of ${given.join(", ")}`,
      given
        .slice(1)
        .map((path) => ({ path, message: `Not with ${given[0]}: a stage has one target` })),
    );
  }
  const field = given[0];
  if (field === undefined) {
    if (!required) return undefined;
    throw invalidRequest("Invalid request: instanceId: give the stage's target", [
      { path: "instanceId", message: "Give one of instanceId, deviceGroupId, deviceId" },
    ]);
  }
  const id = input[field]!;
  const values = { instanceId: null, deviceGroupId: null, deviceId: null, [field]: id };
  if (field === "instanceId") {
    const instance = await db
      .selectFrom("projects")
      .select(["id", "name", "application_id"])
      .where("id", "=", id)
      .executeTakeFirst();
    if (!instance || instance.application_id !== pipeline.application_id) {
      throw notOfApplication(field, "an instance");
    }
    return { kind: "instance", id, instance, values };
  }
  if (field === "deviceGroupId") {
    const group = await db
      .selectFrom("device_groups")
      .select(["id", "application_id"])
      .where("id", "=", id)
      .executeTakeFirst();
    if (!group || group.application_id !== pipeline.application_id) {
      throw notOfApplication(field, "a device group");
    }
    return { kind: "deviceGroup", id, values };
  }
  const device = await db
    .selectFrom("devices")
    .select(["id", "application_id"])
    .where("id", "=", id)
    .executeTakeFirst();
  if (!device || device.application_id !== pipeline.application_id) {
    throw notOfApplication(field, "a device");
  }
  return { kind: "device", id, values };
}

/** The kind of a stored stage (by the target it had; an instance stage when it has none left). */
function kindOfStage(stage: PipelineStageRow): StageKind {
  if (stage.device_group_id !== null) return "deviceGroup";
  if (stage.device_id !== null) return "device";
  return "instance";
}

function checkAction(action: StageAction, kind: StageKind) {
  if (kind === "device") {
    if (!DEVICE_ACTIONS.includes(action)) {
      throw new ApiError(400, "invalid_input", `A device stage cannot have the action ${action}`, [
        { path: "action", message: "A device stage does not take snapshots of the device" },
      ]);
    }
  } else if (!INSTANCE_ACTIONS.includes(action)) {
    throw new ApiError(
      400,
      "invalid_input",
      `${kind === "instance" ? "An instance" : "A device group"} stage cannot have the action ${action}`,
      [{ path: "action", message: "`use_active_snapshot` is for device stages" }],
    );
  }
}

/** The audit entries of a change to a pipeline go to the team's log, about its application. */
function pipelineAudit(
  ctx: Pick<Context, "auth">,
  pipeline: Pick<PipelineWithApplication, "id" | "name" | "team_id" | "application_id">,
  event: string,
  body: Record<string, unknown> = {},
) {
  return {
    event,
    entity: { type: "application" as const, id: pipeline.application_id },
    teamId: pipeline.team_id,
    actor: actorOf(ctx),
    body: { pipeline: { id: pipeline.id, name: pipeline.name }, ...body },
  };
}

const stageBody = (stage: PipelineStageRow) => ({
  stage: {
    id: stage.id,
    name: stage.name,
    action: stage.action,
    instanceId: stage.instance_id,
    deviceGroupId: stage.device_group_id,
    deviceId: stage.device_id,
  },
});

/** The procedures of pipelines and their stages (index.ts puts them in one router with the deploy). */
export const pipelineProcedures = {
  ofApplication: procedure
    .meta({
      permission: "application:pipeline:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/pipelines",
        tags: [TAG],
        summary: "An application's pipelines with their stages (viewers and up)",
        description:
          "Stages in order: each one's `NextStageId` names the next. Not paged (as FlowFuse). Viewers read too (FlowFuse: members), as every other read of the team's applications.",
      },
    })
    .input(ApplicationIdInput)
    .output(PipelineList)
    .query(async ({ ctx, input }) => {
      const rows = await listPipelines(ctx.db, { applicationId: input.applicationId });
      return { count: rows.length, pipelines: await pipelineViews(rows, ctx) };
    }),

  ofTeam: procedure
    .meta({
      permission: "team:pipeline:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/pipelines",
        tags: [TAG],
        summary: "Every pipeline of the team's applications (viewers and up)",
        description:
          "Each with its `application` (`id`, `name`) and its stages in order. Not paged.",
      },
    })
    .input(TeamIdInput.pick({ teamId: true }).strict())
    .output(PipelineList)
    .query(async ({ ctx }) => {
      const rows = await listPipelines(ctx.db, { teamId: teamOf(ctx).team.id });
      return { count: rows.length, pipelines: await pipelineViews(rows, ctx, true) };
    }),

  get: procedure
    .meta({
      permission: "pipeline:read",
      openapi: {
        method: "GET",
        path: "/api/v1/pipelines/{pipelineId}",
        tags: [TAG],
        summary: "A pipeline with its stages (viewers and up)",
        description: "Flowplane's (FlowFuse lists pipelines only by application or team).",
      },
    })
    .input(PipelineIdInput)
    .output(Pipeline)
    .query(async ({ ctx, input }) => {
      const [view] = await pipelineViews([await pipelineOf(ctx, input.pipelineId)], ctx, true);
      return view!;
    }),

  create: procedure
    .meta({
      permission: "pipeline:create",
      openapi: {
        method: "POST",
        path: "/api/v1/pipelines",
        tags: [TAG],
        summary: "Create a pipeline in an application (owners)",
        description:
          "A pipeline has no stages until they are added (`POST /api/v1/pipelines/{pipelineId}/stages`). Audit event `application.pipeline.created`.",
      },
    })
    .input(CreatePipelineInput)
    .output(Pipeline)
    .mutation(async ({ ctx, input }) => {
      const teamId = (await teamOfApplication(ctx.db, input.applicationId))!;
      const row = await ctx.db.transaction().execute(async (trx) => {
        const created = await insertPipeline(trx, {
          teamId,
          applicationId: input.applicationId,
          name: input.name,
        });
        await recordAudit(trx, pipelineAudit(ctx, created, "application.pipeline.created"));
        return created;
      });
      const [view] = await pipelineViews([(await findPipeline(ctx.db, row.id))!], ctx);
      return view!;
    }),

  update: procedure
    .meta({
      permission: "pipeline:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/pipelines/{pipelineId}",
        tags: [TAG],
        summary: "Rename a pipeline (owners)",
        description:
          "The new name is read from `pipeline.name`, as FlowFuse reads it. Audit event `application.pipeline.updated`.",
      },
    })
    .input(UpdatePipelineInput)
    .output(Pipeline)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelineOf(ctx, input.pipelineId);
      const name = input.pipeline.name;
      await ctx.db.transaction().execute(async (trx) => {
        await renamePipeline(trx, pipeline.id, name);
        await recordAudit(
          trx,
          pipelineAudit(ctx, { ...pipeline, name }, "application.pipeline.updated", {
            updates: [{ key: "name", old: pipeline.name, new: name }],
          }),
        );
      });
      const [view] = await pipelineViews([(await findPipeline(ctx.db, pipeline.id))!], ctx);
      return view!;
    }),

  delete: procedure
    .meta({
      permission: "pipeline:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/pipelines/{pipelineId}",
        tags: [TAG],
        summary: "Delete a pipeline and its stages (owners)",
        description:
          "The stages' instances and snapshots stay. Audit event `application.pipeline.deleted`.",
      },
    })
    .input(PipelineIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelineOf(ctx, input.pipelineId);
      await ctx.db.transaction().execute(async (trx) => {
        if (!(await deletePipeline(trx, pipeline.id))) throw notFound();
        await recordAudit(trx, pipelineAudit(ctx, pipeline, "application.pipeline.deleted"));
      });
      return { status: "okay" as const };
    }),

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
      permission: "pipeline:edit",
      openapi: {
        method: "POST",
        path: "/api/v1/pipelines/{pipelineId}/stages",
        tags: [TAG],
        summary: "Add a stage (owners)",
        description:
          "The stage deploys to exactly one of `instanceId` (a hosted instance), `deviceGroupId` (a device group: its target snapshot) or `deviceId` (a device: its target snapshot), of the pipeline's application (else 400 naming the field); answered as `instances`, `deviceGroups`, `devices`. A device group stage is never first (400 `invalid_input`). `source` is the stage it follows: linked in after it, before the stage that followed it. Without `source`, only the first stage of an empty pipeline (else 400 `invalid_input`: FlowFuse then leaves a stage no other leads to). `action` defaults to `create_snapshot` (device stages: `use_active_snapshot`); `use_active_snapshot` is for device stages and `create_snapshot` for instance and group stages (400 `invalid_input` naming `action`). Audit events `application.pipeline.stage-added` and, on an instance, `project.assigned-to-pipeline-stage`.",
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
      if (target.kind === "deviceGroup" && input.source === undefined) {
        // FlowFuse's rule: a device group stage only receives, so it cannot be first.
        throw new ApiError(400, "invalid_input", "A device group stage cannot be the first", [
          { path: "deviceGroupId", message: "A device group stage follows another stage" },
        ]);
      }
      const instance = target.instance;
      const stage = await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockPipeline(trx, pipeline.id))) throw notFound();
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
            ...target.values,
          },
          after,
        );
        await recordAudit(
          trx,
          pipelineAudit(ctx, pipeline, "application.pipeline.stage-added", stageBody(created)),
        );
        if (instance) {
          await recordAudit(trx, {
            event: "project.assigned-to-pipeline-stage",
            entity: { type: "project", id: instance.id },
            teamId: pipeline.team_id,
            actor: actorOf(ctx),
            body: {
              project: { id: instance.id, name: instance.name },
              pipeline: { id: pipeline.id, name: pipeline.name },
              pipelineStage: { id: created.id, name: created.name },
            },
          });
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
          "Fields given replace the stage's; the order of stages does not change. A new target (one of `instanceId`, `deviceGroupId`, `deviceId`, of the pipeline's application, else 400 naming the field) replaces the stage's; the action must suit the new kind. Audit event `application.pipeline.stage-updated` (Flowplane's: FlowFuse audits none), and `project.assigned-to-pipeline-stage` for a new instance.",
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
      const instance = target?.instance;
      const after = await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockPipeline(trx, pipeline.id))) throw notFound();
        const changed = await updateStage(trx, before.id, {
          name: input.name,
          action: input.action,
          deployToDevices: input.deployToDevices,
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
          ] as const
        )
          .filter((key) => before[key] !== changed[key])
          .map((key) => ({ key, old: before[key], new: changed[key] }));
        await recordAudit(
          trx,
          pipelineAudit(ctx, pipeline, "application.pipeline.stage-updated", {
            ...stageBody(changed),
            updates,
          }),
        );
        if (instance && instance.id !== before.instance_id) {
          await recordAudit(trx, {
            event: "project.assigned-to-pipeline-stage",
            entity: { type: "project", id: instance.id },
            teamId: pipeline.team_id,
            actor: actorOf(ctx),
            body: {
              project: { id: instance.id, name: instance.name },
              pipeline: { id: pipeline.id, name: pipeline.name },
              pipelineStage: { id: changed.id, name: changed.name },
            },
          });
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
        await recordAudit(
          trx,
          pipelineAudit(ctx, pipeline, "application.pipeline.stage-deleted", stageBody(stage)),
        );
      });
      return { status: "okay" as const };
    }),
};
