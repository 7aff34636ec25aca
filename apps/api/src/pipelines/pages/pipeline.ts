// One pipeline's page (GET /teams/:teamId/pipelines/:pipelineId): its stages in order, each with
// what it deploys to (an instance, a device group or a device) and its action; renaming and
// deleting the pipeline; adding, editing and deleting stages; and deploying a stage to the next.
// A deploy runs in the background as an operation: the form's redirect names it
// (`?operation=<id>`), the page shows its state — pending, then succeeded or failed with the
// reason — on each load, and the page's script (pipeline.js) asks for it until it ends.
// Deleting asks first (the page's script, or a page of its own without script).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from "fastify";
import type { Operation } from "@flowplane/contract";
import { ApiError, notFound } from "../../core/errors";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { teamPlace } from "../../teams/index";
import {
  type PipelineCaller,
  pipelineCallerOf,
  pipelineOfTeam,
  pipelinesPath,
  targetInput,
  targetsOf,
} from "./caller";

type Params = { teamId: string; pipelineId: string };
type StageParams = Params & { stageId: string; action: string };

const NOTICES: Record<string, string> = {
  created: "The pipeline is created. Add its first stage below.",
  renamed: "The pipeline is renamed.",
  added: "The stage is added at the end.",
  edited: "The stage is saved.",
  "stage-deleted": "The stage is deleted.",
  nothing: "That stage's action is “none”: the deploy did nothing.",
};

const PIPELINE_ACTIONS = ["rename", "delete", "stages"] as const;
const STAGE_ACTIONS = ["edit", "delete", "deploy"] as const;
type FailedAction = (typeof PIPELINE_ACTIONS)[number] | (typeof STAGE_ACTIONS)[number];

export const STAGE_ACTION_LABELS: Record<string, string> = {
  create_snapshot: "Create a snapshot",
  use_latest_snapshot: "Use the latest snapshot",
  use_active_snapshot: "Use the active snapshot (devices)",
  prompt: "Prompt for a snapshot",
  none: "None",
};

interface PipelineState {
  failed?: { action: FailedAction; stageId?: string; error: FormError; sent?: unknown };
}

/** The operation the page was sent to watch, if it is this pipeline's and still readable. */
async function operationOf(caller: PipelineCaller, request: FastifyRequest, pipelineId: string) {
  const { operation } = request.query as { operation?: unknown };
  if (typeof operation !== "string" || operation === "") return undefined;
  try {
    const found: Operation = await caller.pipelines.operation({ operationId: operation });
    return found.pipeline.id === pipelineId ? found : undefined;
  } catch (error) {
    if (error instanceof ApiError || (error as { cause?: unknown })?.cause instanceof ApiError) {
      return undefined;
    }
    throw error;
  }
}

/** A stage form as posted. */
const stageOf = (body: unknown) => ({
  name: field(body, "name") ?? "",
  target: field(body, "target") ?? "",
  action: field(body, "action") ?? "",
  deployToDevices: field(body, "deployToDevices") === "yes",
});

