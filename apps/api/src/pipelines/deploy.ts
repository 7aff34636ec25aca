// A deploy from a pipeline stage to the next: checked in full before anything is made (a last
// stage, a stage without an instance, a missing snapshot are refused at once), then run in the
// background as an operation the caller can await (GET /api/v1/operations/{id}). The source
// snapshot (taken now, the newest, or the one named, by the stage's action) is copied to the target
// instance as a snapshot of its own and applied as one action on that instance (instances/
// runtime.ts `replace`: after any action under way, so concurrent deploys to one target run one
// after the other; if Node-RED does not start on it, the target gets back what it ran). A device
// group or device target gets the snapshot as its target snapshot: its devices (the group's
// members) are told at their next check-in (409 naming it) and download it.
import { DeployStageInput, DeployStarted, Operation, OperationIdInput } from "@flowplane/contract";
import {
  type Db,
  type EnvVar,
  findOperation,
  findPipeline,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  findStage,
  finishOperation,
  insertOperation,
  listSnapshots,
  noteOperation,
  failAbandonedOperations,
  pendingOperationFor,
  touchOperations,
  type PipelineStageRow,
  type PipelineWithApplication,
  type ProjectDetail,
  recordAudit,
  updateDevice,
  updateDeviceGroup,
  setProjectDeviceTarget,
  type SnapshotRow,
  isUniqueViolation,
} from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import {
  contentOf,
  contentOfInstance,
  deployedState,
  type InstanceState,
  writeOntoInstance,
  type SnapshotContent,
} from "../snapshots/content";
import { storeInstanceSnapshot } from "../snapshots/records";
import { type DeploySubject, operationView } from "./views";

const TAG = "Pipelines";

const deployError = (status: number, code: string, message: string, field?: string) =>
  new ApiError(status, code, message, field ? [{ path: field, message }] : undefined);

/** How often a running deploy's operation is touched (its process's heartbeat). */
const HEARTBEAT_MS = 10_000;
/** A pending operation untouched this long was left by a process that is gone. */
export const ABANDONED_AFTER_SECONDS = 60;

/**
 * The deploys this process runs in the background: the server waits for them when it closes, so
 * none is cut off halfway (its target's action claim would otherwise stay until it goes stale).
 * While any runs, their operations are touched every few seconds: one whose heartbeat stopped was
 * left by a process that died, and is failed (`failAbandonedDeploys`) rather than pending forever.
 */
export class Deploys {
  private readonly running = new Map<Promise<void>, string>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly db?: Db,
    private readonly log?: FastifyBaseLogger,
  ) {}

  run(operationId: string, work: () => Promise<void>): void {
    const promise = work().finally(() => {
      this.running.delete(promise);
      if (this.running.size === 0 && this.heartbeat) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
    });
    this.running.set(promise, operationId);
    if (this.db && !this.heartbeat) {
      const db = this.db;
      this.heartbeat = setInterval(() => {
        touchOperations(db, [...this.running.values()]).catch((error: unknown) =>
          this.log?.error({ err: error }, "running deploys not touched"),
        );
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.keys()]);
  }
}

/**
 * Fails the deploys a process that is gone left pending (at start, and on every sweep after): their
 * operation says so, and the team's audit log has `application.pipeline.stage-deploy-failed`
 * (Flowplane's: FlowFuse records no failed deploy). The target they held is free again.
 */
export async function failAbandonedDeploys(db: Db): Promise<number> {
  const failed = await db.transaction().execute(async (trx) => {
    const rows = await failAbandonedOperations(trx, ABANDONED_AFTER_SECONDS, {
      code: "deploy_interrupted",
      message:
        "The platform stopped while this deploy ran, so it did not finish: check the target, and deploy again",
    });
    for (const row of rows) {
      const subject = row.subject as unknown as DeploySubject;
      const pipeline = await findPipeline(trx, subject.pipeline.id);
      await recordAudit(trx, {
        event: "application.pipeline.stage-deploy-failed",
        entity: { type: "team", id: row.team_id },
        teamId: row.team_id,
        actor: "system",
        body: {
          ...(pipeline && {
            application: { id: pipeline.application_id, name: pipeline.application_name },
          }),
          ...subject,
          operation: { id: row.id },
          error: { code: row.error_code, error: row.error_message },
        },
      });
    }
    return rows.length;
  });
  return failed;
}

