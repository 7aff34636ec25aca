// Remote devices (FlowFuse's "remote instances"): a Node-RED on someone's hardware run by the
// FlowFuse device agent, which asks the platform what to run. A device belongs to a team, and
// optionally to one of its applications or hosted instances; provisioning tokens let devices
// register themselves.
import { z } from "zod";
import { Id, Links, ListMeta, Name, Text, Timestamp } from "./common";
import { ApplicationSummary } from "./applications";
import { EnvVar, EnvVars } from "./instances";
import { TeamSummary } from "./teams/teams";
import { AuditLogInput } from "./audit-log";

/** A device unseen this long is offline (FlowFuse: 30 minutes). */
export const DEVICE_ONLINE_MS = 30 * 60_000;

export const DEVICE_LIST_MAX = 100;

export const DeviceOwnerType = z
  .literal(["instance", "application", null])
  .describe("`instance`, `application`, or null when unassigned");

export const DeviceOnlineStatus = z
  .enum(["online", "offline", "not-seen"])
  .describe("`not-seen` never checked in; `online` checked in within the last 30 minutes");

export const SnapshotRef = z.object({
  id: Id,
  name: z.string(),
  description: z.string(),
  createdAt: Timestamp,
});

export const DeviceSummary = z
  .object({
    id: Id,
    name: z.string(),
    type: z.string(),
    ownerType: DeviceOwnerType,
    lastSeenAt: Timestamp.nullable(),
    lastSeenMs: z.number().int().nullable().describe("Milliseconds since the last check-in"),
    status: z.string().describe("The state the agent last reported (`offline` when none)"),
    onlineStatus: DeviceOnlineStatus,
    mode: z.enum(["autonomous", "developer"]),
    isDeploying: z
      .boolean()
      .describe("A target snapshot is set and the device does not report running it"),
    links: Links,
  })
  .meta({ id: "DeviceSummary" });
export type DeviceSummary = z.infer<typeof DeviceSummary>;

export const Device = DeviceSummary.extend({
  createdAt: Timestamp,
  updatedAt: Timestamp,
  agentVersion: z.string().nullable(),
  nodeRedVersion: z.string().nullable(),
  nodejsVersion: z.string().nullable(),
  activeSnapshot: SnapshotRef.nullable(),
  targetSnapshot: SnapshotRef.nullable().describe(
    "What the device should run: its device group's target when the group has one, else its own",
  ),
  team: TeamSummary,
  // Not the ApplicationSummary component: a nullable reference is not valid OpenAPI 3.0.
  application: z
    .object(ApplicationSummary.shape)
    .nullable()
    .describe("The application it is assigned to"),
  instance: z
    .object({ id: Id, name: z.string(), links: Links })
    .nullable()
    .describe("The hosted instance it is assigned to"),
  deviceGroup: z
    .object({ id: Id, name: z.string(), description: z.string() })
    .nullable()
    .describe("The device group it belongs to"),
}).meta({ id: "Device" });
export type Device = z.infer<typeof Device>;

/** How long a device's one-time code works (FlowFuse: 24 hours). */
export const DEVICE_OTC_LIFETIME_MS = 24 * 60 * 60_000;

export const DeviceCredentials = z
  .object({
    token: z.string().describe("The device's token (`fpd_…`): shown once, never again"),
    credentialSecret: z
      .string()
      .describe("The key Node-RED on the device decrypts its credentials with: shown once"),
    otc: z
      .string()
      .optional()
      .describe(
        "A one-time code (four words, e.g. `ocean-pistol-brave-tunnel`) to set the device up with instead of writing its `device.yml`: `flowfuse-device-agent --otc <code> --ff-url <platform URL>`. Works once, for 24 hours; shown once. A new device made by an owner and new credentials carry one; a provisioning token's device and a setup's reply do not",
      ),
    broker: z
      .object({
        url: z.string().describe("The broker's URL: `brokerURL` in `device.yml`"),
        username: z
          .string()
          .describe("`device:<teamId>:<deviceId>`: `brokerUsername`, and the MQTT client id"),
        password: z.string().describe("`brokerPassword`: shown once"),
      })
      .optional()
      .describe(
        "The platform's MQTT channel, when it has a broker: the agent connects with these, receives changes at once and reports its state as it changes (it then stops polling over HTTP). Absent: the agent polls over HTTP",
      ),
  })
  .meta({ id: "DeviceCredentials" });

