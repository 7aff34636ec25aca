// What the devices area writes in the audit log, as FlowFuse logs it: a device's events in its own
// log, the body naming the device first (`team.device.*`, `device.*`, and what its agent reports);
// an assignment in its application's or instance's log too; its device groups in their
// application's; the team's provisioning tokens and bulk deletes in the team's.
import { type Db, recordAudit, recordEvent, type TeamForUser } from "@flowplane/db";
import { type Actor, ownEntry, ownLog, teamLog } from "../core/audit";
import { actorOf, type Context, teamOf } from "../core/trpc";
import type { DEVICE_AUDIT_EVENTS } from "./live-schemas";
interface Named {
  id: string;
  name: string;
}

/** What a device is assigned to (moves.ts's DeviceOwner): an application, an instance, or neither. */
interface DeviceOwner {
  applicationId: string | null;
  projectId: string | null;
  name: string | null;
}

type DeviceNamed = Named & { team_id: string };

export type DeviceEvent =
  | `team.device.${"created" | "updated" | "deleted" | "assigned" | "unassigned"}`
  | "device.assigned"
  | "device.settings.updated"
  | "device.snapshot.target-set"
  | `${"team.device" | "device"}.${"developer-mode" | "remote-access"}.${"enabled" | "disabled"}`
  | `device.${"restarted" | "suspended" | "started"}`
  | `device.${"restart" | "suspend" | "start"}-failed`
  | (typeof DEVICE_AUDIT_EVENTS)[number];

/** An event in the device's log, with what else it says. */
export function recordDeviceEvent(
  trx: Db,
  event: DeviceEvent,
  actor: Actor,
  device: DeviceNamed,
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(trx, ownEntry(event, "device", device, actor, more));
}

/**
 * The agent reports its Node-RED crashed (a restart loop it gave up on) or in safe mode: a platform
 * event (`device.crashed`, no audit entry of its own: the report is one already).
 */
export function recordDeviceCrashed(
  trx: Db,
  device: DeviceNamed,
  state: "crashed" | "safe",
): Promise<void> {
  return recordEvent(trx, {
    type: "device.crashed",
    teamId: device.team_id,
    entity: { type: "device", id: device.id },
    data: { device: { id: device.id, name: device.name }, state },
  });
}

/** New credentials: logged twice, as FlowFuse does, in the team's log and in the device's own. */
export async function recordCredentialsGenerated(
  trx: Db,
  actor: Actor,
  device: DeviceNamed,
  more: Record<string, unknown> = {},
): Promise<void> {
  for (const event of ["team.device.credentials-generated", "device.credential.generated"]) {
    await recordAudit(trx, ownEntry(event, "device", device, actor, more));
  }
}

/** `{ application }` or `{ project }` of an audit body, by id and name. */
function ownerBody(owner: DeviceOwner) {
  if (owner.applicationId) return { application: { id: owner.applicationId, name: owner.name } };
  if (owner.projectId) return { project: { id: owner.projectId, name: owner.name } };
  return {};
}

/**
 * A device assigned to, or unassigned from, `about` (an application or an instance): in the
 * device's log (`team.device.*`), its owner's (`application.device.*` or `project.device.*`) and,
 * assigned, in the device's again (`device.assigned`).
 */
export async function recordDeviceMoved(
  trx: Db,
  actor: Actor,
  device: DeviceNamed,
  about: DeviceOwner,
  verb: "assigned" | "unassigned",
): Promise<void> {
  const more = ownerBody(about);
  await recordDeviceEvent(trx, `team.device.${verb}`, actor, device, more);
  const body = { device: { id: device.id, name: device.name }, ...more };
  await recordAudit(trx, {
    event: about.applicationId ? `application.device.${verb}` : `project.device.${verb}`,
    ...(about.applicationId
      ? ownLog("application", about.applicationId, device.team_id)
      : ownLog("project", about.projectId!, device.team_id)),
    actor,
    body,
  });
  if (verb === "assigned") await recordDeviceEvent(trx, "device.assigned", actor, device, more);
}

/** Devices deleted at once (`team.device.bulk-deleted`): how many, and which. */
export function recordDevicesDeleted(
  trx: Db,
  actor: Actor,
  teamId: string,
  devices: Named[],
): Promise<void> {
  const body = {
    info: { count: devices.length },
    devices: devices.map((device) => ({ id: device.id, name: device.name })),
  };
  return recordAudit(trx, { event: "team.device.bulk-deleted", ...teamLog(teamId), actor, body });
}

/** A provisioning token created, changed or deleted, by its id and name (never its value). */
export function recordProvisioningTokenEvent(
  trx: Db,
  verb: "created" | "updated" | "deleted",
  actor: Actor,
  teamId: string,
  token: Named,
): Promise<void> {
  const body = { token: { id: token.id, name: token.name } };
  const event = `team.device.provisioning.${verb}`;
  return recordAudit(trx, { event, ...teamLog(teamId), actor, body });
}

/** A device group's event, in its application's log (the request's team's). */
export function recordGroupEvent(
  trx: Db,
  ctx: Context & { team: TeamForUser | undefined },
  group: Named & { application_id: string },
  verb: "created" | "updated" | "deleted" | "members.changed" | "settings.updated",
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(trx, {
    event: `application.deviceGroup.${verb}`,
    ...ownLog("application", group.application_id, teamOf(ctx).team.id),
    actor: actorOf(ctx),
    body: { deviceGroup: { id: group.id, name: group.name }, ...more },
  });
}
