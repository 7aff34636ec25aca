// A stage's target (FlowFuse's stage kinds, §6.3 of the map): exactly one of a hosted instance, a
// device group or a device of the pipeline's application, and the actions each kind may have.
import type { StageAction } from "@flowplane/contract";
import {
  type Db,
  type PipelineStageRow,
  type PipelineWithApplication,
  stageWithTarget,
} from "@flowplane/db";
import { ApiError, invalidRequest } from "../core/errors";

/** Actions an instance (or device group) stage may have (FlowFuse's rules). */
const INSTANCE_ACTIONS: readonly StageAction[] = [
  "create_snapshot",
  "use_latest_snapshot",
  "prompt",
  "none",
];

type TargetField = "instanceId" | "deviceGroupId" | "deviceId";
const TARGET_FIELDS: readonly TargetField[] = ["instanceId", "deviceGroupId", "deviceId"];
export type StageKind = "instance" | "deviceGroup" | "device";

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
export interface Target {
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
export async function targetOf(
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

const KIND_NAMES: Record<StageKind, [TargetField, string]> = {
  instance: ["instanceId", "instance"],
  deviceGroup: ["deviceGroupId", "device group"],
  device: ["deviceId", "device"],
};

/**
 * Refuses a target another stage of the pipeline already has (400 `invalid_input` naming the
 * field): a pipeline's stages deploy from one to the next, so each of its instances, device groups
 * and devices is in one stage (FlowFuse's editor offers only those not in use). Call under the
 * pipeline's lock; `stageId` is the stage being changed (it may keep its own).
 */
export async function checkTargetFree(
  trx: Db,
  pipelineId: string,
  target: Target,
  stageId?: string,
): Promise<void> {
  const taken = await stageWithTarget(trx, pipelineId, target.values, stageId);
  if (!taken) return;
  const [field, noun] = KIND_NAMES[target.kind];
  throw new ApiError(
    400,
    "invalid_input",
    `The ${noun} is already in this pipeline, in stage ${taken.name}`,
    [{ path: field, message: `Already the target of stage ${taken.id}` }],
  );
}

/** The kind of a stored stage (by the target it had; an instance stage when it has none left). */
export function kindOfStage(stage: PipelineStageRow): StageKind {
  if (stage.device_group_id !== null) return "deviceGroup";
  if (stage.device_id !== null) return "device";
  return "instance";
}

export function checkAction(action: StageAction, kind: StageKind) {
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