export const CreatedDevice = Device.extend({
  credentials: DeviceCredentials,
  meta: z.object({ ffVersion: z.string() }),
}).meta({ id: "CreatedDevice" });

/** Free text as FlowFuse's, bounded. */
const DeviceType = Text.max(128);

/** Fields a setup (`setup: true`, the agent's one-time code) must not send. */
const CREATE_ONLY = ["name", "type", "team", "application", "instance"] as const;

/**
 * Two requests in one body, as FlowFuse's: creating a device (`name` and `team`), or the agent's
 * one-time-code setup (`setup: true`, with only `agentHost` beside it).
 */
export const CreateDeviceInput = z
  .strictObject({
    name: Name.optional().describe("Required to create a device (not in a setup)"),
    type: DeviceType.optional().describe("Free text (e.g. the hardware); default empty"),
    team: Id.optional().describe(
      "Required to create a device: the team it belongs to (owners; a provisioning token: its own team)",
    ),
    application: Id.optional().describe("An application of the team to assign the device to"),
    instance: Id.optional().describe("A hosted instance of the team to assign the device to"),
    setup: z
      .literal(true)
      .optional()
      .describe(
        "The device agent's one-time-code setup (`--otc`): the bearer is the base64 of the device's one-time code, and the body has no other field than `agentHost`",
      ),
    agentHost: Text.max(256)
      .optional()
      .describe("Setup: the device's host name or address, kept in its audit log"),
  })
  .superRefine((input, ctx) => {
    if (input.setup) {
      for (const field of CREATE_ONLY) {
        if (input[field] !== undefined) {
          ctx.addIssue({ code: "custom", path: [field], message: "Not allowed in a setup" });
        }
      }
      return;
    }
    for (const field of ["name", "team"] as const) {
      if (input[field] === undefined) {
        ctx.addIssue({ code: "custom", path: [field], message: "Required" });
      }
    }
    if (input.agentHost !== undefined) {
      ctx.addIssue({ code: "custom", path: ["agentHost"], message: "Only in a setup" });
    }
  });
export type CreateDeviceInput = z.infer<typeof CreateDeviceInput>;

export const DeviceIdInput = z.strictObject({ deviceId: Id });

export const UpdateDeviceInput = z.strictObject({
  deviceId: Id,
  name: Name.optional().describe("Owners"),
  type: DeviceType.optional().describe("Owners"),
  application: Id.nullable()
    .optional()
    .describe("Owners: assign to this application of the team; null: unassign"),
  instance: Id.nullable()
    .optional()
    .describe("Owners: assign to this hosted instance of the team; null: unassign"),
  targetSnapshot: Id.nullable()
    .optional()
    .describe(
      "Members: the snapshot the device should run (of its application or instance); null: none",
    ),
});
export type UpdateDeviceInput = z.infer<typeof UpdateDeviceInput>;

export const DEVICE_SORTS = ["name", "type", "lastSeenAt", "state", "createdAt"] as const;

const DeviceListQuery = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DEVICE_LIST_MAX)
    .default(DEVICE_LIST_MAX)
    .describe(`How many devices (1–${DEVICE_LIST_MAX}, default ${DEVICE_LIST_MAX})`),
  cursor: Id.optional().describe("The `meta.next_cursor` of the previous page"),
  query: Text.min(1)
    .max(128)
    .optional()
    .describe("Only devices whose name or type contains this text (any case)"),
  sort: z
    .enum(DEVICE_SORTS)
    .optional()
    .describe("Order by this field (default `name`); ties in id order"),
  dir: z.enum(["asc", "desc"]).optional().describe("Ascending (default) or descending"),
  order: z.enum(["asc", "desc"]).optional().describe("FlowFuse's older name for `dir`"),
};

