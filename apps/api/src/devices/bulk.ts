// Many devices at once (FlowFuse's /teams/{teamId}/devices/bulk): moved to an application or a
// hosted instance of the team, unassigned, put in a device group or taken out of theirs, or
// deleted. Every device named must be the team's, and so must the target: both are checked
// before anything is written, in the one transaction of the change, so a refused request
// changes nothing. Each device's move is the one PUT /devices/{deviceId} makes (moves.ts), each
// group's change the one its PATCH makes (groups.ts).
import {
  BulkDeleteDevicesInput,
  BulkMoveDevicesInput,
  DeviceList,
  Status,
} from "@flowplane/contract";
import {
  type Db,
  deleteTeamDevices,
  type DeviceDetail,
  type DeviceGroupDetail,
  listDevicesByIds,
  findTeamDeviceGroup,
  type TeamForUser,
} from "@flowplane/db";
import { ApiError } from "../core/errors";
import { actorOf, type Context, procedure, teamOf } from "../core/trpc";
import { recordDevicesDeleted } from "./events";
import { changeMembers } from "./groups";
import { invalidField, moveDevice, ownerOf } from "./moves";
import { TAG } from "./procedures";
import { deviceView } from "./views";

/** The devices named, every one of them the team's (else 400 naming `devices`). */
async function teamDevices(db: Db, teamId: string, ids: readonly string[]) {
  const wanted = [...new Set(ids)];
  const found = (await listDevicesByIds(db, wanted)).filter((device) => device.team_id === teamId);
  if (found.length !== wanted.length) {
    throw invalidField("devices", "invalid_input", "Every device must be one of the team's");
  }
  return found;
}

type TeamContext = Context & { team: TeamForUser | undefined };

/**
 * Puts the devices in `group` (null: in none), each first taken out of the group it is in: a
 * `members.changed` on every group whose members changed. Only the group's application's own
 * devices may join it (400 `invalid_device_group_membership`).
 */
async function regroup(
  ctx: TeamContext,
  trx: Db,
  devices: DeviceDetail[],
  group: DeviceGroupDetail | null,
) {
  if (group && devices.some((device) => device.application_id !== group.application_id)) {
    throw new ApiError(
      400,
      "invalid_device_group_membership",
      "Only devices of the group's application (not of an instance) may join it",
      [{ path: "devices", message: "Not a device of the group's application" }],
    );
  }
  const leaving = new Map<string, string[]>();
  for (const device of devices) {
    if (device.group_id === null || device.group_id === group?.id) continue;
    leaving.set(device.group_id, [...(leaving.get(device.group_id) ?? []), device.id]);
  }
  const teamId = teamOf(ctx).team.id;
  for (const [groupId, ids] of leaving) {
    const old = await findTeamDeviceGroup(trx, teamId, groupId);
    if (old) await changeMembers(ctx, trx, old, [], ids);
  }
  if (group) {
    const joining = devices.filter((device) => device.group_id !== group.id);
    await changeMembers(
      ctx,
      trx,
      group,
      joining.map((device) => device.id),
      [],
    );
  }
}

export const deviceBulkProcedures = {
  bulkMove: procedure
    .meta({
      permission: "team:device:bulk-edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/devices/bulk",
        tags: [TAG],
        summary: "Move many devices (owners)",
        description:
          "`devices` to an `application` or a hosted `instance` of the team (both null: unassigned; each loses its own target and its group, as with `PUT /devices/{deviceId}`), or into a `deviceGroup` of the team (`\"\"` or null: out of their groups). Give the one or the other: both, or neither, is 400 `invalid_input`. Every device must be the team's (else 400 `invalid_input` naming `devices`), the target too (400 `invalid_application`, `invalid_instance`, or `invalid_input` naming `deviceGroup`), and a group's new members its application's own devices (400 `invalid_device_group_membership`): all is checked first, and a refused request changes nothing. Answers the devices as they are now.",
      },
    })
    .input(BulkMoveDevicesInput)
    .output(DeviceList)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const { application, instance, deviceGroup } = input;
      const toOwner = application !== undefined || instance !== undefined;
      const ids = await ctx.db.transaction().execute(async (trx) => {
        const devices = await teamDevices(trx, teamId, input.devices);
        if (toOwner && deviceGroup !== undefined) {
          throw invalidField(
            "deviceGroup",
            "invalid_input",
            "Move devices to an application or instance, or to a device group: not both",
          );
        }
        if (!toOwner && deviceGroup === undefined) {
          throw new ApiError(
            400,
            "invalid_input",
            "No valid fields to update: give application, instance or deviceGroup",
          );
        }
        if (application && instance) {
          throw invalidField(
            "instance",
            "invalid_input",
            "Devices move to an application or an instance, not both",
          );
        }
        if (toOwner) {
          const owner = await ownerOf(trx, teamId, { application, instance });
          const actor = actorOf(ctx);
          for (const device of devices) await moveDevice(trx, actor, device, owner);
        } else {
          const group = deviceGroup ? await findTeamDeviceGroup(trx, teamId, deviceGroup) : null;
          if (group === undefined) {
            throw invalidField("deviceGroup", "invalid_input", "No such device group in the team");
          }
          await regroup(ctx, trx, devices, group);
        }
        return devices.map((device) => device.id);
      });
      const now = Date.now();
      const devices = (await listDevicesByIds(ctx.db, ids)).map((device) =>
        deviceView(device, ctx.baseUrl, now),
      );
      return { meta: {}, count: devices.length, devices };
    }),

  bulkDelete: procedure
    .meta({
      permission: "team:device:bulk-delete",
      bodyOnDelete: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/devices/bulk",
        tags: [TAG],
        summary: "Delete many devices (owners)",
        description:
          "The body's `devices`, every one the team's (else 400 `invalid_input` naming `devices`, and none is deleted). Their tokens stop working at once, as with `DELETE /devices/{deviceId}`. Logged once, `team.device.bulk-deleted`.",
      },
    })
    .input(BulkDeleteDevicesInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await ctx.db.transaction().execute(async (trx) => {
        const devices = await teamDevices(trx, teamId, input.devices);
        const deleted = await deleteTeamDevices(
          trx,
          teamId,
          devices.map((device) => device.id),
        );
        await recordDevicesDeleted(trx, actorOf(ctx), teamId, deleted);
      });
      return { status: "okay" as const };
    }),
};
