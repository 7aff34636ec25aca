// What the pipelines area writes in the audit log, as FlowFuse logs it. A change to a pipeline or
// its stages, and a deploy, in the team's log, the body naming the application and the pipeline
// (FlowFuse's `generateBody`); an instance given to a stage in the instance's log; what a deploy
// makes a target run in the target's (a device group's application, a device, an instance's
// devices); a deploy a gone process left, failed by the platform.
import {
  type Db,
  type OperationRow,
  type PipelineWithApplication,
  recordAudit,
  recordEvent,
  type TeamForUser,
} from "@flowplane/db";
import { type Actor, ownEntry, ownLog, teamLog } from "../core/audit";
import { actorOf, type Context } from "../core/trpc";
import type { Plan } from "./deploy-plan";
import type { DeploySubject } from "./views";

interface Named {
  id: string;
  name: string;
}

type PipelineNamed = Pick<
  PipelineWithApplication,
  "id" | "name" | "team_id" | "application_id" | "application_name"
>;

const named = (row: Named) => ({ id: row.id, name: row.name });

export type PipelineEvent = `application.pipeline.${
  "created" | "updated" | "deleted" | "stage-added" | "stage-updated" | "stage-deleted"}`;

/** A change to a pipeline or its stages, naming the request's team too when it has one. */
export function recordPipelineEvent(
  trx: Db,
  event: PipelineEvent,
  ctx: Pick<Context, "auth"> & { team: TeamForUser | undefined },
  pipeline: PipelineNamed,
  more: Record<string, unknown> = {},
): Promise<void> {
  const team = ctx.team?.team;
  const body = {
    ...(team && { team: { id: team.id, name: team.name, slug: team.slug } }),
    application: { id: pipeline.application_id, name: pipeline.application_name },
    pipeline: named(pipeline),
    ...more,
  };
  return recordAudit(trx, { event, ...teamLog(pipeline.team_id), actor: actorOf(ctx), body });
}

/** An instance given to a stage, in the instance's log. */
export function recordAssignedToStage(
  trx: Db,
  actor: Actor,
  pipeline: PipelineNamed,
  stage: Named,
  instance: Named,
): Promise<void> {
  const project = { ...named(instance), team_id: pipeline.team_id };
  const more = { pipeline: named(pipeline), pipelineStage: named(stage) };
  return recordAudit(
    trx,
    ownEntry("project.assigned-to-pipeline-stage", "project", project, actor, more),
  );
}

/** What a deploy's outcome entries say of it: its stages (FlowFuse's names, and Flowplane's). */
function deployBody(deploy: Plan) {
  const { pipeline, source, target, sourceInstance, targetInstance } = deploy;
  return {
    application: { id: pipeline.application_id, name: pipeline.application_name },
    pipeline: named(pipeline),
    pipelineStage: named(source),
    pipelineStageTarget: named(target),
    sourceStage: named(source),
    targetStage: named(target),
    sourceProject: named(sourceInstance),
    ...(targetInstance && { targetProject: named(targetInstance) }),
    ...(deploy.targetGroup && { targetDeviceGroup: deploy.targetGroup }),
    ...(deploy.targetDevice && { targetDevice: deploy.targetDevice }),
  };
}

/** A deploy done: its stages, source, target and snapshot. */
export function recordStageDeployed(
  trx: Db,
  actor: Actor,
  deploy: Plan,
  snapshot: Named,
): Promise<void> {
  return recordAudit(trx, {
    event: "application.pipeline.stage-deployed",
    ...teamLog(deploy.pipeline.team_id),
    actor,
    body: { ...deployBody(deploy), snapshot: named(snapshot) },
  });
}

/**
 * A deploy that failed as it ran (Flowplane's event): stage-deployed's body without its snapshot
 * unless one was sent, with the operation, the error, and `reason` (the error's message).
 */
export function recordStageDeployRunFailed(
  trx: Db,
  actor: Actor,
  deploy: Plan,
  row: OperationRow,
): Promise<void> {
  const sent = (row.subject as unknown as DeploySubject).snapshot;
  return recordAudit(trx, {
    event: "application.pipeline.stage-deploy-failed",
    ...teamLog(deploy.pipeline.team_id),
    actor,
    body: {
      ...deployBody(deploy),
      ...(sent && { snapshot: sent }),
      operation: { id: row.id },
      error: { code: row.error_code, error: row.error_message },
      reason: row.error_message,
    },
  });
}

/**
 * A deploy started (a platform event, not audited: its outcome is, `stage-deployed` or
 * `stage-deploy-failed`), in the transaction of the operation a client awaits.
 */
export function recordStageDeployStarted(trx: Db, actor: Actor, deploy: Plan): Promise<void> {
  const { pipeline, source, target } = deploy;
  return recordEvent(trx, {
    type: "application.pipeline.stage-deploy-started",
    teamId: pipeline.team_id,
    entity: { type: "application", id: pipeline.application_id },
    ...(actor !== "system" && { actor }),
    data: {
      application: { id: pipeline.application_id, name: pipeline.application_name },
      pipeline: named(pipeline),
      pipelineStage: named(source),
      pipelineStageTarget: named(target),
    },
  });
}

/** What a deploy made its target run: a device group's or a device's. */
export function recordTargetSnapshotSet(
  trx: Db,
  actor: Actor,
  pipeline: PipelineNamed,
  target: { deviceGroup: Named } | { device: Named },
  snapshot: Named,
): Promise<void> {
  const teamId = pipeline.team_id;
  if ("deviceGroup" in target) {
    const body = { deviceGroup: target.deviceGroup, targetSnapshot: { new: snapshot.id } };
    const log = ownLog("application", pipeline.application_id, teamId);
    return recordAudit(trx, { event: "application.deviceGroup.updated", ...log, actor, body });
  }
  const body = { device: target.device, snapshot: named(snapshot) };
  const log = ownLog("device", target.device.id, teamId);
  return recordAudit(trx, { event: "device.snapshot.target-set", ...log, actor, body });
}

/** A deploy a process that is gone left pending, failed by the platform (Flowplane's event). */
export function recordStageDeployFailed(
  trx: Db,
  row: OperationRow,
  pipeline: PipelineNamed | undefined,
): Promise<void> {
  return recordAudit(trx, {
    event: "application.pipeline.stage-deploy-failed",
    ...teamLog(row.team_id),
    actor: "system",
    body: {
      ...(pipeline && {
        application: { id: pipeline.application_id, name: pipeline.application_name },
      }),
      ...(row.subject as unknown as DeploySubject),
      operation: { id: row.id },
      error: { code: row.error_code, error: row.error_message },
      reason: row.error_message,
    },
  });
}
