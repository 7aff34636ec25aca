// Moving devices: to an application or a hosted instance of their team, or out of both. One
// device's change (PUT /devices/{deviceId}) and a bulk move (PUT /teams/{teamId}/devices/bulk)
// both go through here, in the caller's transaction, with the audit events FlowFuse writes.
import {
  type AuditEntry,
  type Db,
  type DeviceDetail,
  findApplication,
  findProject,
  updateDevice,
  leaveActiveRollouts,
} from "@flowplane/db";
import { ApiError } from "../core/errors";
import { recordDeviceMoved } from "./events";
import { refreshSettingsHashes } from "./settings";

/** A body field naming something the caller's team does not have: 400 naming the field. */
export const invalidField = (field: string, code: string, message: string) =>
  new ApiError(400, code, message, [{ path: field, message }]);

/** Where a device is assigned: an application, a hosted instance, or neither (both null). */
export interface DeviceOwner {
  applicationId: string | null;
  projectId: string | null;
  /** The application's or the instance's name (null: neither). */
  name: string | null;
}

/**
 * The application or instance a device is assigned to, checked to be the team's: exactly one of
 * them, or neither (400 naming the field otherwise).
 */
export async function ownerOf(
  db: Db,
  teamId: string,
  wanted: { application?: string | null; instance?: string | null },
): Promise<DeviceOwner> {
  if (wanted.application && wanted.instance) {
    throw invalidField(
      "instance",
      "invalid_request",
      "A device is assigned to an application or an instance, not both",
    );
  }
  if (wanted.application) {
    const application = await findApplication(db, wanted.application);
    if (!application || application.team_id !== teamId) {
      throw invalidField("application", "invalid_application", "No such application in the team");
    }
    return { applicationId: application.id, projectId: null, name: application.name };
  }
  if (wanted.instance) {
    const project = await findProject(db, wanted.instance);
    if (!project || project.team_id !== teamId) {
      throw invalidField("instance", "invalid_instance", "No such instance in the team");
    }
    // An instance's device belongs to the instance's application too, as in FlowFuse.
    return { applicationId: null, projectId: project.id, name: project.name };
  }
  return { applicationId: null, projectId: null, name: null };
}

/**
 * Assigns a device to `owner` (an application, an instance, or neither): its own target, its
 * group and a rollout under way that holds it no longer apply. Logged as FlowFuse logs it: `team.device.assigned`, the application's or
 * instance's `….device.assigned` and `device.assigned`; or, unassigned, `team.device.unassigned`
 * and the previous owner's `….device.unassigned`. False (nothing written) when it is there already.
 */
export async function moveDevice(
  trx: Db,
  actor: AuditEntry["actor"],
  device: DeviceDetail,
  owner: DeviceOwner,
): Promise<boolean> {
  if (owner.applicationId === device.application_id && owner.projectId === device.project_id) {
    return false;
  }
  await updateDevice(trx, device.id, {
    applicationId: owner.applicationId,
    projectId: owner.projectId,
    targetSnapshotId: null,
    groupId: null,
  });
  await leaveActiveRollouts(trx, device.id);
  if (device.group_id !== null) await refreshSettingsHashes(trx, [device.id]);
  const assigned = owner.applicationId !== null || owner.projectId !== null;
  const about = assigned
    ? owner
    : {
        applicationId: device.project_id ? null : device.application_id,
        projectId: device.project_id,
        name: device.project_id ? device.project_name : device.application_name,
      };
  await recordDeviceMoved(trx, actor, device, about, assigned ? "assigned" : "unassigned");
  return true;
}