/** What a deploy needs, all of it checked before anything is made. */
interface Plan {
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

async function plan(
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

/**
 * FlowFuse's copy rules for a pipeline deploy: the snapshot's flows and credentials (encrypted with
 * the target's own secret), its settings over the target's, its modules; the target keeps the
 * values of the variables it has, and gets those it lacks with the snapshot's values.
 */
export function pipelineState(before: InstanceState, content: SnapshotContent): InstanceState {
  const state = deployedState(before, content);
  const own = new Map((before.settings.env ?? []).map((v) => [v.name, v]));
  const incoming: EnvVar[] = state.settings.env ?? [];
  const env = [
    ...(before.settings.env ?? []),
    ...incoming.filter((variable) => !own.has(variable.name)),
  ];
  const {
    env: _env,
    palette: _palette,
    ...settings
  } = content.settings.settings as Record<string, unknown> & { env?: unknown; palette?: unknown };
  return { ...state, settings: { ...state.settings, ...settings, env } };
}

const stamp = () => new Date().toISOString().replace("T", " ").slice(0, 19);

async function run(ctx: Context, operationId: string, deploy: Plan): Promise<void> {
  const { pipeline, source, target, sourceInstance, targetInstance } = deploy;
  const db = ctx.db;
  // The snapshot that leaves the source stage.
  let sent = deploy.snapshot;
  if (!sent) {
    const content = await contentOfInstance(db, sourceInstance);
    const taken = await db.transaction().execute((trx) =>
      storeInstanceSnapshot(ctx, trx, sourceInstance, content, {
        name: `${pipeline.name} Deploy Snapshot - ${stamp()}`,
        description: `Taken by pipeline ${pipeline.name} to deploy stage ${source.name} to ${target.name}`,
        event: "created",
      }),
    );
    sent = (await findSnapshot(db, taken.id))!;
  }
  await noteOperation(db, operationId, { snapshot: { id: sent.id, name: sent.name } });
  const deployed = {
    event: "application.pipeline.stage-deployed",
    entity: { type: "team" as const, id: pipeline.team_id },
    teamId: pipeline.team_id,
    actor: actorOf(ctx),
    body: {
      application: { id: pipeline.application_id, name: pipeline.application_name },
      pipeline: { id: pipeline.id, name: pipeline.name },
      // FlowFuse's names for the two stages, and Flowplane's.
      pipelineStage: { id: source.id, name: source.name },
      pipelineStageTarget: { id: target.id, name: target.name },
      sourceStage: { id: source.id, name: source.name },
      targetStage: { id: target.id, name: target.name },
      sourceProject: { id: sourceInstance.id, name: sourceInstance.name },
      ...(targetInstance && {
        targetProject: { id: targetInstance.id, name: targetInstance.name },
      }),
      ...(deploy.targetGroup && { targetDeviceGroup: deploy.targetGroup }),
      ...(deploy.targetDevice && { targetDevice: deploy.targetDevice }),
      snapshot: { id: sent.id, name: sent.name },
    },
  };
  if (!targetInstance) {
    // A device group or device: the snapshot becomes its target, which its devices then run.
    const { targetGroup, targetDevice } = deploy;
    const snapshot = { id: sent.id, name: sent.name };
    await db.transaction().execute(async (trx) => {
      if (targetGroup) {
        await updateDeviceGroup(trx, targetGroup.id, { targetSnapshotId: sent.id });
        await recordAudit(trx, {
          event: "application.deviceGroup.updated",
          entity: { type: "application", id: pipeline.application_id },
          teamId: pipeline.team_id,
          actor: actorOf(ctx),
          body: { deviceGroup: targetGroup, targetSnapshot: { new: sent.id } },
        });
      } else if (targetDevice) {
        if (!(await updateDevice(trx, targetDevice.id, { targetSnapshotId: sent.id }))) {
          throw deployError(409, "invalid_target_stage", "The target device is gone");
        }
        await recordAudit(trx, {
          event: "device.snapshot.target-set",
          entity: { type: "device", id: targetDevice.id },
          teamId: pipeline.team_id,
          actor: actorOf(ctx),
          body: { device: targetDevice, snapshot },
        });
      }
      await recordAudit(trx, deployed);
    });
    return;
  }
  const content = contentOf(ctx.tokenSecret, sent);

  // The target's own copy, so that it can be rolled back to and shows where it came from.
  const copy = await db.transaction().execute((trx) =>
    storeInstanceSnapshot(ctx, trx, targetInstance, content, {
      name: `${sent.name} - Deploy Snapshot - ${stamp()}`,
      description: `Deployed by pipeline ${pipeline.name} from stage ${source.name} (${sourceInstance.name})`,
      event: "imported",
    }),
  );

  const record = async (trx: Db) => {
    await recordAudit(trx, deployed);
    if (target.deploy_to_devices) {
      await recordAudit(trx, {
        event: "project.snapshot.device-target-set",
        entity: { type: "project", id: targetInstance.id },
        teamId: pipeline.team_id,
        actor: actorOf(ctx),
        body: {
          project: { id: targetInstance.id, name: targetInstance.name },
          snapshot: { id: copy.id, name: copy.name },
        },
      });
    }
  };
  await writeOntoInstance(
    ctx,
    targetInstance.id,
    async (before, trx) => {
      if (target.deploy_to_devices) await setProjectDeviceTarget(trx, targetInstance.id, copy.id);
      return pipelineState(before, content);
    },
    record,
  );
}

/** Deploying a stage, and the operation a client awaits. */
export const deployProcedures = {
  deploy: procedure
    .meta({
      permission: "pipeline:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/pipelines/{pipelineId}/stages/{stageId}/deploy",
        tags: [TAG],
        summary: "Deploy a stage to the next one (owners)",
        description:
          "Sends the stage's snapshot — taken now (`create_snapshot`), its instance's newest (`use_latest_snapshot`), or `sourceSnapshotId` (`prompt`) — to the next stage. An instance gets its flows, its credentials (encrypted with the target's own secret), its settings and modules; the target keeps the values of the variables it has and gets those it lacks (FlowFuse's copy rules). The target gets the snapshot as one of its own (`project.snapshot.imported`) and, when running, restarts on it; if it does not start, it gets back what it ran and the deploy fails. Deploys to one instance run one after the other. A device group (or device) gets the snapshot as its target snapshot: its members (the device) are told at their next check-in (409 naming it) and run it. Deploying from a device or device group stage is not supported (400 `invalid_source_instance`). Everything is checked before anything is made: the last stage is 404 `Target stage not found` (no snapshot taken), a source stage without an instance 400 `invalid_source_instance`, a target stage without its instance, group or device 400 `invalid_target_stage`, a snapshot that is not the source instance's 400 `invalid_source_snapshot`. Answers `{ status: \"importing\" }` at once, as FlowFuse, and also `operation`: await `GET /api/v1/operations/{operationId}` for `succeeded` or `failed` with the error. A stage whose action is `none` answers `{ status: \"okay\" }` and does nothing. A device group or device takes one deploy at a time: another to it while one is pending is 409 `deploy_in_progress` naming the operation under way. A deploy whose platform process stopped before it finished is failed a minute later (`deploy_interrupted`, and `application.pipeline.stage-deploy-failed` in the audit log), not left pending. Audit event `application.pipeline.stage-deployed`.",
      },
    })
    .input(DeployStageInput)
    .output(DeployStarted)
    .mutation(async ({ ctx, input }) => {
      const checked = await plan(ctx, input);
      if (checked.none) return { status: "okay" as const };
      const deploy = checked.plan;
      const subject: DeploySubject = {
        pipeline: { id: deploy.pipeline.id, name: deploy.pipeline.name },
        sourceStage: { id: deploy.source.id, name: deploy.source.name },
        targetStage: { id: deploy.target.id, name: deploy.target.name },
        ...(deploy.snapshot && {
          snapshot: { id: deploy.snapshot.id, name: deploy.snapshot.name },
        }),
      };
      // A device group or device takes one deploy at a time (an instance's run one after the
      // other, through its action claim): a second while one is pending would race it.
      const target = deploy.targetGroup
        ? `group:${deploy.targetGroup.id}`
        : deploy.targetDevice
          ? `device:${deploy.targetDevice.id}`
          : undefined;
      const operation = await insertOperation(ctx.db, {
        teamId: deploy.pipeline.team_id,
        kind: "pipeline.deploy",
        subject: subject as unknown as Record<string, unknown>,
        userId: ctx.auth.userId,
        target,
      }).catch(async (error: unknown) => {
        if (!target || !isUniqueViolation(error)) throw error;
        const under = await pendingOperationFor(ctx.db, target);
        throw deployError(
          409,
          "deploy_in_progress",
          `Another deploy to this ${deploy.targetGroup ? "device group" : "device"} is under way${under ? ` (operation ${under.id})` : ""}: wait for it to finish, then deploy again`,
        );
      });
      const runner = ctx.deploys;
      const work = async () => {
        try {
          await run(ctx, operation.id, deploy);
          await finishOperation(ctx.db, operation.id, { status: "succeeded" });
        } catch (error) {
          const known = error instanceof ApiError;
          if (!known) ctx.log.error({ err: error, operationId: operation.id }, "a deploy failed");
          await finishOperation(ctx.db, operation.id, {
            status: "failed",
            code: known ? error.apiCode : "deploy_failed",
            message: known ? error.message : "The deploy failed",
          }).catch((failure: unknown) =>
            ctx.log.error(
              { err: failure, operationId: operation.id },
              "a deploy's outcome was not saved",
            ),
          );
        }
      };
      if (runner) runner.run(operation.id, work);
      else void work();
      return { status: "importing" as const, operation: operationView(operation) };
    }),

  operation: procedure
    .meta({
      permission: "operation:read",
      openapi: {
        method: "GET",
        path: "/api/v1/operations/{operationId}",
        tags: [TAG],
        summary: "What a deploy did: pending, succeeded or failed (viewers and up)",
        description:
          'Flowplane\'s (FlowFuse answers a deploy with `{ status: "importing" }` and nothing to await). `status` is `pending` while the deploy runs, then `succeeded`, or `failed` with `error` (`code`, `error`). Poll it; `flowplane pipelines deploy --wait` does.',
      },
    })
    .input(OperationIdInput)
    .output(Operation)
    .query(async ({ ctx, input }) => {
      const row = await findOperation(ctx.db, input.operationId);
      if (!row) throw notFound();
      return operationView(row);
    }),
};

declare module "../core/trpc" {
  interface Context {
    /** Runs deploys in the background, and waits for them when the server closes. */
    deploys?: Deploys;
  }
}
