// A rollout's plan: the snapshot checked to be its devices' application's, the devices of the
// target (a group's members, or devices named one by one) that do not run it already, and which
// wave each is in. What cannot
// be met is refused (400, naming the field) before anything is created; a device another rollout
// under way holds is 409.
import type { CreateRolloutInput } from "@flowplane/contract";
import {
  activeRolloutOfGroup,
  type Db,
  type DeviceDetail,
  devicesInActiveRollouts,
  findDeviceGroup,
  findSnapshotSummary,
  groupMemberIds,
  listDevicesByIds,
  lockApplication,
  type NewRolloutDevice,
  type RolloutWaveSpecJson,
} from "@flowplane/db";
import type { z } from "zod";
import { ApiError } from "../core/errors";

type Input = z.infer<typeof CreateRolloutInput>;

const invalid = (path: string, code: string, message: string) =>
  new ApiError(400, code, message, [{ path, message }]);

export interface Plan {
  applicationId: string;
  snapshot: { id: string; name: string };
  deviceGroup: { id: string; name: string } | null;
  /** By wave, each in the order it is deployed. */
  waves: DeviceDetail[][];
}

/**
 * How many devices each wave takes of `total`: a count, or a share rounded up; the last takes the
 * rest. A first wave larger than the target, a wave asking more than is left, or a wave left with
 * no device is refused (400 `invalid_waves`, naming the wave).
 */
export function waveSizes(waves: readonly RolloutWaveSpecJson[], total: number): number[] {
  const sizes: number[] = [];
  let left = total;
  waves.forEach((wave, index) => {
    const path = `waves.${index}`;
    const asked = "count" in wave ? wave.count : Math.ceil((wave.percent * total) / 100);
    if (index === 0 && asked > total) {
      throw invalid(
        path,
        "invalid_waves",
        `The first wave asks for ${asked} devices; the target has ${total}`,
      );
    }
    const last = index === waves.length - 1;
    if (!last && asked > left) {
      throw invalid(
        path,
        "invalid_waves",
        `Wave ${index + 1} asks for ${asked} devices; ${left} are left after the waves before it`,
      );
    }
    const size = last ? left : asked;
    if (size < 1) {
      throw invalid(
        path,
        "invalid_waves",
        `Wave ${index + 1} gets no device: the waves before it take them all`,
      );
    }
    sizes.push(size);
    left -= size;
  });
  return sizes;
}

/** The devices of the target, by name: a group's members, or those named (checked one by one). */
async function targetDevices(db: Db, input: Input, applicationId: string) {
  if ((input.deviceGroupId === undefined) === (input.devices === undefined)) {
    throw invalid(
      "deviceGroupId",
      "invalid_request",
      "Name the target: `deviceGroupId` or `devices`, one of them",
    );
  }
  if (input.deviceGroupId !== undefined) {
    const group = await findDeviceGroup(db, applicationId, input.deviceGroupId);
    if (!group) {
      throw invalid(
        "deviceGroupId",
        "invalid_device_group",
        "No such group in the snapshot's application",
      );
    }
    if (await activeRolloutOfGroup(db, group.id)) {
      throw new ApiError(409, "rollout_in_progress", "A rollout to this group is under way");
    }
    const devices = await listDevicesByIds(db, await groupMemberIds(db, group.id));
    return { group: { id: group.id, name: group.name }, devices };
  }
  const ids = input.devices!;
  const found = new Map((await listDevicesByIds(db, ids)).map((device) => [device.id, device]));
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    const path = `devices.${index}`;
    const device = found.get(id);
    if (seen.has(id)) throw invalid(path, "invalid_input", "This device is named twice");
    seen.add(id);
    if (!device || device.application_id !== applicationId) {
      throw invalid(path, "invalid_input", "Not a device of the snapshot's application");
    }
    if (device.group_id !== null && device.group_target_snapshot_id !== null) {
      throw invalid(
        path,
        "invalid_input",
        `It runs its group's target ("${device.group_name}"): roll out to the group instead`,
      );
    }
  });
  return { group: null, devices: [...found.values()] };
}

/** The plan, or the reason it cannot be made (nothing is written either way). */
export async function planRollout(db: Db, input: Input): Promise<Plan> {
  const snapshot = await findSnapshotSummary(db, input.snapshotId);
  if (!snapshot || snapshot.application_id === null) {
    throw invalid(
      "snapshotId",
      "invalid_snapshot",
      "Not a snapshot of an application's device or of the application",
    );
  }
  const applicationId = snapshot.application_id;
  // One at a time per application: two rollouts cannot take the same devices.
  await lockApplication(db, applicationId);
  const { group, devices: all } = await targetDevices(db, input, applicationId);
  const field = input.deviceGroupId !== undefined ? "deviceGroupId" : "devices";
  if (all.length === 0) throw invalid(field, "invalid_input", "The target has no device");
  // A device that runs the snapshot already has nothing to deploy (its agent would not load it
  // again, nor the gate's health tab with it): it is left out.
  const devices = all.filter((device) => device.active_snapshot_id !== snapshot.id);
  if (devices.length === 0) {
    throw invalid(field, "invalid_input", "Every device of the target runs this snapshot already");
  }
  const busy = await devicesInActiveRollouts(
    db,
    devices.map((device) => device.id),
  );
  if (busy.length > 0) {
    const names = busy.map((row) => devices.find((d) => d.id === row.device_id)?.name).join(", ");
    throw new ApiError(
      409,
      "rollout_in_progress",
      `Another rollout under way holds ${names}: wait for it to end, or abort it`,
    );
  }
  const sizes = waveSizes(input.waves, devices.length);
  const waves: DeviceDetail[][] = [];
  let next = 0;
  for (const size of sizes) {
    waves.push(devices.slice(next, next + size));
    next += size;
  }
  return {
    applicationId,
    snapshot: { id: snapshot.id, name: snapshot.name },
    deviceGroup: group,
    waves,
  };
}

/** What a device runs now, by id and name (null: nothing the platform knows). */
export function runsOf(device: DeviceDetail) {
  return device.active_snapshot_id !== null && device.active_name !== null
    ? { id: device.active_snapshot_id, name: device.active_name }
    : null;
}

/** The plan's devices as the rollout keeps them. */
export function plannedDevices(plan: Plan): NewRolloutDevice[] {
  return plan.waves.flatMap((devices, wave) =>
    devices.map((device) => ({
      deviceId: device.id,
      wave,
      runs: runsOf(device),
      previous:
        device.target_id !== null && device.target_name !== null
          ? { id: device.target_id, name: device.target_name }
          : null,
    })),
  );
}