export const TeamDevicesInput = z.strictObject({ teamId: Id, ...DeviceListQuery });
export const ApplicationDevicesInput = z.strictObject({ applicationId: Id, ...DeviceListQuery });
export const InstanceDevicesInput = z.strictObject({ instanceId: Id, ...DeviceListQuery });
/** Every device of the platform (administrators). */
export const PlatformDevicesInput = z.strictObject({ ...DeviceListQuery });
export type DeviceListQuery = Omit<z.infer<typeof TeamDevicesInput>, "teamId">;

export const DeviceList = z
  .object({ meta: ListMeta, count: z.number().int(), devices: z.array(Device) })
  .meta({ id: "DeviceList" });

/** How many devices one bulk request names at most. */
export const DEVICE_BULK_MAX = 500;

const BulkDeviceIds = z
  .array(Id)
  .min(1)
  .max(DEVICE_BULK_MAX)
  .describe(`The devices' ids (1–${DEVICE_BULK_MAX}), every one of the team's`);

export const BulkDeleteDevicesInput = z.strictObject({ teamId: Id, devices: BulkDeviceIds });

export const BulkMoveDevicesInput = z.strictObject({
  teamId: Id,
  devices: BulkDeviceIds,
  application: Id.nullable()
    .optional()
    .describe("Assign them to this application of the team; null (with `instance` null): unassign"),
  instance: Id.nullable()
    .optional()
    .describe("Assign them to this hosted instance of the team; null: unassign"),
  deviceGroup: Id.or(z.literal(""))
    .nullable()
    .optional()
    .describe(
      'Put them in this device group of the team (they must be its application\'s devices); `""` or null: take them out of their groups',
    ),
});
export type BulkMoveDevicesInput = z.infer<typeof BulkMoveDevicesInput>;

export const DeviceSettings = z
  .object({ env: z.array(EnvVar.required({ hidden: true })) })
  .meta({ id: "DeviceSettings" });

export const UpdateDeviceSettingsInput = z.strictObject({
  deviceId: Id,
  env: EnvVars.optional().describe(
    "The device's variables; `FF_*` are the platform's and are dropped; hidden values sent blank keep their value",
  ),
});

export const DeviceAuditLogInput = AuditLogInput.extend({ deviceId: Id });

// ---- Provisioning tokens ----

export const ProvisioningTokenName = Text.trim()
  .min(1, "Must not be blank")
  .max(80)
  .regex(/^[a-zA-Z0-9\-_ ]+$/, "Letters, digits, spaces, '-' and '_'");

export const ProvisioningTokenSummary = z
  .object({
    id: Id,
    name: z.string(),
    team: Id,
    application: Id.optional(),
    instance: Id.optional(),
    expiresAt: Timestamp.nullable(),
    createdAt: Timestamp,
  })
  .meta({ id: "ProvisioningTokenSummary" });

export const CreatedProvisioningToken = ProvisioningTokenSummary.extend({
  token: z.string().describe("The token's value (`fpv_…`): shown once, never again"),
}).meta({ id: "ProvisioningToken" });

export const ProvisioningTokenList = z
  .object({ meta: ListMeta, count: z.number().int(), tokens: z.array(ProvisioningTokenSummary) })
  .meta({ id: "ProvisioningTokenList" });

const ProvisioningExpiry = Text.check(z.iso.datetime({ offset: true })).describe(
  "When the token stops working (ISO-8601)",
);

export const CreateProvisioningTokenInput = z.strictObject({
  teamId: Id,
  name: ProvisioningTokenName,
  application: Id.optional().describe("Devices it creates are assigned to this application"),
  instance: Id.optional().describe("Devices it creates are assigned to this hosted instance"),
  expiresAt: ProvisioningExpiry.optional(),
});

export const ProvisioningTokenIdInput = z.strictObject({ teamId: Id, tokenId: Id });

export const UpdateProvisioningTokenInput = z.strictObject({
  teamId: Id,
  tokenId: Id,
  application: Id.nullable().optional().describe("null: no application"),
  instance: Id.nullable().optional().describe("null: no instance"),
  expiresAt: ProvisioningExpiry.nullable().optional().describe("null: never expires"),
});