export function pipelinePage(app: FastifyInstance, deps: PageDeps, route: RouteShorthandOptions) {
  const pathOf = ({ teamId, pipelineId }: Params) =>
    `${pipelinesPath(teamId)}/${encodeURIComponent(pipelineId)}`;

  async function renderPipeline(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: PipelineState = {},
  ) {
    const caller = pipelineCallerOf(deps, request);
    const { teamId, pipelineId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const pipeline = await pipelineOfTeam(caller, teamId, pipelineId);
    const canEdit = place.can("pipeline:edit");
    const targets = canEdit
      ? await targetsOf(caller, teamId, pipeline.application.id)
      : { instances: [], groups: [], devices: [] };
    const operation = await operationOf(caller, request, pipelineId);
    const failed = state.failed;
    return sendPage(
      deps,
      request,
      reply,
      "pipelines/pages/pipeline",
      {
        title: `${pipeline.name} · ${pipeline.application.name}`,
        place,
        pipeline,
        path: pathOf(request.params),
        targets,
        actions: STAGE_ACTION_LABELS,
        can: { edit: canEdit, delete: place.can("pipeline:delete") },
        operation,
        failed,
        notice: failed ? undefined : noticeOf(request, NOTICES),
        script: operation?.status === "pending" ? "pipeline.js" : undefined,
      },
      failed?.error.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/pipelines/:pipelineId", route, (request, reply) =>
    renderPipeline(request, reply),
  );

  /** Asks first, on a page of its own, when the page's script did not. */
  function confirm(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    question: string,
    action: string,
    place: Awaited<ReturnType<typeof teamPlace>>,
  ) {
    return sendPage(deps, request, reply, "pipelines/pages/confirm", {
      title: "Delete?",
      place,
      question,
      action,
      back: pathOf(request.params),
    });
  }

  app.post<{ Params: Params & { action: string } }>(
    "/teams/:teamId/pipelines/:pipelineId/:action",
    route,
    async (request, reply) => {
      const { teamId, pipelineId, action } = request.params;
      if (!(PIPELINE_ACTIONS as readonly string[]).includes(action)) throw notFound();
      const caller = pipelineCallerOf(deps, request);
      const path = pathOf(request.params);
      let done: string;
      try {
        const pipeline = await pipelineOfTeam(caller, teamId, pipelineId);
        if (action === "delete" && field(request.body, "confirmed") !== "yes") {
          const place = await teamPlace(caller.team, teamId);
          const question = `Delete the pipeline “${pipeline.name}” of ${pipeline.application.name} and its stages? Their instances and snapshots stay.`;
          return confirm(request, reply, question, `${path}/delete`, place);
        }
        if (action === "rename") {
          await caller.pipelines.update({
            pipelineId,
            pipeline: { name: field(request.body, "name") ?? "" },
          });
          done = "renamed";
        } else if (action === "delete") {
          await caller.pipelines.delete({ pipelineId });
          return reply.redirect(`${pipelinesPath(teamId)}?done=deleted`, 303);
        } else {
          const stage = stageOf(request.body);
          const last = pipeline.stages.at(-1);
          await caller.pipelines.addStage({
            pipelineId,
            name: stage.name,
            ...targetInput(stage.target),
            ...(stage.action !== "" && { action: stage.action as never }),
            deployToDevices: stage.deployToDevices,
            ...(last && { source: last.id }),
          });
          done = "added";
        }
      } catch (error) {
        return renderPipeline(request, reply, {
          failed: {
            action: action as FailedAction,
            error: formError(request, reply, error),
            sent:
              action === "stages" ? stageOf(request.body) : { name: field(request.body, "name") },
          },
        });
      }
      return reply.redirect(`${path}?done=${done}`, 303);
    },
  );

  app.post<{ Params: StageParams }>(
    "/teams/:teamId/pipelines/:pipelineId/stages/:stageId/:action",
    route,
    async (request, reply) => {
      const { teamId, pipelineId, stageId, action } = request.params;
      if (!(STAGE_ACTIONS as readonly string[]).includes(action)) throw notFound();
      const caller = pipelineCallerOf(deps, request);
      const path = pathOf(request.params);
      let done: string;
      try {
        const pipeline = await pipelineOfTeam(caller, teamId, pipelineId);
        const stage = pipeline.stages.find((one) => one.id === stageId);
        if (!stage) throw notFound();
        if (action === "delete" && field(request.body, "confirmed") !== "yes") {
          const place = await teamPlace(caller.team, teamId);
          const question = `Delete the stage “${stage.name}” of the pipeline “${pipeline.name}”? Its instance, group or device stays.`;
          return confirm(request, reply, question, `${path}/stages/${stageId}/delete`, place);
        }
        if (action === "delete") {
          await caller.pipelines.deleteStage({ pipelineId, stageId });
          done = "stage-deleted";
        } else if (action === "edit") {
          const sent = stageOf(request.body);
          const current = stage.instances[0]
            ? `instance:${stage.instances[0].id}`
            : stage.deviceGroups[0]
              ? `group:${stage.deviceGroups[0].id}`
              : stage.devices[0]
                ? `device:${stage.devices[0].id}`
                : "";
          await caller.pipelines.updateStage({
            pipelineId,
            stageId,
            name: sent.name,
            ...(sent.target !== current && targetInput(sent.target)),
            ...(sent.action !== "" && { action: sent.action as never }),
            deployToDevices: sent.deployToDevices,
          });
          done = "edited";
        } else {
          const snapshot = field(request.body, "sourceSnapshotId") ?? "";
          const started = await caller.pipelines.deploy({
            pipelineId,
            stageId,
            ...(snapshot !== "" && { sourceSnapshotId: snapshot }),
          });
          if (!started.operation) return reply.redirect(`${path}?done=nothing`, 303);
          return reply.redirect(
            `${path}?operation=${encodeURIComponent(started.operation.id)}#deploy`,
            303,
          );
        }
      } catch (error) {
        return renderPipeline(request, reply, {
          failed: {
            action: action as FailedAction,
            stageId,
            error: formError(request, reply, error),
            sent: action === "edit" ? stageOf(request.body) : undefined,
          },
        });
      }
      return reply.redirect(`${path}?done=${done}`, 303);
    },
  );
}
