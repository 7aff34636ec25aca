// Device groups: named sets of an application's devices with a shared target snapshot and
// variables. Members run the group's target; a device leaving the group runs its own again.
import { z } from "zod";
import { ApplicationSummary } from "./applications";
import { Id, Links, ListMeta, Name, Text, Timestamp } from "./common";
import { Device, SnapshotRef } from "./devices";
import { EnvVar, EnvVars } from "./instances";

const Description = Text.max(1024);

export const DeviceGroupSummary = z
  .object({
    id: Id,
    name: z.string(),
    description: z.string(),
    deviceCount: z.number().int(),
    targetSnapshot: SnapshotRef.nullable().describe("What every member runs; null: their own"),
    application: z.object(ApplicationSummary.shape),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    links: Links,
  })
  .meta({ id: "DeviceGroupSummary" });

export const DeviceGroup = DeviceGroupSummary.extend({
  devices: z.array(Device),
  settings: z.object({ env: z.array(EnvVar.required({ hidden: true })) }),
}).meta({ id: "DeviceGroup" });

export const DeviceGroupList = z
  .object({ meta: ListMeta, count: z.number().int(), groups: z.array(DeviceGroupSummary) })
  .meta({ id: "DeviceGroupList" });

const DeviceGroupListQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(100).describe("1–100, default 100"),
  cursor: Id.optional().describe("The `meta.next_cursor` of the previous page"),
  query: Text.min(1).max(128).optional().describe("Only groups whose name contains this text"),
};

export const DeviceGroupsInput = z.strictObject({ applicationId: Id, ...DeviceGroupListQuery });
export const TeamDeviceGroupsInput = z.strictObject({ teamId: Id, ...DeviceGroupListQuery });

export const CreateDeviceGroupInput = z.strictObject({
  applicationId: Id,
  name: Name,
  description: Description.optional(),
});

export const DeviceGroupIdInput = z.strictObject({ applicationId: Id, groupId: Id });

export const UpdateDeviceGroupInput = z.strictObject({
  applicationId: Id,
  groupId: Id,
  name: Name.optional(),
  description: Description.optional(),
  targetSnapshotId: Id.nullable()
    .optional()
    .describe("A snapshot of the application every member runs; null: each its own again"),
});

const DeviceIds = z.array(Id).max(500);

export const DeviceGroupMembershipInput = z.strictObject({
  applicationId: Id,
  groupId: Id,
  add: DeviceIds.optional().describe("Devices of the application to put in the group"),
  remove: DeviceIds.optional().describe("Members to take out"),
  set: DeviceIds.optional().describe("The members, replacing all (not with `add` or `remove`)"),
});

export const UpdateDeviceGroupSettingsInput = z.strictObject({
  applicationId: Id,
  groupId: Id,
  env: EnvVars.optional().describe(
    "Variables every member gets (a member's own of the same name win); hidden values sent blank keep their value",
  ),
});

export const Empty = z.object({}).meta({ id: "Empty" });
