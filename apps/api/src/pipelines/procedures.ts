// Delivery pipelines (FlowFuse's `forge/ee/routes/pipeline`): an application's pipelines and their
// stages, a linked list in which a deploy moves a snapshot from a stage to the next. Owners create,
// edit, deploy and delete; viewers and up read. Every change is audited. The stages' procedures
// are in stages.ts.
import {
  ApplicationIdInput,
  CreatePipelineInput,
  Pipeline,
  PipelineIdInput,
  PipelineList,
  Status,
  TeamIdInput,
  UpdatePipelineInput,
} from "@flowplane/contract";
import {
  deletePipeline,
  findPipeline,
  insertPipeline,
  listPipelines,
  renamePipeline,
} from "@flowplane/db";
import { notFound } from "../core/errors";
import { type Context, procedure, teamOf } from "../core/trpc";
import { recordPipelineEvent } from "./events";
import { pipelineViews } from "./views";

export const TAG = "Pipelines";

export async function pipelineOf(ctx: Pick<Context, "db">, pipelineId: string) {
  const pipeline = await findPipeline(ctx.db, pipelineId);
  if (!pipeline) throw notFound();
  return pipeline;
}

/** The procedures of pipelines (index.ts puts them in one router with the stages' and the deploy). */
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
      create: "replay",
      permission: "pipeline:create",
      // Another team's application (or none) is 404, as on every other pipeline route.
      unseenIsNotFound: true,
      openapi: {
        method: "POST",
        path: "/api/v1/pipelines",
        tags: [TAG],
        summary: "Create a pipeline in an application (owners)",
        description:
          "A pipeline has no stages until they are added (`POST /api/v1/pipelines/{pipelineId}/stages`). An `applicationId` that is not of a team of the caller's is 404, as FlowFuse answers it. Audit event `application.pipeline.created`.",
      },
    })
    .input(CreatePipelineInput)
    .output(Pipeline)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const row = await ctx.db.transaction().execute(async (trx) => {
        const created = await insertPipeline(trx, {
          teamId,
          applicationId: input.applicationId,
          name: input.name,
        });
        const found = (await findPipeline(trx, created.id))!;
        await recordPipelineEvent(trx, "application.pipeline.created", ctx, found);
        return found;
      });
      const [view] = await pipelineViews([row], ctx);
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
        await recordPipelineEvent(
          trx,
          "application.pipeline.updated",
          ctx,
          { ...pipeline, name },
          {
            updates: [{ key: "name", old: pipeline.name, new: name }],
          },
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
        await recordPipelineEvent(trx, "application.pipeline.deleted", ctx, pipeline);
      });
      return { status: "okay" as const };
    }),
};
