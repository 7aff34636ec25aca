// Device groups of an application (FlowFuse's applicationDeviceGroups): members (and up) read
// them, owners create, rename, delete them, change their members, target and variables. Members
// of a group run its target snapshot and get its variables under their own; a device taken out
// runs its own target again.
import {
  CreateDeviceGroupInput,
  DeviceGroup,
  DeviceGroupIdInput,
  DeviceGroupList,
  DeviceGroupMembershipInput,
  DeviceGroupsInput,
  DeviceGroupSummary,
  Empty,
  Status,
  TeamDeviceGroupsInput,
  UpdateDeviceGroupInput,
  UpdateDeviceGroupSettingsInput,
} from "@flowplane/contract";
import {
  activeRolloutOfGroup,
  type Db,
  lockApplication,
  deleteDeviceGroup,
  type DeviceGroupDetail,
  findDevice,
  findDeviceGroup,
  findSnapshotSummary,
  groupMemberIds,
  insertDeviceGroup,
  listDeviceGroups,
  listDevices,
  setDevicesGroup,
  type TeamForUser,
  updateDeviceGroup,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { type Context, procedure, router, teamOf } from "../core/trpc";
import { checkIfMatch, setETag, setETagOf } from "../core/writes";
import { recordGroupEvent } from "./events";
import { invalidField } from "./moves";
import { refreshSettingsHashes } from "./settings";
import { deviceView, envToStore, visibleDeviceEnv } from "./views";

const TAG = "Device groups";

/** A group as FlowFuse's `DeviceGroupSummary` (pipelines' device group stages show it too). */
export function groupSummary(group: DeviceGroupDetail, baseUrl: string) {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    deviceCount: group.device_count,
    targetSnapshot:
      group.target_snapshot_id !== null && group.target_created_at !== null
        ? {
            id: group.target_snapshot_id,
            name: group.target_name!,
            description: group.target_description!,
            createdAt: group.target_created_at.toISOString(),
          }
        : null,
    application: {
      id: group.application_id,
      name: group.application_name,
      description: group.application_description,
      links: { self: `${baseUrl}/api/v1/applications/${group.application_id}` },
    },
    createdAt: group.created_at.toISOString(),
    updatedAt: group.updated_at.toISOString(),
    links: {
      self: `${baseUrl}/api/v1/applications/${group.application_id}/device-groups/${group.id}`,
    },
  };
}

async function groupOf(db: Db, applicationId: string, groupId: string) {
  const group = await findDeviceGroup(db, applicationId, groupId);
  if (!group) throw notFound();
  return group;
}

/**
 * Puts devices in the group (out of any other) and takes others out of it, refreshing what they
 * are given: one `members.changed` on the group when anything changed.
 */
export async function changeMembers(
  ctx: Context & { team: TeamForUser | undefined },
  trx: Db,
  group: DeviceGroupDetail,
  add: readonly string[],
  remove: readonly string[],
) {
  await setDevicesGroup(trx, add, group.id);
  await setDevicesGroup(trx, remove, null);
  await refreshSettingsHashes(trx, [...add, ...remove]);
  if (add.length > 0 || remove.length > 0) {
    await recordGroupEvent(trx, ctx, group, "members.changed", { added: add, removed: remove });
  }
}

function groupListView(page: Awaited<ReturnType<typeof listDeviceGroups>>, baseUrl: string) {
  return {
    meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
    count: page.total,
    groups: page.rows.map((group) => groupSummary(group, baseUrl)),
  };
}

const LIST_DESCRIPTION =
  "By name, a page at a time (`meta.next_cursor`); `query` matches the name in any case.";

