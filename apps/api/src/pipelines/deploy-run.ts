// Running a planned deploy, in the background: the source snapshot (taken now, or the one the plan
// named) is copied to the target instance as a snapshot of its own and applied as one action on
// it, with FlowFuse's copy rules (`pipelineState`); a device group or device target gets it as its
// target snapshot.
import {
  type Db,
  type EnvVar,
  findSnapshot,
  noteOperation,
  recordAudit,
  updateDevice,
  updateDeviceGroup,
  setProjectDeviceTarget,
} from "@flowplane/db";
import { actorOf, type Context } from "../core/trpc";
import {
  contentOf,
  contentOfInstance,
  deployedState,
  type InstanceState,
  writeOntoInstance,
  type SnapshotContent,
  recordInstanceDeviceTarget,
  storeInstanceSnapshot,
} from "../snapshots/index";
import { deployError, type Plan } from "./deploy-plan";

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

export async function run(ctx: Context, operationId: string, deploy: Plan): Promise<void> {
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
    if (target.deploy_to_devices) await recordInstanceDeviceTarget(ctx, trx, targetInstance, copy);
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
