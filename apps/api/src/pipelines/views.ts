// How pipelines, their stages and operations look on the wire (FlowFuse's `Pipeline` and
// `PipelineStage`; Flowplane's `Operation`).
import type { Operation, Pipeline, PipelineStage } from "@flowplane/contract";
import {
  findDevice,
  findDeviceGroup,
  findProject,
  listStages,
  type OperationRow,
  type PipelineStageRow,
  type PipelineWithApplication,
} from "@flowplane/db";
import type { Context } from "../core/trpc";
import { groupSummary } from "../devices/index";
import { deviceView } from "../devices/index";
import { instanceSummary } from "../instances/index";

type ViewContext = Pick<Context, "db" | "instances" | "baseUrl">;

export async function stageView(row: PipelineStageRow, ctx: ViewContext): Promise<PipelineStage> {
  const project = row.instance_id ? await findProject(ctx.db, row.instance_id) : undefined;
  const device = row.device_id ? await findDevice(ctx.db, row.device_id) : undefined;
  const groupApplication = row.device_group_id
    ? await ctx.db
        .selectFrom("device_groups")
        .select("application_id")
        .where("id", "=", row.device_group_id)
        .executeTakeFirst()
    : undefined;
  const group = groupApplication
    ? await findDeviceGroup(ctx.db, groupApplication.application_id, row.device_group_id!)
    : undefined;
  return {
    id: row.id,
    name: row.name,
    action: row.action,
    deployToDevices: row.deploy_to_devices,
    instances: project ? [await instanceSummary(project, ctx)] : [],
    deviceGroups: group ? [groupSummary(group, ctx.baseUrl)] : [],
    devices: device ? [deviceView(device, ctx.baseUrl)] : [],
    webhookId: row.webhook_id,
    ...(row.next_stage_id !== null && { NextStageId: row.next_stage_id }),
  };
}

/** Pipelines with their stages in order (`application` in the team's list). */
export async function pipelineViews(
  rows: PipelineWithApplication[],
  ctx: ViewContext,
  withApplication = false,
): Promise<Pipeline[]> {
  const stages = await listStages(
    ctx.db,
    rows.map((row) => row.id),
  );
  return Promise.all(
    rows.map(async (row) => ({
      id: row.id,
      name: row.name,
      stages: await Promise.all((stages.get(row.id) ?? []).map((stage) => stageView(stage, ctx))),
      ...(withApplication && {
        application: { id: row.application_id, name: row.application_name },
      }),
    })),
  );
}

/** What an operation row keeps of its subject. */
export interface DeploySubject {
  pipeline: { id: string; name: string };
  sourceStage: { id: string; name: string };
  targetStage: { id: string; name: string };
  snapshot?: { id: string; name: string };
}

export function operationView(row: OperationRow): Operation {
  const subject = row.subject as unknown as DeploySubject;
  return {
    id: row.id,
    kind: "pipeline.deploy",
    status: row.status,
    error:
      row.status === "failed"
        ? { code: row.error_code ?? "deploy_failed", error: row.error_message ?? "" }
        : null,
    pipeline: subject.pipeline,
    sourceStage: subject.sourceStage,
    targetStage: subject.targetStage,
    snapshot: subject.snapshot ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}
