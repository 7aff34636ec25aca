// Applications: an application groups a team's hosted instances.
import { z } from "zod";
import { Id, Links, Name, Text, Timestamp } from "./common";
import { TeamSummary } from "./teams/teams";

const Description = Text.max(1024).nullable();

export const ApplicationSummary = z
  .object({ id: Id, name: z.string(), description: z.string().nullable(), links: Links })
  .meta({ id: "ApplicationSummary" });
export type ApplicationSummary = z.infer<typeof ApplicationSummary>;

export const Application = ApplicationSummary.extend({
  createdAt: Timestamp,
  updatedAt: Timestamp,
  team: TeamSummary,
}).meta({ id: "Application" });
export type Application = z.infer<typeof Application>;

export const ApplicationIdInput = z.strictObject({ applicationId: Id });

export const CreateApplicationInput = z.strictObject({
  name: Name,
  teamId: Id.describe("The team the application belongs to (owners)"),
  description: Description.optional(),
});

export const UpdateApplicationInput = z.strictObject({
  applicationId: Id,
  name: Name.optional(),
  description: Description.optional(),
});

// ---- The team's instance counts (FlowFuse's /teams/{teamId}/instance-counts) ----

/** The states FlowFuse's counts take as filters (`""`: a device that never connected). */
export const INSTANCE_COUNT_STATES = [
  "starting",
  "stopping",
  "restarting",
  "suspending",
  "rollback",
  "importing",
  "error",
  "crashed",
  "stopped",
  "suspended",
  "warning",
  "connected",
  "info",
  "success",
  "pushing",
  "pulling",
  "loading",
  "installing",
  "safe",
  "protected",
  "running",
  "",
] as const;

const StateName = Text.max(32);

export const InstanceCountsInput = z.strictObject({
  teamId: Id,
  instanceType: Text.max(16).describe(
    "`hosted` (the team's instances) or `remote` (its devices); anything else is 400 `invalid_instance_type`",
  ),
  state: z
    .union([StateName, z.array(StateName).max(INSTANCE_COUNT_STATES.length)])
    .describe(
      "Only these states (repeat the parameter for several); one FlowFuse does not know is 400 `invalid_state`",
    )
    .optional(),
  applicationId: Id.describe("Only the instances or devices of this application").optional(),
});
export type InstanceCountsInput = z.infer<typeof InstanceCountsInput>;

export const InstanceCounts = z
  .record(z.string(), z.number().int())
  .describe("How many are in each state; `unknown` counts devices that never connected")
  .meta({ id: "InstanceCounts" });
export type InstanceCounts = z.infer<typeof InstanceCounts>;
