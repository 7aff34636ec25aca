// What the platform tells its clients about itself (GET /settings).
import { z } from "zod";

export const InstanceIsolation = z
  .object({
    mode: z
      .enum(["sandbox", "none"])
      .describe(
        "`sandbox`: each instance sees only its own files and processes; `none`: instances run as ordinary processes of the platform's user and can read everything it can",
      ),
    user: z
      .enum(["per-instance", "platform"])
      .describe("Whether each instance runs under a user id of its own, or the platform's"),
    required: z
      .boolean()
      .describe("INSTANCE_ISOLATION=required: an instance without its sandbox does not start"),
    network: z
      .enum(["own", "host"])
      .describe(
        "`own`: each instance has a network namespace of its own (the outside world through NAT; not the host's loopback, the platform's port or another instance); `host`: instances share the host's network",
      ),
    reason: z
      .string()
      .optional()
      .describe(
        "Why instances have no sandbox, share the platform's user id, or share the host's network",
      ),
  })
  .meta({ id: "InstanceIsolation" });
export type InstanceIsolation = z.infer<typeof InstanceIsolation>;

export const Settings = z
  .object({
    version: z.string().describe("The platform's version"),
    base_url: z.string().describe("The platform's public URL"),
    "team:create": z.boolean().describe("Whether the caller may create teams"),
    "team:broker:host": z
      .string()
      .optional()
      .describe("The team broker's host name (absent when the platform runs none)"),
    "team:broker:url": z
      .string()
      .optional()
      .describe("Flowplane's: the team broker's URL, e.g. `mqtt://127.0.0.1:1883`"),
    "platform:instances:isolation": InstanceIsolation.optional().describe(
      "Flowplane's, for administrators: how hosted instances are kept from the machine and each other (absent when the platform runs none)",
    ),
  })
  .catchall(z.unknown())
  .meta({ id: "Settings" });
export type Settings = z.infer<typeof Settings>;

/**
 * What administrators change (PUT /settings): the FlowFuse settings Flowplane has. Any other key
 * is 400.
 */
export const UpdateSettingsInput = z
  .strictObject({
    "team:create": z
      .boolean()
      .describe("Whether users who are not administrators may create teams (default true)")
      .optional(),
  })
  .meta({ id: "UpdateSettingsInput" });
export type UpdateSettingsInput = z.infer<typeof UpdateSettingsInput>;

const ByValue = z.record(z.string(), z.number().int());

export const PlatformStats = z
  .object({
    userCount: z.number().int(),
    adminCount: z.number().int(),
    inviteCount: z.number().int().describe("Pending invitations"),
    teamCount: z.number().int(),
    teamsByType: ByValue.describe("Teams by their type's name"),
    instanceCount: z.number().int(),
    instancesByState: ByValue.describe(
      "Hosted instances by their state (`running`, `stopped`, `suspended`)",
    ),
    deviceCount: z.number().int(),
    devicesByMode: ByValue.describe("Devices by mode (`autonomous`, `developer`)"),
    devicesByLastSeen: z
      .object({
        never: z.number().int(),
        day: z.number().int().describe("Seen in the last 24 hours"),
        week: z.number().int().describe("Last seen 1 to 7 days ago"),
        month: z.number().int().describe("Last seen 7 to 28 days ago"),
        older: z.number().int(),
      })
      .describe("Devices by when their agent last called"),
    mqttClientCount: z.number().int().describe("The team brokers' clients"),
  })
  .meta({ id: "PlatformStats" });
export type PlatformStats = z.infer<typeof PlatformStats>;
