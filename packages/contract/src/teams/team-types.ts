// Team types: the kinds of team an administrator offers, each with the limits its teams live within.
import { z } from "zod";
import { Id, ListMeta, Name, PageInput, Text, Timestamp } from "../common";

/** A count a team may not exceed; null (or absent) is no limit. */
const Limit = z.strictObject({
  limit: z
    .number()
    .int()
    .min(0)
    .nullable()
    .optional()
    .describe("The most a team of this type may have; null or absent: no limit"),
});

const FeatureName = Text.min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.:-]+$/, "Letters, digits, '_', '.', ':' and '-'");

/**
 * Limits and features of the teams of a type. Strict: an unknown key is refused rather than
 * stored and silently ignored; free-form flags go in `features`.
 */
export const TeamTypeProperties = z
  .strictObject({
    users: Limit.optional().describe("Members per team (invitations count)"),
    instances: Limit.optional().describe("Hosted instances per team"),
    devices: Limit.optional().describe("Remote devices per team"),
    teamBroker: z
      .strictObject({ clients: Limit })
      .optional()
      .describe("Clients of the team's MQTT broker"),
    features: z
      .record(FeatureName, z.union([z.boolean(), z.number(), Text.max(256)]))
      .refine((features) => Object.keys(features).length <= 100, "At most 100 features")
      .optional()
      .describe("Feature flags and settings by name"),
  })
  .meta({ id: "TeamTypeProperties" });
export type TeamTypeProperties = z.infer<typeof TeamTypeProperties>;

/** A team type as a team shows it (FlowFuse's `Team.type`). */
export const TeamTypeSummary = z
  .object({
    id: Id,
    name: z.string(),
    active: z.boolean().describe("Whether new teams may choose it"),
    order: z.number().int().describe("Lists show types by ascending order"),
    description: z.string().nullable(),
    properties: TeamTypeProperties,
  })
  .meta({ id: "TeamTypeSummary" });
export type TeamTypeSummary = z.infer<typeof TeamTypeSummary>;

export const TeamType = TeamTypeSummary.extend({
  createdAt: Timestamp,
  updatedAt: Timestamp,
}).meta({ id: "TeamType" });
export type TeamType = z.infer<typeof TeamType>;

export const TeamTypeList = z
  .object({ meta: ListMeta, count: z.number().int(), types: z.array(TeamType) })
  .meta({ id: "TeamTypeList" });
export type TeamTypeList = z.infer<typeof TeamTypeList>;

export const TeamTypeIdInput = z.strictObject({ teamTypeId: Id });

export const ListTeamTypesInput = z.strictObject({
  ...PageInput,
  filter: z
    .enum(["active", "inactive", "all"])
    .default("active")
    .describe("Which types to list (default `active`)"),
});

const Order = z.number().int().min(0).max(1_000_000);
const Description = Text.max(1024).nullable();

export const CreateTeamTypeInput = z.strictObject({
  name: Name.describe("Unique without regard to case"),
  description: Description.optional(),
  active: z.boolean().optional().describe("Default true"),
  order: Order.optional().describe("Default 0"),
  properties: TeamTypeProperties.optional().describe("Default: no limits"),
});
export type CreateTeamTypeInput = z.infer<typeof CreateTeamTypeInput>;

export const UpdateTeamTypeInput = z.strictObject({
  teamTypeId: Id,
  name: Name.optional().describe("Unique without regard to case"),
  description: Description.optional().describe("null removes it"),
  active: z.boolean().optional(),
  order: Order.optional(),
  properties: TeamTypeProperties.optional().describe("Replaces the type's properties as a whole"),
});
export type UpdateTeamTypeInput = z.infer<typeof UpdateTeamTypeInput>;