export const deviceGroupsRouter = router({
  ofTeam: procedure
    .meta({
      permission: "team:device-group:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/device-groups",
        tags: [TAG],
        summary: "Every device group of the team, each with its application (members and up)",
        description: LIST_DESCRIPTION,
      },
    })
    .input(TeamDeviceGroupsInput)
    .output(DeviceGroupList)
    .query(async ({ ctx, input }) =>
      groupListView(await listDeviceGroups(ctx.db, { teamId: input.teamId }, input), ctx.baseUrl),
    ),

  list: procedure
    .meta({
      permission: "application:device-group:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/device-groups",
        tags: [TAG],
        summary: "An application's device groups (members and up)",
        description: LIST_DESCRIPTION,
      },
    })
    .input(DeviceGroupsInput)
    .output(DeviceGroupList)
    .query(async ({ ctx, input }) =>
      groupListView(
        await listDeviceGroups(ctx.db, { applicationId: input.applicationId }, input),
        ctx.baseUrl,
      ),
    ),

  create: procedure
    .meta({
      create: "replay",
      permission: "application:device-group:create",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/api/v1/applications/{applicationId}/device-groups",
        tags: [TAG],
        summary: "Create a device group (owners)",
        description: "Empty, with no target: add the application's devices with PATCH.",
      },
    })
    .input(CreateDeviceGroupInput)
    .output(DeviceGroupSummary)
    .mutation(async ({ ctx, input }) => {
      const id = await ctx.db.transaction().execute(async (trx) => {
        const row = await insertDeviceGroup(trx, {
          teamId: teamOf(ctx).team.id,
          applicationId: input.applicationId,
          name: input.name,
          description: input.description ?? "",
        });
        await recordGroupEvent(trx, ctx, row, "created");
        return row.id;
      });
      return groupSummary(await groupOf(ctx.db, input.applicationId, id), ctx.baseUrl);
    }),

  byId: procedure
    .meta({
      permission: "application:device-group:read",
      etag: true,
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}",
        tags: [TAG],
        summary: "A device group with its members (members and up)",
        description: "`settings.env`: the group's variables, hidden values blank.",
      },
    })
    .input(DeviceGroupIdInput)
    .output(DeviceGroup)
    .query(async ({ ctx, input }) => {
      const group = await groupOf(ctx.db, input.applicationId, input.groupId);
      setETag(ctx, group.version);
      const members = await listDevices(ctx.db, { groupId: group.id }, { limit: 500 });
      const now = Date.now();
      return {
        ...groupSummary(group, ctx.baseUrl),
        devices: members.rows.map((device) => deviceView(device, ctx.baseUrl, now)),
        settings: { env: visibleDeviceEnv(group.settings.env) },
      };
    }),

  update: procedure
    .meta({
      permission: "application:device-group:update",
      errors: [409],
      etag: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}",
        tags: [TAG],
        summary: "Rename a device group or set its target snapshot (owners)",
        description:
          "`targetSnapshotId`: a snapshot of the application, which every member then runs at its next check-in (400 `invalid_snapshot` naming the field otherwise); null: each member runs its own target again. While a rollout to the group is under way its target is the rollout's: a change of target is 409 `rollout_in_progress`. Answers `{}`, as FlowFuse.",
      },
    })
    .input(UpdateDeviceGroupInput)
    .output(Empty)
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction().execute(async (trx) => {
        const group = await groupOf(trx, input.applicationId, input.groupId);
        await checkIfMatch(trx, ctx, "device_groups", group.id);
        if (input.targetSnapshotId !== undefined) await lockApplication(trx, group.application_id);
        if (input.targetSnapshotId !== undefined && (await activeRolloutOfGroup(trx, group.id))) {
          throw new ApiError(
            409,
            "rollout_in_progress",
            "A rollout to this group is under way: its target is the rollout's until it ends (abort it to change it now)",
          );
        }
        if (input.targetSnapshotId) {
          const snapshot = await findSnapshotSummary(trx, input.targetSnapshotId);
          if (!snapshot || snapshot.application_id !== group.application_id) {
            throw invalidField(
              "targetSnapshotId",
              "invalid_snapshot",
              "No such snapshot in the group's application",
            );
          }
        }
        await updateDeviceGroup(trx, group.id, input);
        await setETagOf(trx, ctx, "device_groups", group.id);
        await recordGroupEvent(trx, ctx, group, "updated", {
          ...(input.name !== undefined && { name: { old: group.name, new: input.name } }),
          ...(input.targetSnapshotId !== undefined && {
            targetSnapshot: { old: group.target_snapshot_id, new: input.targetSnapshotId },
          }),
        });
      });
      return {};
    }),

  membership: procedure
    .meta({
      permission: "application:device-group:membership:update",
      etag: true,
      openapi: {
        method: "PATCH",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}",
        tags: [TAG],
        summary: "Change a device group's members (owners)",
        description:
          "`add` and `remove` devices, or `set` the members. Only devices of the group's application (owned by it, not by an instance); anything else is 400 `invalid_input` naming the field. A device is in one group at most: added here, it leaves its other group. Members run the group's target; a device taken out runs its own target again. Answers `{}`, as FlowFuse.",
      },
    })
    .input(DeviceGroupMembershipInput)
    .output(Empty)
    .mutation(async ({ ctx, input }) => {
      if (input.set !== undefined && (input.add !== undefined || input.remove !== undefined)) {
        throw invalidField(
          "set",
          "invalid_input",
          "`set` replaces the members: not with add/remove",
        );
      }
      await ctx.db.transaction().execute(async (trx) => {
        const group = await groupOf(trx, input.applicationId, input.groupId);
        await checkIfMatch(trx, ctx, "device_groups", group.id);
        const members = await groupMemberIds(trx, group.id);
        const check = async (field: string, ids: readonly string[]) => {
          for (const id of ids) {
            const device = await findDevice(trx, id);
            if (!device || device.application_id !== group.application_id) {
              throw new ApiError(
                400,
                "invalid_input",
                `${field}: not a device of the application`,
                [{ path: field, message: "Not a device of the group's application" }],
              );
            }
          }
        };
        let add: string[];
        let remove: string[];
        if (input.set !== undefined) {
          await check("set", input.set);
          add = input.set.filter((id) => !members.includes(id));
          remove = members.filter((id) => !input.set!.includes(id));
        } else {
          await check("add", input.add ?? []);
          await check("remove", input.remove ?? []);
          add = (input.add ?? []).filter((id) => !members.includes(id));
          remove = (input.remove ?? []).filter((id) => members.includes(id));
        }
        await changeMembers(ctx, trx, group, add, remove);
        // The members are on the devices' rows: their trigger bumps the group's version.
        await setETagOf(trx, ctx, "device_groups", group.id);
      });
      return {};
    }),

  updateSettings: procedure
    .meta({
      permission: "application:device-group:update",
      openapi: {
        method: "PUT",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}/settings",
        tags: [TAG],
        summary: "Change a device group's variables (owners)",
        description:
          "`env` replaces the group's variables, which every member gets under its own (a member's variable of the same name wins). Hidden values sent blank keep their value; `FF_*` are dropped. Members pick them up at their next check-in.",
      },
    })
    .input(UpdateDeviceGroupSettingsInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const sent = input.env;
      await ctx.db.transaction().execute(async (trx) => {
        const group = await groupOf(trx, input.applicationId, input.groupId);
        if (sent === undefined) return;
        const env = envToStore(sent, group.settings.env ?? []);
        await updateDeviceGroup(trx, group.id, { env });
        await refreshSettingsHashes(trx, await groupMemberIds(trx, group.id));
        await recordGroupEvent(trx, ctx, group, "settings.updated", {
          env: { old: (group.settings.env ?? []).map((v) => v.name), new: env.map((v) => v.name) },
        });
      });
      return { status: "okay" as const };
    }),

  delete: procedure
    .meta({
      permission: "application:device-group:delete",
      etag: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/applications/{applicationId}/device-groups/{groupId}",
        tags: [TAG],
        summary: "Delete a device group (owners)",
        description:
          "Its devices stay, out of any group: each runs its own target again. Answers `{}`, as FlowFuse.",
      },
    })
    .input(DeviceGroupIdInput)
    .output(Empty)
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction().execute(async (trx) => {
        const group = await groupOf(trx, input.applicationId, input.groupId);
        await checkIfMatch(trx, ctx, "device_groups", group.id);
        const members = await groupMemberIds(trx, group.id);
        await deleteDeviceGroup(trx, group.id);
        await refreshSettingsHashes(trx, members);
        await recordGroupEvent(trx, ctx, group, "deleted");
      });
      return {};
    }),
});
