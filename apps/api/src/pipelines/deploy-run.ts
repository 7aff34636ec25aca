// Running a planned deploy, in the background: the source snapshot (taken now, or the one the plan
// named) is copied to the target instance as a snapshot of its own and applied as one action on
// it, with FlowFuse's copy rules (`pipelineState`); a device group or device target gets it as its
// target snapshot.
import {
  type Db,
  type EnvVar,
  findSnapshot,
  noteOperation,
  updateDevice,
  updateDeviceGroup,
  activeRolloutOfGroup,
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
import { recordStageDeployed, recordTargetSnapshotSet } from "./events";

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
  const actor = actorOf(ctx);
  if (!targetInstance) {
    // A device group or device: the snapshot becomes its target, which its devices then run.
    const { targetGroup, targetDevice } = deploy;
    await db.transaction().execute(async (trx) => {
      if (targetGroup) {
        // A rollout to the group decides its target until it ends.
        if (await activeRolloutOfGroup(trx, targetGroup.id)) {
          throw deployError(
            409,
            "rollout_in_progress",
            "A rollout to the target device group is under way: wait for it to end, or abort it",
          );
        }
        await updateDeviceGroup(trx, targetGroup.id, { targetSnapshotId: sent.id });
        await recordTargetSnapshotSet(trx, actor, pipeline, { deviceGroup: targetGroup }, sent);
      } else if (targetDevice) {
        if (!(await updateDevice(trx, targetDevice.id, { targetSnapshotId: sent.id }))) {
          throw deployError(409, "invalid_target_stage", "The target device is gone");
        }
        await recordTargetSnapshotSet(trx, actor, pipeline, { device: targetDevice }, sent);
      }
      await recordStageDeployed(trx, actor, deploy, sent);
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
    await recordStageDeployed(trx, actor, deploy, sent);
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
